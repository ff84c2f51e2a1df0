import Foundation
import TestSupport
import Testing
@testable import MLKit

/// The normalized word tokens of `text` with the default tokenizer.
private func words(_ text: String, _ tokenizer: Tokenizer = Tokenizer()) -> [String] {
    tokenizer.tokens(for: text)
}

@Suite("Word tokens in scripts with spaces", .onOwnThreads)
struct SpacedScriptTests {
    @Test("The documented example keeps contractions, abbreviations, e-mail, decimals and a ZWJ flag")
    func documentedExample() {
        #expect(words("Don't split U.S. e-mail 3.14 naïve café 🏳️‍🌈")
                == ["don't", "split", "u.s", "e-mail", "3.14", "naïve", "café", "🏳️‍🌈"])
    }

    @Test("English: punctuation and whitespace are not tokens")
    func english() {
        #expect(words("Hello, world!  (It's 9:30 — isn't it?)") == ["hello", "world", "it's", "9", "30", "isn't", "it"])
    }

    @Test("French: elisions with either apostrophe are one token, written with '")
    func french() {
        #expect(words("L'été à l’école, c'est « génial ».") == ["l'été", "à", "l'école", "c'est", "génial"])
    }

    @Test("German: umlauts and ß are letters; lowercasing keeps ß")
    func german() {
        #expect(words("Grüße aus KÖLN: Straße, Fußgänger-Zone") == ["grüße", "aus", "köln", "straße", "fußgänger-zone"])
    }

    @Test("Russian: Cyrillic words are lowercased, Ё included")
    func russian() {
        #expect(words("Привет, МИР! Ёлка стоит.") == ["привет", "мир", "ёлка", "стоит"])
    }

    @Test("Greek: capital sigma lowercases to σ, and Turkish İ to i with a dot above")
    func caseMappings() {
        #expect(words("ΣΊΣΥΦΟΣ İstanbul") == ["σίσυφοσ", "i\u{307}stanbul"])
    }

    @Test("Decomposed marks stay with their letter")
    func combiningMarks() {
        #expect(words("nai\u{308}ve cafe\u{301}") == ["nai\u{308}ve", "cafe\u{301}"])
    }

    @Test("Long words cross the eight-byte scanning boundary intact, joiners included")
    func longWords() {
        #expect(words("internationalization state-of-the-art abcdefg'hij 12345678.9012 abcdefgh")
                == ["internationalization", "state-of-the-art", "abcdefg'hij", "12345678.9012", "abcdefgh"])
        #expect(words("abcdefgé abcdefghé x") == ["abcdefgé", "abcdefghé", "x"])
    }

    @Test("Joiners at the edge of a word are separators")
    func edgeJoiners() {
        #expect(words("'quoted' -dash- end. ,comma, _under_") == ["quoted", "dash", "end", "comma", "under"])
    }

    @Test("Soft hyphens and bidi marks do not change a token's text")
    func ignorables() {
        #expect(words("co\u{00AD}operate word\u{200E}") == ["cooperate", "word"])
    }
}

@Suite("Numbers and URLs", .onOwnThreads)
struct NumberAndURLTests {
    @Test("Decimal and thousands separators stay inside numbers")
    func numbers() {
        #expect(words("3.14 1,000,000 v1.2 -7 50% 2nd") == ["3.14", "1,000,000", "v1.2", "7", "50", "2nd"])
    }

    @Test("Token kinds tell words from numbers")
    func kinds() {
        var kinds: [Token.Kind] = []
        Tokenizer().enumerateTokens(in: "abc 123 a1 北 👍") { kinds.append($0.kind) }
        #expect(kinds == [.word, .number, .word, .ideographic, .emoji])
    }

    @Test("URLs and e-mail addresses split at their punctuation; host names keep their dots")
    func urls() {
        #expect(words("See https://www.example.com/a-b?x=1#top or mail me@example.org")
                == ["see", "https", "www.example.com", "a-b", "x", "1", "top", "or", "mail", "me", "example.org"])
    }
}

@Suite("Scripts without spaces", .onOwnThreads)
struct UnspacedScriptTests {
    @Test("Chinese: each Han character is a token")
    func chinese() {
        #expect(words("我们今天在北京大学学习") == ["我", "们", "今", "天", "在", "北", "京", "大", "学", "学", "习"])
    }

    @Test("Japanese: each kanji, hiragana and katakana character is a token; punctuation is not")
    func japanese() {
        #expect(words("東京タワーへ行きました。") == ["東", "京", "タ", "ワ", "ー", "へ", "行", "き", "ま", "し", "た"])
    }

    @Test("Thai: each letter with its vowel and tone marks is a token")
    func thai() {
        #expect(words("สวัสดี ที่นี่") == ["ส", "วั", "ส", "ดี", "ที่", "นี่"])
    }

    @Test("Latin words and digits next to Han characters split at the script change")
    func mixed() {
        #expect(words("iPhone手机2024年") == ["iphone", "手", "机", "2024", "年"])
    }

    @Test("ICU segmentation finds dictionary words in Chinese, Japanese and Thai",
          .enabled(if: Tokenizer.isICUAvailable))
    func icuDictionaryWords() {
        let icu = Tokenizer(segmentation: .icu)
        #expect(words("我们今天在北京大学学习", icu) == ["我们", "今天", "在", "北京", "大学", "学习"])
        #expect(words("สวัสดีครับ", icu) == ["สวัสดี", "ครับ"])
        #expect(words("東京タワーへ行きました。", icu).first == "東京タワー")
    }

    @Test("ICU segmentation keeps emoji as tokens", .enabled(if: Tokenizer.isICUAvailable))
    func icuEmoji() {
        #expect(words("love 👍🏽 it 🇫🇷", Tokenizer(segmentation: .icu)) == ["love", "👍🏽", "it", "🇫🇷"])
    }
}

@Suite("Emoji", .onOwnThreads)
struct EmojiTests {
    @Test("Modifiers, ZWJ sequences, flags, keycaps and hearts are single tokens")
    func sequences() {
        #expect(words("👍🏽 👨‍👩‍👧 🇫🇷🇩🇪 1️⃣ ❤ ❤️ 😀😀") == ["👍🏽", "👨‍👩‍👧", "🇫🇷", "🇩🇪", "1️⃣", "❤", "❤️", "😀", "😀"])
    }

    @Test("Text symbols are emoji only with U+FE0F")
    func textPresentation() {
        #expect(words("© ©️ ™ ™️") == ["©️", "™️"])
    }

    @Test("An emoji stuck to a word is a token of its own")
    func attached() {
        #expect(words("great👍") == ["great", "👍"])
    }
}

@Suite("Sentences, paragraphs and documents", .onOwnThreads)
struct SegmentTests {
    @Test("Sentences end at terminators followed by space, not at abbreviations or decimals")
    func sentences() {
        let text = "Hello there. This is e.g. fine! Is it 3.14? Mr. Smith said \"Hi.\" Then left."
        #expect(Tokenizer(unit: .sentence).tokens(for: text)
                == ["Hello there.", "This is e.g. fine!", "Is it 3.14?", "Mr. Smith said \"Hi.\"", "Then left."])
    }

    @Test("Full-width terminators end sentences without spaces")
    func chineseSentences() {
        #expect(Tokenizer(unit: .sentence).tokens(for: "今天好。明天见！好吗？") == ["今天好。", "明天见！", "好吗？"])
    }

    @Test("Paragraphs end at line breaks; blank lines and edges are trimmed")
    func paragraphs() {
        #expect(Tokenizer(unit: .paragraph).tokens(for: "One.\n\n  Two a\r\nThree  \n") == ["One.", "Two a", "Three"])
    }

    @Test("The document unit is the whole trimmed text")
    func document() {
        #expect(Tokenizer(unit: .document).tokens(for: "  a b.\nc  ") == ["a b.\nc"])
    }

    @Test("Token ranges index the original string")
    func ranges() {
        let text = "Grüße, 世界!"
        let pieces = Tokenizer().tokenRanges(for: text).map { String(text[$0]) }
        #expect(pieces == ["Grüße", "世", "界"])
    }
}

@Suite("Normalization", .onOwnThreads)
struct NormalizationTests {
    @Test("Lowercasing can be turned off")
    func noLowercase() {
        #expect(words("Don't SHOUT", Tokenizer(normalization: .init(lowercase: false))) == ["Don't", "SHOUT"])
    }

    @Test("NFKC folding maps ligatures, full-width letters and superscripts")
    func compatibility() {
        let tokenizer = Tokenizer(normalization: .init(compatibilityFolding: true))
        #expect(words("ﬁne Ｔｏｋｙｏ x²", tokenizer) == ["fine", "tokyo", "x2"])
    }

    @Test("Diacritic folding strips Latin, Greek and Cyrillic accents but keeps Thai vowels")
    func diacritics() {
        let tokenizer = Tokenizer(normalization: .init(diacriticFolding: true))
        #expect(words("café naïve Ёлка άλφα ที่", tokenizer) == ["cafe", "naive", "елка", "αλφα", "ที่"])
    }

    @Test("Normalization settings round-trip through Codable")
    func codable() throws {
        let tokenizer = Tokenizer(segmentation: .icu, locale: "ja",
                                  normalization: .init(lowercase: false, compatibilityFolding: true))
        let data = try JSONEncoder().encode(tokenizer)
        #expect(try JSONDecoder().decode(Tokenizer.self, from: data) == tokenizer)
    }
}

@Suite("Tokenizing invalid UTF-8", .onOwnThreads)
struct TokenizerInvalidUTF8Tests {
    static let broken: [UInt8] = Array("ok ".utf8) + [0xFF, 0xC3] + Array(" fine caf".utf8) + [0xC3]

    @Test("Ill-formed bytes are separators and never crash the scanner")
    func scanning() {
        var tokens: [String] = []
        Self.broken.withUnsafeBufferPointer { bytes in
            Tokenizer().enumerateTokens(inUTF8: bytes) { token in
                tokens.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[token.range]), as: UTF8.self))
            }
        }
        #expect(tokens == ["ok", "fine", "caf"])
    }

    @Test("Every truncation and corruption of multibyte text is scanned safely")
    func fuzz() {
        let text = Array("Grüße 東京 👨‍👩‍👧 สวัสดี don't".utf8)
        for cut in 0...text.count {
            for corrupt in [nil, 0x80, 0xFF, 0xE4] as [UInt8?] {
                var bytes = Array(text[0..<cut])
                if let corrupt, !bytes.isEmpty { bytes[bytes.count / 2] = corrupt }
                bytes.withUnsafeBufferPointer { buffer in
                    for unit in TokenUnit.allCases {
                        Tokenizer(unit: unit).enumerateTokens(inUTF8: buffer) { token in
                            #expect(token.range.lowerBound >= 0 && token.range.upperBound <= buffer.count)
                        }
                    }
                }
            }
        }
    }

    @Test("The replace policy decodes with U+FFFD; the fail policy names the offset")
    func policies() throws {
        let data = Data(Self.broken)
        #expect(try Tokenizer.decodeText(data, policy: .replace) == "ok \u{FFFD}\u{FFFD} fine caf\u{FFFD}")
        #expect(throws: MLKitError(.invalidUTF8, "invalid UTF-8 (byte 0xFF at offset 3)",
                                   at: .init(file: "notes.txt", line: 1, column: 4))) {
            try Tokenizer.decodeText(data, policy: .fail, source: "notes.txt")
        }
    }
}

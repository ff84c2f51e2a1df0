import Foundation
import TestSupport
import Testing
@testable import MLKit

@Suite("Feature hashing is stable across machines and versions", .onOwnThreads)
struct FeatureHashStabilityTests {
    @Test("FNV-1a 64 matches its published test vectors")
    func publishedVectors() {
        #expect(FeatureHash.of("") == 0xCBF2_9CE4_8422_2325)
        #expect(FeatureHash.of("a") == 0xAF63_DC4C_8601_EC8C)
        #expect(FeatureHash.of("foobar") == 0x8594_4171_F739_67E8)
    }

    /// Golden values, computed independently (Python, from the documented definition):
    /// bucket = (h ^ (h >> 32)) & (2^bits − 1).
    @Test("Feature keys land in their golden buckets", arguments: [
        ("love", 0xCE3A_DBAD_7117_8FF1 as UInt64, 873_564, 87_132),
        ("i love", 0x9EB9_15FC_5F98_6DBC, 96_320, 96_320),
        ("北京", 0x9AA1_E75C_F025_7D61, 301_629, 39_485),
        ("#<lo", 0xB57B_687C_7C45_3267, 940_571, 154_139),
        ("rainbows", 0xB47D_EFDF_BDF7_B7EE, 677_937, 153_649),
    ])
    func goldenBuckets(key: String, hash: UInt64, bucket20: Int, bucket18: Int) {
        #expect(FeatureHash.of(key) == hash)
        #expect(FeatureHash.bucket(hash, bits: 20) == bucket20)
        #expect(FeatureHash.bucket(hash, bits: 18) == bucket18)
    }

    @Test("A text's vector is pinned: words and bigrams of 'I love rainbows'")
    func goldenVector() throws {
        let featurizer = try Featurizer(configuration: .init(maxWordNGram: 2))
        let vector = featurizer.vector(for: "I love LOVE rainbows")
        let expected = ["i", "love", "love", "rainbows", "i love", "love love", "love rainbows"]
            .map { FeatureHash.bucket(FeatureHash.of($0), bits: 20) }
        var counts: [Int: Float] = [:]
        for bucket in expected { counts[bucket, default: 0] += 1 }
        #expect(vector.indices.map(Int.init) == counts.keys.sorted())
        #expect(vector.values == counts.keys.sorted().map { counts[$0]! })
        #expect(vector[Int32(873_564)] == 2)  // "love" twice
    }
}

@Suite("The fast hashing path agrees with the reference path", .onOwnThreads)
struct FeatureHashAgreementTests {
    static let texts = [
        "Don't split U.S. e-mail 3.14 naïve café 🏳️‍🌈",
        "我们今天在北京大学学习 and iPhone手机",
        "สวัสดี ที่นี่ Привет МИР Grüße ΣΊΣΥΦΟΣ İstanbul",
        "a b c d e f g h i j k l m n o p",
        "",
        String(repeating: "supercalifragilistic ", count: 20) + "ﬁne Ｔｏｋｙｏ",
        // Joiners inside words and at their edges, ASCII and not.
        "don’t open‐source non‑stop ١٢٫٥ ١٬٠٠٠ 1,000 x--y -lead trail- e.g. co_op a'b' ℓ-x",
        // Punctuation and symbols between words, at both ends, ASCII and not, and ill-formed
        // text's replacement character.
        "\"Wow!!!\" :) (really?) — 50% … 「北京」。 ＡＢ！ $5 © x\u{200B}y \u{FFFD}; end.",
    ]

    static let configurations: [FeaturizerConfiguration] = [
        .init(),
        .init(maxWordNGram: 3),
        .init(maxWordNGram: 5, scriptBigrams: false),
        .init(characterNGrams: 2...4),
        .init(tokenizer: Tokenizer(normalization: .init(lowercase: false)), maxWordNGram: 2),
        .init(tokenizer: Tokenizer(normalization: .init(compatibilityFolding: true, diacriticFolding: true)),
              maxWordNGram: 2, characterNGrams: 1...3),
        .init(wordParts: true),
        .init(maxWordNGram: 3, characterNGrams: 2...3, wordParts: true),
        // The path of words and bigrams, with and without each extra (what `auto` trains).
        .init(scriptBigrams: false),
        .init(maxWordNGram: 2, wordParts: true),
        .init(maxWordNGram: 2, scriptBigrams: false),
        .init(maxWordNGram: 2, wordParts: true, punctuation: true),
        .init(tokenizer: Tokenizer(normalization: .init(compatibilityFolding: true)), maxWordNGram: 3,
              characterNGrams: 2...3, punctuation: true),
    ]

    @Test("Every feature hash equals FNV-1a of its reference key", arguments: configurations)
    func agreement(configuration: FeaturizerConfiguration) throws {
        let featurizer = Featurizer(configuration: configuration, vocabulary: nil, inverseDocumentFrequency: nil)
        var scratch = FeatureScratch()
        for text in Self.texts {
            var fast: [UInt64] = []
            Tokenizer.withUTF8(text) { bytes in
                featurizer.forEachFeatureHash(in: bytes, scratch: &scratch) { fast.append($0) }
            }
            let reference = featurizer.featureKeys(for: text).map(FeatureHash.of)
            #expect(fast.sorted() == reference.sorted(), "\(text)")
        }
    }

    @Test("The key walker's own hashes are FNV-1a of its keys", arguments: configurations)
    func keyHashes(configuration: FeaturizerConfiguration) throws {
        let featurizer = Featurizer(configuration: configuration, vocabulary: nil, inverseDocumentFrequency: nil)
        var scratch = FeatureKeyScratch()
        for text in Self.texts {
            var pairs: [(UInt64, UInt64)] = []
            Tokenizer.withUTF8(text) { bytes in
                featurizer.forEachFeatureKey(in: bytes, scratch: &scratch) { hash, key in
                    pairs.append((hash, FeatureHash.of(key)))
                    return true
                }
            }
            #expect(pairs.allSatisfy { $0.0 == $0.1 }, "\(text)")
            #expect(pairs.count == featurizer.featureKeys(for: text).count)
        }
    }

    @Test("Vocabulary terms are recovered for every kind of feature, on any thread count",
          arguments: configurations)
    func recoveredTerms(configuration: FeaturizerConfiguration) throws {
        var configuration = configuration
        configuration.indexing = .vocabulary(.init())
        let texts = Self.texts + Self.texts.reversed().map { $0.uppercased() }
        let expected = Set(texts.flatMap { Featurizer(configuration: configuration, vocabulary: nil,
                                                      inverseDocumentFrequency: nil).featureKeys(for: $0) })
        var previous: [String]?
        for threads in [1, 2, 3, 7] {
            let featurizer = try Featurizer(fitting: texts, configuration: configuration, recoveringTerms: true,
                                            threads: threads)
            let terms = try #require(featurizer.vocabularyTerms)
            #expect(Set(terms) == expected)
            #expect(terms.count == expected.count)
            if let previous { #expect(terms == previous) }
            previous = terms
        }
    }

    @Test("Word parts: a joined word also gives its parts, after its own n-grams")
    func wordParts() throws {
        let featurizer = try Featurizer(configuration: .init(wordParts: true))
        #expect(featurizer.featureKeys(for: "Open-source isn't 3.14, co_op ok") == [
            "open-source", "open", "source", "isn't", "isn", "t", "3.14", "3", "14", "co_op", "co", "op", "ok",
        ])
        let bigrams = try Featurizer(configuration: .init(maxWordNGram: 2, wordParts: true))
        #expect(bigrams.featureKeys(for: "free open‐source") == ["free", "open‐source", "free open‐source", "open", "source"])
        let plain = try Featurizer(configuration: .init())
        #expect(plain.featureKeys(for: "Open-source isn't") == ["open-source", "isn't"])
    }

    @Test("Punctuation: each run of punctuation and symbols between words is a token in the n-grams")
    func punctuation() throws {
        let featurizer = try Featurizer(configuration: .init(maxWordNGram: 2, punctuation: true))
        #expect(featurizer.featureKeys(for: "Wow!!! :) (really?)") == [
            "wow", "!!!", "wow !!!", ":)", "!!! :)", "(", ":) (", "really", "( really", "?)", "really ?)",
        ])
        // Whitespace, controls and format characters end a run; joiners at a word's edge are
        // punctuation, inside it part of the word; symbols and non-ASCII punctuation count.
        #expect(featurizer.featureKeys(for: "-lead e.g.! x\u{200B}… 「北」 $5 ©") == [
            "-", "lead", "- lead", "e.g", "lead e.g", ".!", "e.g .!", "x", ".! x", "…", "x …", "「", "… 「",
            "北", "「 北", "」", "北 」", "$", "」 $", "5", "$ 5", "©", "5 ©",
        ])
        // A full stop or a comma alone is not a token, in any script; in a longer run it is.
        #expect(featurizer.featureKeys(for: "Hi, there. Yes!. 好。 ok... ，ＯＫ．") == [
            "hi", "there", "hi there", "yes", "there yes", "!.", "yes !.", "好", "!. 好", "ok", "好 ok", "...",
            "ok ...", "ｏｋ", "... ｏｋ",
        ])
        // The hashes of the fast path are those of the keys, in the same order.
        var scratch = FeatureScratch()
        var fast: [UInt64] = []
        Tokenizer.withUTF8("Wow!!! :) (really?)") { bytes in
            featurizer.forEachFeatureHash(in: bytes, scratch: &scratch) { fast.append($0) }
        }
        #expect(fast == featurizer.featureKeys(for: "Wow!!! :) (really?)").map(FeatureHash.of))
        let words = try Featurizer(configuration: .init(maxWordNGram: 2))
        #expect(words.featureKeys(for: "Wow!!! :) (really?)") == ["wow", "really", "wow really"])
    }

    @Test("Punctuation runs from ICU words", .enabled(if: Tokenizer.isICUAvailable))
    func icuPunctuation() throws {
        let configuration = FeaturizerConfiguration(tokenizer: Tokenizer(segmentation: .icu), punctuation: true)
        let featurizer = try Featurizer(configuration: configuration)
        #expect(featurizer.featureKeys(for: "「我们」!") == ["「", "我们", "」!"])
    }

    @Test("The word scanner marks as joined exactly the tokens that have parts")
    func joinedTokens() throws {
        let texts = FeatureHashAgreementTests.texts + ["Open-source isn't 3.14, co_op ok", "a-b-c-d", "3.14.15"]
        var joinedCount = 0
        for text in texts {
            Tokenizer.withUTF8(text) { bytes in
                var scanner = WordScanner(bytes)
                while let token = scanner.next() {
                    var parts = 0
                    Featurizer.forEachPart(of: UnsafeBufferPointer(rebasing: bytes[token.range])) { _ in parts += 1 }
                    #expect(scanner.joined == (parts > 0), "\(text): \(String(decoding: UnsafeBufferPointer(rebasing: bytes[token.range]), as: UTF8.self))")
                    if scanner.joined { joinedCount += 1 }
                }
            }
        }
        #expect(joinedCount >= 15)
    }

    @Test("The word scanner marks as ASCII exactly the tokens whose bytes are all ASCII")
    func asciiTokens() throws {
        // Multibyte letters, marks, joiners and ZWJ inside otherwise ASCII words, at their
        // start, middle and end, and past the eight-byte scanning boundary.
        let texts = FeatureHashAgreementTests.texts + [
            "abcdefghé éabcdefgh abcdefgh’s don’t x‐y cafe\u{301} a\u{200D}b abcdefghijk ÀB 12٫5 Ab1", "ok",
        ]
        var ascii = 0, other = 0
        for text in texts {
            Tokenizer.withUTF8(text) { bytes in
                var scanner = WordScanner(bytes)
                while let token = scanner.next() {
                    let slice = UnsafeBufferPointer(rebasing: bytes[token.range])
                    #expect(scanner.ascii == slice.allSatisfy { $0 < 0x80 }, "\(text): \(String(decoding: slice, as: UTF8.self))")
                    if scanner.ascii { ascii += 1 } else { other += 1 }
                }
            }
        }
        #expect(ascii >= 30 && other >= 30)
    }

    @Test("Word parts from ICU words", .enabled(if: Tokenizer.isICUAvailable))
    func icuWordParts() throws {
        let configuration = FeaturizerConfiguration(tokenizer: Tokenizer(segmentation: .icu), wordParts: true)
        let featurizer = try Featurizer(configuration: configuration)
        let keys = featurizer.featureKeys(for: "isn't U.S.A")
        #expect(keys.starts(with: ["isn't", "isn", "t"]))
        var fast: [UInt64] = []
        var scratch = FeatureScratch()
        Tokenizer.withUTF8("isn't U.S.A") { bytes in
            featurizer.forEachFeatureHash(in: bytes, scratch: &scratch) { fast.append($0) }
        }
        #expect(fast == keys.map(FeatureHash.of))
    }

    @Test("Features counted in first-occurrence order are the ascending features")
    func firstOccurrenceOrder() throws {
        let repeats = (0..<400).map { "w\($0 % 37) w\($0 % 11)" }.joined(separator: " ")
        let texts = Self.texts + [repeats]
        let configuration = FeaturizerConfiguration(maxWordNGram: 2, wordParts: true, indexing: .vocabulary(.init()),
                                                    weighting: .tfidf, sublinearTF: true, l2Normalize: true)
        for featurizer in [try Featurizer(fitting: texts, configuration: configuration),
                           try Featurizer(configuration: .init(maxWordNGram: 2, sublinearTF: true))] {
            var buffer = FeatureBuffer()
            for text in texts {
                let ascending = featurizer.vector(for: text)
                Tokenizer.withUTF8(text) { featurizer.features(of: $0, into: &buffer, ascending: false) }
                let found = Array(zip(buffer.indices, buffer.values).prefix(buffer.count))
                #expect(Set(found.map(\.0)).count == found.count, "each index once")
                let sorted = found.sorted { $0.0 < $1.0 }
                #expect(sorted.map(\.0) == ascending.indices)
                for ((_, value), expected) in zip(sorted, ascending.values) {
                    #expect(abs(value - expected) <= 1e-6 * max(1, abs(expected)))
                }
            }
        }
    }

    @Test("Batch featurization equals one text at a time, on any thread count")
    func batch() throws {
        let featurizer = try Featurizer(configuration: .init(maxWordNGram: 2))
        let single = Self.texts.map { featurizer.vector(for: $0) }
        #expect(featurizer.vectors(for: Self.texts, threads: 1) == single)
        #expect(featurizer.vectors(for: Self.texts, threads: 2) == single)
        #expect(featurizer.vectors(for: Self.texts, threads: 7) == single)
    }
}

@Suite("Vocabulary, weighting and word counts", .onOwnThreads)
struct FeaturizerFittingTests {
    static let corpus = ["the cat sat", "the dog sat", "the cat ran", "a bird flew"]

    /// Equal counts are ordered by feature hash, so the order never depends on iteration order.
    static func byHash(_ terms: [String]) -> [String] { terms.sorted { FeatureHash.of($0) < FeatureHash.of($1) } }

    @Test("A vocabulary keeps features by count, most frequent first, and drops unknown words")
    func vocabulary() throws {
        let featurizer = try Featurizer(fitting: Self.corpus,
                                        configuration: .init(indexing: .vocabulary(.init(minCount: 2))))
        let terms = ["the"] + Self.byHash(["cat", "sat"])
        #expect(featurizer.vocabularyTerms == terms)
        #expect(featurizer.dimension == 3)
        let cat = Int32(try #require(terms.firstIndex(of: "cat")))
        #expect(featurizer.vector(for: "the cat zebra") == SparseVector(indices: [0, cat], values: [1, 1]))
    }

    @Test("A vocabulary maps each of its keys to the same key's index in another, or to -1")
    func columnsInAnotherVocabulary() {
        let grown = Vocabulary(terms: ["the", "cat", "sat", "zebra"])
        let trained = Vocabulary(terms: ["sat", "the", "cat"])
        #expect(grown.columns(in: trained) == [1, 2, 0, -1])
        #expect(trained.columns(in: trained) == [0, 1, 2])
    }

    @Test("Pruning by document frequency and size")
    func pruning() throws {
        let featurizer = try Featurizer(
            fitting: Self.corpus,
            configuration: .init(indexing: .vocabulary(.init(maxSize: 2, maxDocumentFrequency: 0.5))))
        #expect(featurizer.vocabularyTerms == Self.byHash(["cat", "sat"]))
    }

    @Test("Counts count occurrences and document frequency counts documents, on any thread count")
    func countsAndDocuments() throws {
        // "echo" occurs 6 times but in 2 of 5 documents; "fox" once in each of 3.
        let corpus = ["echo echo echo", "echo echo echo fox", "fox", "fox", "golf"]
        for threads in [1, 2, 3] {
            let frequent = try Featurizer(fitting: corpus, configuration: .init(indexing: .vocabulary(.init(minCount: 3))),
                                          recoveringTerms: true, threads: threads)
            #expect(frequent.vocabularyTerms == ["echo", "fox"])
            let rare = try Featurizer(fitting: corpus,
                                      configuration: .init(indexing: .vocabulary(.init(maxDocumentFrequency: 0.4))),
                                      recoveringTerms: true, threads: threads)
            #expect(rare.vocabularyTerms == ["echo", "golf"])
        }
    }

    @Test("A vocabulary of thousands of features is the same on any thread count")
    func largeVocabulary() throws {
        let texts = (0..<3_000).map { row in (0..<(1 + row % 5)).map { "w\(row * 7 % 2_003)x\($0)" }.joined(separator: " ") }
        let configuration = FeaturizerConfiguration(maxWordNGram: 2, indexing: .vocabulary(.init(minCount: 2)))
        let one = try Featurizer(fitting: texts, configuration: configuration, recoveringTerms: true, threads: 1)
        let two = try Featurizer(fitting: texts, configuration: configuration, recoveringTerms: true, threads: 2)
        // About 15,000 distinct features are counted before pruning: the counting table grows
        // several times past its first 4,096 slots.
        #expect(one.dimension > 1_000)
        #expect(one.vocabularyTerms == two.vocabularyTerms)
        for text in texts.prefix(50) { #expect(one.vector(for: text) == two.vector(for: text)) }
    }

    @Test("Feature counts are exact whether the counting table grows, flushes many times, or holds one row larger than its limit",
          arguments: [16, 64, 1 << 20])
    func featureCountsAgainstReference(maximumCapacity: Int) {
        // Words come in pairs, so that a text counts some features twice. Row 700 has 40
        // distinct words: more than a 16- or 64-slot table holds half full.
        let texts = (0..<1_500).map { row in
            row == 700 ? (0..<40).map { "big\($0)" }.joined(separator: " ")
                : (0..<(1 + row % 7)).map { "w\((row * 13 + $0 / 2 * 5) % 97)" }.joined(separator: " ")
        }
        let hasher = Featurizer(configuration: .init(maxWordNGram: 2), vocabulary: nil, inverseDocumentFrequency: nil)
        var statistics = Featurizer.FeatureStatistics(maximumCapacity: maximumCapacity)
        var reference: [UInt64: (count: Int32, documents: Int32, first: Int32)] = [:]
        var scratch = FeatureScratch()
        for (row, text) in texts.enumerated() {
            var seen: Set<UInt64> = []
            Tokenizer.withUTF8(text) { bytes in
                hasher.forEachFeatureHash(in: bytes, scratch: &scratch) { hash in
                    statistics.add(hash, row: Int32(row))
                    let counted = reference[hash] ?? (0, 0, Int32(row))
                    reference[hash] = (counted.count + 1, counted.documents + (seen.insert(hash).inserted ? 1 : 0),
                                       counted.first)
                }
            }
            statistics.endRow()
        }
        statistics.flush()
        #expect(statistics.entries.map(\.hash) == reference.keys.sorted())
        for entry in statistics.entries {
            let expected = reference[entry.hash]!
            #expect(entry.count == expected.count && entry.documents == expected.documents && entry.first == expected.first)
        }
    }

    @Test("A vocabulary's table finds every key at its index and no other, at sizes around powers of two",
          arguments: [1, 2, 3, 255, 256, 257, 65_535, 65_536, 100_000])
    func vocabularyTable(size: Int) {
        // Keys whose hashes share all their high bits stress the tag that a slot keeps beside
        // the index: they differ only in the low bits that the index takes.
        var generator = SplitMix64(seed: UInt64(size))
        let hashes = (0..<size).map { index in index % 2 == 0 ? generator.next() : 0xABCD_0000_0000_0000 | UInt64(index) }
        let vocabulary = Vocabulary(terms: nil, hashes: hashes)
        for (index, hash) in hashes.enumerated() { #expect(vocabulary.index(ofHash: hash) == index) }
        for _ in 0..<1_000 { #expect(vocabulary.index(ofHash: generator.next()) == nil) }
        #expect(vocabulary.index(ofHash: 0xABCD_0000_0000_0000 | UInt64(size + 1)) == nil)
    }

    @Test("A harder pruning of a vocabulary keeps its first columns: the same vocabulary and counts as learning it again")
    func narrowedVocabulary() throws {
        // Words that recur, and one of a kind in each text (with the bigrams around it).
        let texts = (0..<400).map { row in
            ((0..<(2 + row % 7)).map { "w\((row * 13 + $0 * 5) % 97)" } + ["once\(row)"]).joined(separator: " ")
        }
        let full = FeaturizerConfiguration(maxWordNGram: 2, wordParts: true, indexing: .vocabulary(.init()))
        var pruned = full
        pruned.indexing = .vocabulary(.init(minCount: 2))
        let statistics = Featurizer.countFeatures(texts, configuration: full, threads: 2)
        let wide = try Featurizer(fitting: texts, configuration: full, recoveringTerms: false, threads: 2, counted: statistics)
        let narrow = try #require(try wide.narrowed(to: pruned, texts: texts, counted: statistics, threads: 2))
        let direct = try Featurizer(fitting: texts, configuration: pruned, recoveringTerms: false, threads: 2)
        #expect(narrow.dimension < wide.dimension)
        #expect(narrow.vocabulary?.hashes == direct.vocabulary?.hashes)
        let kept = wide.matrix(for: texts, threads: 2).keepingColumns(below: narrow.dimension)
        let again = direct.matrix(for: texts, threads: 2)
        #expect(kept.columns == again.columns)
        for row in texts.indices { #expect(kept.vector(at: row) == again.vector(at: row)) }
        // Pruning the most frequent features does not keep a prefix: no narrowing then.
        var frequent = full
        frequent.indexing = .vocabulary(.init(maxDocumentFrequency: 0.05))
        #expect(try wide.narrowed(to: frequent, texts: texts, counted: statistics, threads: 2) == nil)
    }

    @Test("Counts of the first texts under the training split's vocabulary serve a vocabulary of all the texts: the same matrix as featurizing them again")
    func reusedCounts() throws {
        // The later texts bring words the first ones lack, and recurring words whose order by
        // count changes once they are added.
        let texts = (0..<500).map { row in
            ((0..<(2 + row % 6)).map { "w\((row * 11 + $0 * 7) % (row < 400 ? 89 : 131))" } + ["once\(row)"])
                .joined(separator: " ")
        }
        let trainRows = 400
        let full = FeaturizerConfiguration(maxWordNGram: 2, wordParts: true, indexing: .vocabulary(.init()))
        var pruned = full
        pruned.indexing = .vocabulary(.init(minCount: 2))
        let source = try Featurizer(fitting: Array(texts.prefix(trainRows)), configuration: full,
                                    recoveringTerms: false, threads: 2)
        let counted = source.matrix(for: Array(texts.prefix(trainRows)), threads: 2)
        for configuration in [full, pruned] {
            let all = try Featurizer(fitting: texts, configuration: configuration, recoveringTerms: false, threads: 2)
            let reused = try #require(all.matrix(for: texts, reusing: counted, countedBy: source, threads: 2))
            let again = all.matrix(for: texts, threads: 2)
            #expect(reused.columns == again.columns && reused.rows == texts.count)
            for row in texts.indices { #expect(reused.vector(at: row) == again.vector(at: row)) }
        }
        // Hashed features need no renaming.
        let hashed = try Featurizer(configuration: .init(maxWordNGram: 2, indexing: .hashed(bits: 12)))
        let reused = try #require(hashed.matrix(for: texts, reusing: hashed.matrix(for: Array(texts.prefix(trainRows))),
                                                countedBy: hashed, threads: 2))
        let again = hashed.matrix(for: texts)
        for row in texts.indices { #expect(reused.vector(at: row) == again.vector(at: row)) }
        // A pruned source lacks features of its own texts: it does not qualify.
        let prunedSource = try Featurizer(fitting: Array(texts.prefix(trainRows)), configuration: pruned,
                                          recoveringTerms: false, threads: 2)
        let all = try Featurizer(fitting: texts, configuration: full, recoveringTerms: false, threads: 2)
        #expect(all.matrix(for: texts, reusing: prunedSource.matrix(for: Array(texts.prefix(trainRows))),
                           countedBy: prunedSource, threads: 2) == nil)
    }

    @Test("Vocabulary keys are packed as a model file stores them: UTF-8, each followed by a NUL byte")
    func packedKeys() throws {
        let keys = ["love", "", "do not", "東京", "#<lo"]
        let packed = PackedStrings(keys)
        #expect(packed.count == 5 && packed.strings == keys)
        #expect(packed.bytes == Array("love\0\0do not\0東京\0#<lo\0".utf8))
        #expect(PackedStrings(packed: packed.bytes) == packed)
        #expect(PackedStrings(packed: []) == PackedStrings([]))
        #expect(PackedStrings(packed: Array("love\0do".utf8)) == nil)
        // Keys found in pieces, out of order, as the threads that recover them find them; one
        // never found is empty.
        let first = Array("do notlove".utf8), second = Array("#<lo東京".utf8)
        let assembled = PackedStrings(count: 5, pieces: [(first, [(2, 0..<6), (0, 6..<10)]),
                                                         (second, [(4, 0..<4), (3, 4..<10)])])
        #expect(assembled == packed)
        // A fitted featurizer's terms, recovered on several threads, are its keys.
        let texts = (0..<300).map { "w\($0 % 37) 語\($0 % 11) x\($0)" }
        let featurizer = try Featurizer(fitting: texts, configuration: .init(indexing: .vocabulary(.init())),
                                        recoveringTerms: true, threads: 3)
        let terms = try #require(featurizer.vocabularyTerms)
        #expect(terms.count == featurizer.dimension)
        for (index, term) in terms.enumerated() { #expect(featurizer.vocabulary?.index(ofHash: FeatureHash.of(term)) == index) }
    }

    @Test("Pruning that leaves nothing is an error that says why")
    func emptyVocabulary() {
        #expect(throws: MLKitError(.invalidDataset, "vocabulary pruning (min count 99) left no features")) {
            try Featurizer(fitting: Self.corpus, configuration: .init(indexing: .vocabulary(.init(minCount: 99))))
        }
    }

    @Test("TF-IDF uses scikit-learn's smoothed idf, and L2 normalization gives unit length")
    func tfidf() throws {
        let featurizer = try Featurizer(
            fitting: Self.corpus,
            configuration: .init(indexing: .vocabulary(.init()), weighting: .tfidf, l2Normalize: true))
        let terms = try #require(featurizer.vocabularyTerms)
        let vector = featurizer.vector(for: "the cat")
        let idf = { (df: Double) in Float(log(5 / (1 + df)) + 1) }
        let the = idf(3), cat = idf(2)
        let norm = (the * the + cat * cat).squareRoot()
        let theIndex = Int32(try #require(terms.firstIndex(of: "the")))
        let catIndex = Int32(try #require(terms.firstIndex(of: "cat")))
        #expect(abs(vector[theIndex] - the / norm) < 1e-6)
        #expect(abs(vector[catIndex] - cat / norm) < 1e-6)
    }

    @Test("Sublinear TF and binary weighting")
    func weighting() throws {
        let sublinear = try Featurizer(configuration: .init(sublinearTF: true))
        #expect(sublinear.vector(for: "go go go").values == [1 + log(3)])
        let binary = try Featurizer(configuration: .init(weighting: .binary))
        #expect(binary.vector(for: "go go go").values == [1])
    }

    @Test("Word counts are the SentimentPolarity model's input: normalized word → count")
    func wordCounts() throws {
        let featurizer = try Featurizer(configuration: .init())
        #expect(featurizer.wordCounts(for: "I love love rainbows!") == ["i": 1, "love": 2, "rainbows": 1])
    }

    @Test("Invalid settings name the field at fault")
    func validation() {
        #expect(throws: MLKitError(.invalidParameter, "must be 1 to 5, not 9", at: .init(field: "maxWordNGram"))) {
            try Featurizer(configuration: .init(maxWordNGram: 9))
        }
        #expect(throws: MLKitError(.invalidParameter, "must be 8 to 28, not 40", at: .init(field: "indexing.bits"))) {
            try Featurizer(configuration: .init(indexing: .hashed(bits: 40)))
        }
    }

    @Test("The configuration round-trips through Codable, as the model file stores it")
    func codable() throws {
        let configuration = FeaturizerConfiguration(maxWordNGram: 2, characterNGrams: 2...4, wordParts: true,
                                                    indexing: .vocabulary(.init(minCount: 2, maxSize: 1000)),
                                                    weighting: .tfidf, sublinearTF: true, l2Normalize: true)
        let data = try JSONEncoder().encode(configuration)
        #expect(try JSONDecoder().decode(FeaturizerConfiguration.self, from: data) == configuration)
    }

    @Test("A configuration written before word parts existed reads them as off")
    func codableWithoutWordParts() throws {
        let configuration = FeaturizerConfiguration(maxWordNGram: 2, wordParts: true)
        var object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(configuration)) as? [String: Any])
        #expect(object.removeValue(forKey: "wordParts") as? Bool == true)
        let decoded = try JSONDecoder().decode(FeaturizerConfiguration.self,
                                               from: JSONSerialization.data(withJSONObject: object))
        #expect(decoded.wordParts == false)
        #expect(decoded.maxWordNGram == 2)
    }
}

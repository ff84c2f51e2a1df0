// The tokenizer and the featurizer over arbitrary bytes: the input's first two bytes choose
// the settings (unit, segmentation, locale, normalization; n-grams, character n-grams, word
// parts, punctuation, weighting), the rest is the text, which need not be valid UTF-8.
// Tokens must lie inside the text, in order; feature indices inside the buckets, increasing.
import Foundation
import FuzzSupport
import MLKit

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked {
        var seeds: [String: Data] = [:]
        let texts = try Seeds.topics().examples.map(\.text) + [
            "東京都に住んでいます。北京欢迎你", "ภาษาไทยง่ายนิดเดียว", "Ḱ̷̛ǹ̵o̴w̶ ﬁne ＡＢＣ ½", "👩‍👩‍👧‍👦 🇫🇷 #1 e-mail don't 3,141.59",
            "Hi there. Bye now.\n\nNew paragraph!!! :) ...",
        ]
        for (index, text) in texts.enumerated() {
            seeds["text-\(index)"] = Data([UInt8(truncatingIfNeeded: index * 37), UInt8(truncatingIfNeeded: index * 11)]) + Data(text.utf8)
        }
        seeds["invalid"] = Data([0x55, 0xAA, 0x61, 0xC3, 0x28, 0xE2, 0x82, 0x20, 0xF0, 0x9F, 0x98, 0xED, 0xA0, 0x80, 0xFF])
        return seeds
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = FuzzInput.data(start, count)
    guard data.count >= 2 else { return 0 }
    let first = data[data.startIndex], second = data[data.startIndex + 1]
    let text = Data(data.dropFirst(2))
    let normalization = TextNormalization(lowercase: first & 1 != 0, compatibilityFolding: first & 2 != 0,
                                          diacriticFolding: first & 4 != 0)
    let unit = TokenUnit.allCases[Int(first >> 3 & 3)]
    let segmentation: WordSegmentation = first & 0x20 != 0 && Tokenizer.isICUAvailable ? .icu : .standard
    let locale = [nil, "ja", "th", "zh"][Int(first >> 6)]
    let tokenizer = Tokenizer(unit: unit, segmentation: segmentation, locale: locale, normalization: normalization)

    text.withUnsafeBytes { raw in
        let bytes = raw.bindMemory(to: UInt8.self)
        var end = 0
        tokenizer.enumerateTokens(inUTF8: bytes) { token in
            precondition(token.range.lowerBound >= end && token.range.upperBound <= bytes.count,
                         "token \(token.range) outside the text or before the previous one (ends at \(end))")
            end = token.range.upperBound
        }
    }
    let string = (try? Tokenizer.decodeText(text, policy: .fail, source: "fuzz")) ?? (try! Tokenizer.decodeText(text, policy: .replace))
    _ = tokenizer.tokens(for: string)
    let ranges = tokenizer.tokenRanges(for: string)
    for range in ranges { precondition(range.lowerBound >= string.startIndex && range.upperBound <= string.endIndex) }

    // The featurizer over the same text, with the settings the second byte chooses.
    let characters: ClosedRange<Int>? = second & 3 == 0 ? nil : 1...Int(second & 3) + 1
    let configuration = FeaturizerConfiguration(
        tokenizer: Tokenizer(unit: .word, segmentation: segmentation, locale: locale, normalization: normalization),
        maxWordNGram: 1 + Int(second >> 2 & 3), characterNGrams: characters, scriptBigrams: second & 0x10 != 0,
        wordParts: second & 0x20 != 0, punctuation: second & 0x40 != 0, indexing: .hashed(bits: 8 + Int(second >> 7) * 12),
        weighting: second & 0x80 != 0 ? .binary : .counts, sublinearTF: second & 1 != 0, l2Normalize: second & 2 != 0)
    guard let featurizer = try? Featurizer(configuration: configuration) else { return 0 }
    let vector = featurizer.vector(for: string)
    precondition(vector.indices.count == vector.values.count, "as many values as indices")
    precondition(zip(vector.indices, vector.indices.dropFirst()).allSatisfy { $0 < $1 }, "indices increase")
    precondition(vector.indices.allSatisfy { $0 >= 0 && Int($0) < featurizer.dimension }, "indices inside the buckets")
    _ = featurizer.wordCounts(for: string)
    return 0
}

import Foundation

extension FeaturizerConfiguration {
    /// The term frequency of every feature of `text`, by its key: what a model trained with
    /// this configuration weighs before any inverse document frequency and normalization.
    ///
    /// A key is a feature's normalized text (`love`, the word n-gram `i love`, the character
    /// n-gram `#<lo`; `docs/features.md`), and its term frequency is its count, `1 + ln(count)`
    /// with ``sublinearTF``, or 1 with ``Weighting/binary`` weighting. This is the input of an
    /// mlkit model exported to Core ML, which does the rest of the weighting itself.
    /// - Parameter text: The text.
    /// - Returns: Each distinct key with its term frequency.
    /// - Complexity: O(n) in the text's length.
    public func termFrequencies(for text: String) -> [String: Double] {
        var counts: [String: Double] = [:]
        let featurizer = Featurizer(configuration: self, vocabulary: nil, inverseDocumentFrequency: nil)
        var scratch = FeatureKeyScratch()
        Tokenizer.withUTF8(text) { bytes in
            featurizer.forEachFeatureKey(in: bytes, scratch: &scratch) { _, key in
                counts[String(decoding: key, as: UTF8.self), default: 0] += 1
                return true
            }
        }
        return counts.mapValues(termFrequency)
    }

    /// The term frequency of every bucket of `text`'s features, for hashed indexing: each
    /// feature's key hashed into its bucket (``FeaturizerConfiguration/Indexing/hashed(bits:)``,
    /// `docs/features.md`), the counts of a bucket added up, then weighed as
    /// ``termFrequencies(for:)`` weighs them. This is the input of a hashed mlkit model exported
    /// to Core ML.
    /// - Parameter text: The text.
    /// - Returns: Each bucket that a feature of the text falls into, with its term frequency;
    ///   empty when the configuration does not hash.
    public func hashedTermFrequencies(for text: String) -> [Int64: Double] {
        guard case .hashed(let bits) = indexing else { return [:] }
        var counts: [Int64: Double] = [:]
        let featurizer = Featurizer(configuration: self, vocabulary: nil, inverseDocumentFrequency: nil)
        var scratch = FeatureScratch()
        Tokenizer.withUTF8(text) { bytes in
            featurizer.forEachFeatureHash(in: bytes, scratch: &scratch) { hash in
                counts[Int64(FeatureHash.bucket(hash, bits: bits)), default: 0] += 1
            }
        }
        return counts.mapValues(termFrequency)
    }

    /// A count's term frequency under this configuration's weighting.
    private func termFrequency(_ count: Double) -> Double {
        if weighting == .binary { return 1 }
        return sublinearTF ? 1 + log(count) : count
    }
}

import Foundation

extension Featurizer {
    /// Counts every feature of the training texts, prunes, and keeps the survivors, the most
    /// frequent first (ties broken by hash, so the result never depends on iteration order).
    static func learnVocabulary(_ texts: [String], configuration: FeaturizerConfiguration,
                                pruning: FeaturizerConfiguration.VocabularyPruning) throws -> Vocabulary {
        let hasher = Featurizer(configuration: configuration, vocabulary: nil, inverseDocumentFrequency: nil)
        var statistics: [UInt64: (count: Int, documents: Int)] = [:]
        var scratch = FeatureScratch()
        var hashes: [UInt64] = []
        for text in texts {
            hashes.removeAll(keepingCapacity: true)
            Tokenizer.withUTF8(text) { bytes in
                hasher.forEachFeatureHash(in: bytes, scratch: &scratch) { hashes.append($0) }
            }
            hashes.sort()
            var position = 0
            while position < hashes.count {
                var next = position + 1
                while next < hashes.count && hashes[next] == hashes[position] { next += 1 }
                statistics[hashes[position], default: (0, 0)].count += next - position
                statistics[hashes[position], default: (0, 0)].documents += 1
                position = next
            }
        }
        let maxDocuments = pruning.maxDocumentFrequency.map { Int(($0 * Double(texts.count)).rounded(.down)) } ?? Int.max
        var kept = statistics.filter { $0.value.count >= pruning.minCount && $0.value.documents <= maxDocuments }
            .map { (hash: $0.key, count: $0.value.count) }
        kept.sort { $0.count != $1.count ? $0.count > $1.count : $0.hash < $1.hash }
        if let maxSize = pruning.maxSize, kept.count > maxSize { kept.removeLast(kept.count - maxSize) }
        guard !kept.isEmpty else {
            throw MLKitError(.invalidDataset, "vocabulary pruning (min count \(pruning.minCount)) left no features")
        }
        let keptHashes = kept.map(\.hash)
        return Vocabulary(terms: hasher.recoverKeys(of: keptHashes, from: texts), hashes: keptHashes)
    }

    /// Finds the key string of each hash by walking the texts with the reference path until
    /// every key has been seen.
    private func recoverKeys(of hashes: [UInt64], from texts: [String]) -> [String] {
        var missing = Set(hashes)
        var keys: [UInt64: String] = [:]
        for text in texts where !missing.isEmpty {
            for key in featureKeys(for: text) {
                let hash = FeatureHash.of(key)
                if missing.remove(hash) != nil { keys[hash] = key }
            }
        }
        return hashes.map { keys[$0] ?? "" }
    }

    /// The smoothed inverse document frequency of each index: `ln((1 + n) / (1 + df)) + 1`,
    /// as scikit-learn computes it, so that features in every document keep a weight of 1.
    func learnInverseDocumentFrequency(_ texts: [String]) -> [Float] {
        var documentFrequency = [Int32](repeating: 0, count: dimension)
        var buffer = FeatureBuffer()
        for text in texts {
            Tokenizer.withUTF8(text) { features(of: $0, into: &buffer) }
            for index in buffer.indices[0..<buffer.count] { documentFrequency[Int(index)] += 1 }
        }
        let documents = Double(texts.count)
        return documentFrequency.map { Float(log((1 + documents) / (1 + Double($0))) + 1) }
    }
}

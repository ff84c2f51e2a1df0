import Foundation

extension Featurizer {
    /// How often a feature occurs in the training texts, and in how many of them.
    fileprivate struct FeatureStatistics {
        var count = 0
        var documents = 0

        /// Adds one document in which the feature occurs `occurrences` times.
        mutating func add(count occurrences: Int) {
            count += occurrences
            documents += 1
        }
    }

    /// Counts every feature of the training texts, prunes, and keeps the survivors, the most
    /// frequent first (ties broken by hash, so the result never depends on iteration order or
    /// on the thread count).
    static func learnVocabulary(_ texts: [String], configuration: FeaturizerConfiguration,
                                pruning: FeaturizerConfiguration.VocabularyPruning,
                                recoveringTerms: Bool, threads: Int) throws -> Vocabulary {
        let hasher = Featurizer(configuration: configuration, vocabulary: nil, inverseDocumentFrequency: nil)
        let threadCount = threads == 0 ? Parallel.defaultThreadCount : threads
        let parts = Parallel.map(texts.count, threads: threadCount) { rows in
            var statistics: [UInt64: FeatureStatistics] = [:]
            var scratch = FeatureScratch()
            var hashes: [UInt64] = []
            for row in rows {
                hashes.removeAll(keepingCapacity: true)
                Tokenizer.withUTF8(texts[row]) { bytes in
                    hasher.forEachFeatureHash(in: bytes, scratch: &scratch) { hashes.append($0) }
                }
                hashes.sort()
                var position = 0
                while position < hashes.count {
                    var next = position + 1
                    while next < hashes.count && hashes[next] == hashes[position] { next += 1 }
                    statistics[hashes[position], default: FeatureStatistics()].add(count: next - position)
                    position = next
                }
            }
            return statistics
        }
        var statistics = parts[0]
        for part in parts.dropFirst() {
            statistics.merge(part) { FeatureStatistics(count: $0.count + $1.count, documents: $0.documents + $1.documents) }
        }
        let maxDocuments = pruning.maxDocumentFrequency.map { Int(($0 * Double(texts.count)).rounded(.down)) } ?? Int.max
        var kept: [(hash: UInt64, count: Int)] = []
        for (hash, statistic) in statistics where statistic.count >= pruning.minCount && statistic.documents <= maxDocuments {
            kept.append((hash, statistic.count))
        }
        kept.sort { $0.count != $1.count ? $0.count > $1.count : $0.hash < $1.hash }
        if let maxSize = pruning.maxSize, kept.count > maxSize { kept.removeLast(kept.count - maxSize) }
        guard !kept.isEmpty else {
            throw MLKitError(.invalidDataset, "vocabulary pruning (min count \(pruning.minCount)) left no features")
        }
        let keptHashes = kept.map(\.hash)
        let terms = recoveringTerms ? hasher.recoverKeys(of: keptHashes, from: texts, threads: threadCount) : nil
        return Vocabulary(terms: terms, hashes: keptHashes)
    }

    /// Finds the key string of each hash by walking the texts with the reference path, each
    /// thread over its own contiguous share; a key found by several threads is the same string.
    private func recoverKeys(of hashes: [UInt64], from texts: [String], threads: Int) -> [String] {
        let wanted = Set(hashes)
        let parts = Parallel.map(texts.count, threads: threads) { rows in
            var missing = wanted
            var keys: [UInt64: String] = [:]
            for row in rows where !missing.isEmpty {
                for key in featureKeys(for: texts[row]) {
                    let hash = FeatureHash.of(key)
                    if missing.remove(hash) != nil { keys[hash] = key }
                }
            }
            return keys
        }
        return hashes.map { hash in parts.lazy.compactMap { $0[hash] }.first ?? "" }
    }

    /// The smoothed inverse document frequency of each index: `ln((1 + n) / (1 + df)) + 1`,
    /// as scikit-learn computes it, so that features in every document keep a weight of 1.
    func learnInverseDocumentFrequency(_ texts: [String], threads: Int) -> [Float] {
        let counts = Featurizer(configuration: configuration.counting, vocabulary: vocabulary, inverseDocumentFrequency: nil)
            .matrix(for: texts, threads: threads)
        return Self.inverseDocumentFrequency(of: counts)
    }

    /// The smoothed inverse document frequency of each column of a matrix of counts.
    static func inverseDocumentFrequency(of counts: SparseMatrix) -> [Float] {
        var documentFrequency = [Int32](repeating: 0, count: counts.columns)
        counts.forEachRow(in: 0..<counts.rows) { _, indices, _ in
            for index in indices { documentFrequency[Int(index)] += 1 }
        }
        let documents = Double(counts.rows)
        return documentFrequency.map { Float(log((1 + documents) / (1 + Double($0))) + 1) }
    }

    /// The same tokenizer, n-grams and vocabulary with another weighting, whose inverse
    /// document frequencies (for TF-IDF) come from `trainingCounts`, the plain counts of the
    /// training texts. Saves featurizing the texts again for each weighting.
    func reweighted(as configuration: FeaturizerConfiguration, trainingCounts: SparseMatrix) -> Featurizer {
        precondition(configuration.counting == self.configuration.counting)
        let idf = configuration.weighting == .tfidf ? Self.inverseDocumentFrequency(of: trainingCounts) : nil
        return Featurizer(configuration: configuration, vocabulary: vocabulary, inverseDocumentFrequency: idf)
    }

    /// This featurizer's weighting applied to every row of a matrix of plain counts: the same
    /// values as featurizing the texts with it.
    func weighting(_ counts: SparseMatrix) -> SparseMatrix {
        counts.mappingRows { indices, values in applyWeighting(indices: indices, values: values) }
    }
}

extension FeaturizerConfiguration {
    /// The same features with plain counts: no TF-IDF, no sublinear TF, no normalization.
    var counting: FeaturizerConfiguration {
        var configuration = self
        configuration.weighting = .counts
        configuration.sublinearTF = false
        configuration.l2Normalize = false
        return configuration
    }
}

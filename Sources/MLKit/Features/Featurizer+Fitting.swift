import Foundation

extension Featurizer {
    /// How often each feature occurs in the training texts, and in how many of them: an
    /// open-addressing table keyed by the feature hash (already well mixed, being FNV-1a), at most
    /// half full. A document is counted once per feature by remembering the last row that
    /// counted it, so a document's hashes need no sorting.
    fileprivate struct FeatureStatistics {
        /// One feature's entry; `row` is -1 in an empty slot.
        struct Entry {
            var hash: UInt64 = 0
            var count: Int32 = 0
            var documents: Int32 = 0
            var row: Int32 = -1
        }

        private(set) var entries = [Entry](repeating: Entry(), count: 1 << 12)
        private(set) var used = 0

        /// Counts one occurrence of `hash` in document `row`.
        mutating func add(_ hash: UInt64, row: Int32) {
            let slot = find(hash)
            if entries[slot].row == -1 {
                insert(Entry(hash: hash, count: 1, documents: 1, row: row), at: slot)
            } else {
                entries[slot].count += 1
                if entries[slot].row != row {
                    entries[slot].documents += 1
                    entries[slot].row = row
                }
            }
        }

        /// Adds the counts of `other`, which counted other rows.
        mutating func merge(_ other: FeatureStatistics) {
            for entry in other.entries where entry.row != -1 {
                let slot = find(entry.hash)
                if entries[slot].row == -1 {
                    insert(entry, at: slot)
                } else {
                    entries[slot].count += entry.count
                    entries[slot].documents += entry.documents
                }
            }
        }

        /// Fills the empty `slot`, growing the table past half full.
        private mutating func insert(_ entry: Entry, at slot: Int) {
            entries[slot] = entry
            used += 1
            if used * 2 > entries.count { grow() }
        }

        /// The slot of `hash`, or the empty slot where it would go.
        private func find(_ hash: UInt64) -> Int {
            let mask = entries.count - 1
            var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
            while entries[slot].row != -1 && entries[slot].hash != hash { slot = (slot + 1) & mask }
            return slot
        }

        /// Doubles the table and places every entry again.
        private mutating func grow() {
            let old = entries
            entries = [Entry](repeating: Entry(), count: old.count * 2)
            for entry in old where entry.row != -1 { entries[find(entry.hash)] = entry }
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
            var statistics = FeatureStatistics()
            var scratch = FeatureScratch()
            for row in rows {
                Tokenizer.withUTF8(texts[row]) { bytes in
                    hasher.forEachFeatureHash(in: bytes, scratch: &scratch) { statistics.add($0, row: Int32(row)) }
                }
            }
            return statistics
        }
        var statistics = parts[0]
        for part in parts.dropFirst() { statistics.merge(part) }
        let maxDocuments = pruning.maxDocumentFrequency.map { Int(($0 * Double(texts.count)).rounded(.down)) } ?? Int.max
        var kept: [(hash: UInt64, count: Int)] = []
        for entry in statistics.entries where entry.row != -1 && Int(entry.count) >= pruning.minCount
            && Int(entry.documents) <= maxDocuments {
            kept.append((entry.hash, Int(entry.count)))
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

import Foundation

extension Featurizer {
    /// How often each feature occurs in the training texts, in how many of them, and the first
    /// of them: one entry per feature, sorted by hash.
    ///
    /// A text's feature hashes are gathered, then counted into an open-addressing table keyed
    /// by hash: all their home slots are prefetched first, so that the misses of a table larger
    /// than the cache overlap, and each slot keeps the last row that had the feature, to count
    /// documents. When the table would pass its largest size, and at the end, its entries are
    /// sorted by hash (a stable radix sort over the distinct features, not over every
    /// occurrence) and merged into ``entries``.
    struct FeatureStatistics: Sendable {
        /// One feature's figures.
        struct Entry {
            var hash: UInt64
            var count: Int32
            var documents: Int32
            /// The first row that has it, where its key is recovered from.
            var first: Int32
        }

        /// A slot of the counting table: empty while its entry's `count` is 0.
        private struct Slot {
            var entry: Entry
            /// The last row counted: a row's later occurrences add to `count` only.
            var last: Int32

            static let empty = Slot(entry: Entry(hash: 0, count: 0, documents: 0, first: 0), last: 0)
        }

        /// The features, sorted by hash.
        private(set) var entries: [Entry] = []
        /// The number of texts counted.
        fileprivate(set) var texts = 0

        /// The hashes of the row being added, counted into `table` when it ends.
        private var pending: [UInt64] = []
        private var pendingRow: Int32 = 0
        /// The features counted since the last flush: a power of two of slots, at most half full.
        private var table: [Slot] = []
        private var used = 0
        /// The most slots the table grows to (24 bytes each) before it is flushed into `entries`.
        private let maximumCapacity: Int

        /// - Parameter maximumCapacity: The largest counting table, in slots (a power of two):
        ///   2^20 slots take 24 MB, and hold half a million features between flushes.
        init(maximumCapacity: Int = 1 << 20) {
            precondition(maximumCapacity >= 16 && maximumCapacity & (maximumCapacity - 1) == 0)
            self.maximumCapacity = maximumCapacity
        }

        /// Adds one occurrence of `hash` in `row`. Rows must come in increasing order, each
        /// ended by ``endRow()``.
        @inline(__always)
        mutating func add(_ hash: UInt64, row: Int32) {
            pending.append(hash)
            pendingRow = row
        }

        /// Counts the row's occurrences into the table.
        mutating func endRow() {
            let count = pending.count
            guard count > 0 else { return }
            if 2 * (used + count) > table.count { makeRoom(for: count) }
            let row = pendingRow
            var used = self.used
            let bits = table.count.trailingZeroBitCount
            table.withUnsafeMutableBufferPointer { table in
                let slots = table.baseAddress!
                let mask = table.count - 1
                pending.withUnsafeBufferPointer { hashes in
                    for hash in hashes { prefetchForReading(slots + FibonacciHashing.slot(of: hash, bits: bits)) }
                    for hash in hashes {
                        var slot = FibonacciHashing.slot(of: hash, bits: bits)
                        while true {
                            if slots[slot].entry.count == 0 {
                                slots[slot] = Slot(entry: Entry(hash: hash, count: 1, documents: 1, first: row), last: row)
                                used += 1
                                break
                            }
                            if slots[slot].entry.hash == hash {
                                slots[slot].entry.count += 1
                                if slots[slot].last != row {
                                    slots[slot].last = row
                                    slots[slot].entry.documents += 1
                                }
                                break
                            }
                            slot = (slot + 1) & mask
                        }
                    }
                }
            }
            self.used = used
            pending.removeAll(keepingCapacity: true)
        }

        /// Grows the table, or flushes it once it is as large as allowed, so that `count` more
        /// features fit in it at most half full.
        private mutating func makeRoom(for count: Int) {
            var capacity = max(table.count, min(1 << 12, maximumCapacity))
            while 2 * (used + count) > capacity && capacity < maximumCapacity { capacity *= 2 }
            if 2 * (used + count) > capacity {
                // Full at its largest size: count it out, and start again empty.
                flushTable(keepingCapacity: true)
                while 2 * count > capacity { capacity *= 2 }  // one row with more features than that
            }
            guard capacity > table.count else { return }
            let old = table
            table = [Slot](repeating: .empty, count: capacity)
            let bits = capacity.trailingZeroBitCount
            let mask = capacity - 1
            table.withUnsafeMutableBufferPointer { table in
                for slot in old where slot.entry.count > 0 {
                    var position = FibonacciHashing.slot(of: slot.entry.hash, bits: bits)
                    while table[position].entry.count != 0 { position = (position + 1) & mask }
                    table[position] = slot
                }
            }
        }

        /// Moves the table's features into `entries`, sorted by hash.
        private mutating func flushTable(keepingCapacity: Bool) {
            guard used > 0 else { return }
            var counted: [Entry] = []
            counted.reserveCapacity(used)
            for slot in table where slot.entry.count > 0 { counted.append(slot.entry) }
            var scratch = counted
            counted.withUnsafeMutableBufferPointer { counted in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    Sorting.sortStably(counted, scratch: scratch) { $0.hash }
                }
            }
            if keepingCapacity {
                table.withUnsafeMutableBufferPointer { $0.update(repeating: .empty) }
            } else {
                table = []
            }
            used = 0
            entries = entries.isEmpty ? counted : Self.merge(entries, counted)
        }

        /// Counts everything added into `entries`, and frees the table.
        mutating func flush() {
            endRow()
            flushTable(keepingCapacity: false)
            pending = []
        }

        /// Adds the counts of `other`, which counted later rows.
        mutating func merge(_ other: FeatureStatistics) {
            entries = Self.merge(entries, other.entries)
        }

        /// The counts of these texts followed by those of `later`, which counted `rows` other
        /// texts from row 0: what counting all the texts at once would give.
        func appending(_ later: FeatureStatistics, after rows: Int) -> FeatureStatistics {
            var shifted = later
            for index in shifted.entries.indices { shifted.entries[index].first += Int32(rows) }
            var combined = self
            combined.merge(shifted)
            combined.texts = texts + later.texts
            return combined
        }

        /// The union of two sorted lists, adding the figures of a feature in both; `later`
        /// counted later rows.
        private static func merge(_ earlier: [Entry], _ later: [Entry]) -> [Entry] {
            var merged: [Entry] = []
            merged.reserveCapacity(max(earlier.count, later.count))
            var (left, right) = (0, 0)
            while left < earlier.count && right < later.count {
                let (a, b) = (earlier[left], later[right])
                if a.hash < b.hash {
                    merged.append(a)
                    left += 1
                } else if b.hash < a.hash {
                    merged.append(b)
                    right += 1
                } else {
                    merged.append(Entry(hash: a.hash, count: a.count + b.count, documents: a.documents + b.documents,
                                        first: a.first))
                    left += 1
                    right += 1
                }
            }
            merged.append(contentsOf: earlier[left...])
            merged.append(contentsOf: later[right...])
            return merged
        }
    }

    /// Counts every feature of `texts`, on `threads` threads, with the same result on any count.
    static func countFeatures(_ texts: [String], configuration: FeaturizerConfiguration,
                              threads: Int) -> FeatureStatistics {
        let hasher = Featurizer(configuration: configuration, vocabulary: nil, inverseDocumentFrequency: nil)
        let parts = Parallel.map(texts.count, threads: threads == 0 ? Parallel.defaultThreadCount : threads) { rows in
            var statistics = FeatureStatistics()
            var scratch = FeatureScratch()
            for row in rows {
                Tokenizer.withUTF8(texts[row]) { bytes in
                    hasher.forEachFeatureHash(in: bytes, scratch: &scratch) { statistics.add($0, row: Int32(row)) }
                }
                statistics.endRow()
            }
            statistics.flush()
            return statistics
        }
        var statistics = parts[0]
        for part in parts.dropFirst() { statistics.merge(part) }
        statistics.texts = texts.count
        return statistics
    }

    /// The vocabulary of features counted in `texts`: prunes, and keeps the survivors, the most
    /// frequent first (ties broken by hash, so the result never depends on iteration order or
    /// on the thread count).
    static func learnVocabulary(_ texts: [String], counted statistics: FeatureStatistics,
                                configuration: FeaturizerConfiguration,
                                pruning: FeaturizerConfiguration.VocabularyPruning,
                                recoveringTerms: Bool, threads: Int) throws -> Vocabulary {
        precondition(statistics.texts == texts.count, "the statistics must count these texts")
        let hasher = Featurizer(configuration: configuration, vocabulary: nil, inverseDocumentFrequency: nil)
        let threadCount = threads == 0 ? Parallel.defaultThreadCount : threads
        let maxDocuments = pruning.maxDocumentFrequency.map { Int(($0 * Double(texts.count)).rounded(.down)) } ?? Int.max
        var kept = statistics.entries.filter { Int($0.count) >= pruning.minCount && Int($0.documents) <= maxDocuments }
        // By count, most frequent first; the entries are sorted by hash, and the sort is stable.
        var scratch = kept
        kept.withUnsafeMutableBufferPointer { kept in
            scratch.withUnsafeMutableBufferPointer { scratch in
                Sorting.sortStably(kept, scratch: scratch) { UInt64(UInt32(Int32.max - $0.count)) }
            }
        }
        if let maxSize = pruning.maxSize, kept.count > maxSize { kept.removeLast(kept.count - maxSize) }
        guard !kept.isEmpty else {
            throw MLKitError(.invalidDataset, "vocabulary pruning (min count \(pruning.minCount)) left no features")
        }
        let keptHashes = kept.map(\.hash)
        let terms = recoveringTerms
            ? hasher.recoverKeys(of: keptHashes, firstRows: kept.map(\.first), from: texts, threads: threadCount) : nil
        return Vocabulary(terms: terms, hashes: keptHashes)
    }

    /// Finds the key of each hash in the text where counting first met it (`firstRows`): only
    /// those texts are walked, each key is built once, and the result depends neither on the
    /// thread count nor on which thread finds what.
    private func recoverKeys(of hashes: [UInt64], firstRows: [Int32], from texts: [String], threads: Int) -> PackedStrings {
        // The features first met in `row` are wanted[rowStarts[row]..<rowStarts[row + 1]].
        let (rowStarts, wanted) = { () -> ([Int], [(hash: UInt64, index: Int32)]) in
            var rowStarts = [Int](repeating: 0, count: texts.count + 1)
            for row in firstRows { rowStarts[Int(row) + 1] += 1 }
            for row in texts.indices { rowStarts[row + 1] += rowStarts[row] }
            var wanted = [(hash: UInt64, index: Int32)](repeating: (0, 0), count: hashes.count)
            var next = rowStarts
            for (index, row) in firstRows.enumerated() {
                wanted[next[Int(row)]] = (hashes[index], Int32(index))
                next[Int(row)] += 1
            }
            return (rowStarts, wanted)
        }()
        // Rows are dealt out in turn: the early rows hold most first occurrences, so contiguous
        // shares would leave one thread with most of the work.
        let threads = max(1, min(threads, texts.count))
        let parts = Parallel.map(threads, threads: threads) { shares in
            let rows = shares.flatMap { stride(from: $0, to: texts.count, by: threads) }
            // The keys found, one after another, and which of them is which.
            var keys: [UInt8] = []
            var found: [(index: Int32, range: Range<Int>)] = []
            var scratch = FeatureKeyScratch()
            // The row's wanted features in a small open-addressing table, at most a quarter
            // full, so that most keys, not wanted, are turned away by one empty slot.
            var table: [(hash: UInt64, index: Int32)] = []
            for row in rows where rowStarts[row] < rowStarts[row + 1] {
                let count = rowStarts[row + 1] - rowStarts[row]
                var capacity = 16
                while capacity < 4 * count { capacity *= 2 }
                let mask = capacity - 1
                table.removeAll(keepingCapacity: true)
                table.append(contentsOf: repeatElement((hash: UInt64(0), index: Int32(-1)), count: capacity))
                for feature in wanted[rowStarts[row]..<rowStarts[row + 1]] {
                    var slot = Int(truncatingIfNeeded: feature.hash) & mask
                    while table[slot].index >= 0 { slot = (slot + 1) & mask }
                    table[slot] = feature
                }
                var remaining = count
                Tokenizer.withUTF8(texts[row]) { bytes in
                    forEachFeatureKey(in: bytes, scratch: &scratch) { hash, key in
                        var slot = Int(truncatingIfNeeded: hash) & mask
                        while table[slot].index >= 0 {
                            if table[slot].hash == hash {
                                found.append((table[slot].index, keys.count..<(keys.count + key.count)))
                                keys.append(contentsOf: key)
                                table[slot].hash = ~hash  // found: never again
                                remaining -= 1
                                return remaining > 0
                            }
                            slot = (slot + 1) & mask
                        }
                        return true
                    }
                }
            }
            return (keys, found)
        }
        return PackedStrings(count: hashes.count, pieces: parts)
    }

    /// A counting featurizer for `configuration`, which prunes the vocabulary of this counting
    /// featurizer harder, learned from the same statistics of the same `texts`; or `nil` unless
    /// its vocabulary is the first features of this one's. Pruning by count keeps a prefix,
    /// because a vocabulary is ordered by count. Then the counts of a text under it are this
    /// one's without the later columns (``SparseMatrix/keepingColumns(below:)``), and no text
    /// needs featurizing again.
    func narrowed(to configuration: FeaturizerConfiguration, texts: [String], counted statistics: FeatureStatistics,
                  threads: Int) throws -> Featurizer? {
        guard let vocabulary, self.configuration == self.configuration.counting,
              configuration == configuration.counting, configuration.unpruned == self.configuration.unpruned
        else { return nil }
        let narrow = try Featurizer(fitting: texts, configuration: configuration, recoveringTerms: false,
                                    threads: threads, counted: statistics)
        guard let kept = narrow.vocabulary, kept.count <= vocabulary.count,
              kept.hashes[...] == vocabulary.hashes.prefix(kept.count) else { return nil }
        return narrow
    }

    /// The plain counts of `texts` under this counting featurizer, when those of their first
    /// rows are known under `source`, a counting featurizer with the same tokenizer and n-grams
    /// whose vocabulary keeps every feature (or which hashes, as this one does): `counted`. Their
    /// columns are renamed through the features' hashes, and only the other texts are
    /// featurized. The result is what ``matrix(for:threads:)`` gives, or `nil` when `source` does
    /// not qualify.
    func matrix(for texts: [String], reusing counted: consuming SparseMatrix, countedBy source: Featurizer,
                threads: Int) -> SparseMatrix? {
        guard configuration == configuration.counting, source.configuration == configuration.unpruned,
              counted.rows <= texts.count, counted.columns == source.dimension else { return nil }
        let countedRows = counted.rows
        var matrix: SparseMatrix
        switch (vocabulary, source.vocabulary) {
        case (nil, nil):
            matrix = counted
        case (let vocabulary?, let sourceVocabulary?):
            matrix = counted.renamingColumns(sourceVocabulary.columns(in: vocabulary), columns: dimension, threads: threads)
        default:
            return nil
        }
        matrix.appendRows(of: self.matrix(for: Array(texts[countedRows...]), threads: threads))
        return matrix
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

    /// The same configuration with a vocabulary that keeps every feature: the feature counts
    /// of a text do not depend on the pruning, so counts taken for one serve the other.
    var unpruned: FeaturizerConfiguration {
        guard case .vocabulary = indexing else { return self }
        var configuration = self
        configuration.indexing = .vocabulary(.init())
        return configuration
    }
}

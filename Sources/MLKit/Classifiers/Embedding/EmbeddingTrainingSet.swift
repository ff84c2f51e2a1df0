/// A ``TrainingProblem`` rewritten for embedding training: feature indices replaced by
/// compact embedding rows, values replaced by the weights of the mean.
///
/// The features kept are those that occur in at least `minCount` training documents; they are
/// numbered `0..<n` in increasing order of feature index, so that ``featureIDs`` is sorted and
/// becomes the model's row list. Document `j` keeps its entries `i` with a kept feature and
/// `v_i > 0`, and its weights are `w_i = v_i / Σ_{kept} v` (so `h_j = Σ_i w_i E[r_i, :]` is
/// the mean of the model's definition). A document with no kept feature has no entries and
/// `h = 0`.
struct EmbeddingTrainingSet: Sendable {
    /// The feature index of each row, strictly increasing.
    let featureIDs: [Int32]
    /// The number of training documents that contain each row's feature.
    let documentFrequencies: [Int32]
    /// Where each document's entries start in ``rows`` and ``weights``, plus the end.
    let entryStarts: [Int]
    /// The embedding row of each entry.
    let rows: [Int32]
    /// The weight `w_i` of each entry; a document's weights sum to 1.
    let weights: [Float]
    /// The class of each document.
    let labels: [Int32]
    /// The loss weight of each document: the weight of its class.
    let exampleWeights: [Float]
    /// The number of classes.
    let classCount: Int
    /// The featurizer's dimension (the problem's column count).
    let buckets: Int

    /// The number of documents.
    var count: Int { labels.count }

    /// Compacts `problem`, keeping features that occur in at least `minCount` documents.
    /// - Complexity: O(nnz log nnz), for sorting the feature indices once.
    init(problem: TrainingProblem, minCount: Int) {
        let matrix = problem.matrix
        // Document frequencies: each row's indices are distinct, so the run length of an
        // index in the sorted list of all entries is the number of documents that contain it.
        var sorted = matrix.indices
        sorted.withUnsafeMutableBufferPointer { Sorting.sortInPlace($0) }
        var featureIDs: [Int32] = []
        var frequencies: [Int32] = []
        var position = 0
        while position < sorted.count {
            let feature = sorted[position]
            var next = position + 1
            while next < sorted.count && sorted[next] == feature { next += 1 }
            if next - position >= minCount {
                featureIDs.append(feature)
                frequencies.append(Int32(next - position))
            }
            position = next
        }

        var entryStarts = [0]
        var rows: [Int32] = []
        var weights: [Float] = []
        entryStarts.reserveCapacity(matrix.rows + 1)
        rows.reserveCapacity(matrix.nonzeros)
        weights.reserveCapacity(matrix.nonzeros)
        EmbeddingRowTable(features: featureIDs).withLookup { lookup in
            matrix.forEachRow(in: 0..<matrix.rows) { _, indices, values in
                let start = rows.count
                var total: Float = 0
                for entry in 0..<indices.count {
                    let row = lookup(indices[entry])
                    let value = values[entry]
                    guard row >= 0, value > 0 else { continue }
                    rows.append(row)
                    weights.append(value)
                    total += value
                }
                if total > 0 {
                    let inverse = 1 / total
                    for entry in start..<rows.count { weights[entry] *= inverse }
                }
                entryStarts.append(rows.count)
            }
        }
        self.featureIDs = featureIDs
        self.documentFrequencies = frequencies
        self.entryStarts = entryStarts
        self.rows = rows
        self.weights = weights
        self.labels = problem.labels
        self.exampleWeights = problem.labels.map { problem.classWeights[Int($0)] }
        self.classCount = problem.classCount
        self.buckets = matrix.columns
    }

    /// Splits the rows into `parts` contiguous ranges that receive about the same number of
    /// updates (documents containing them), one per training thread.
    func rowRanges(parts: Int) -> [Range<Int32>] {
        let parts = max(1, min(parts, featureIDs.count))
        let total = documentFrequencies.reduce(0) { $0 + Int($1) }
        var ranges: [Range<Int32>] = []
        var start = 0
        var accumulated = 0
        var row = 0
        for part in 1..<parts {
            let target = total * part / parts
            while row < featureIDs.count && accumulated < target {
                accumulated += Int(documentFrequencies[row])
                row += 1
            }
            ranges.append(Int32(start)..<Int32(row))
            start = row
        }
        ranges.append(Int32(start)..<Int32(featureIDs.count))
        return ranges
    }
}

import Foundation

/// A trained linear classifier: `score = x · W + b`, then a mapping from scores to
/// probabilities.
///
/// Weights are feature-major (`weights[feature * classes + class]`), as in LIBLINEAR, so a
/// sparse document touches one contiguous row of `classes` floats per non-zero feature. A model
/// read from a file that stores only its non-zero rows may keep only those (``storedRows``):
/// its memory then follows the file, however many features its featurizer has.
struct LinearModel: Sendable, Equatable {
    /// How scores become probabilities.
    enum ProbabilityMapping: Sendable, Equatable, Codable {
        /// `softmax(score / temperature)`: maximum entropy and naive Bayes (temperature 1),
        /// or a temperature fitted on validation data.
        case softmax(temperature: Float)
        /// One-vs-rest Platt scaling: `p_c ∝ 1 / (1 + exp(a_c · score_c + b_c))`, normalized
        /// to sum to 1 (linear SVM).
        case platt(a: [Float], b: [Float])

        /// Turns the scores in `values` into values in the order of the probabilities, in place.
        func order(fromScores values: UnsafeMutableBufferPointer<Float>) {
            // Softmax increases with the score. Platt's p_c ∝ 1 / (1 + exp(a_c·s_c + b_c)) decreases
            // with a_c·s_c + b_c, and the normalization divides every class by the same total.
            guard case .platt(let a, let b) = self else { return }
            for lane in values.indices { values[lane] = -(a[lane] * values[lane] + b[lane]) }
        }
    }

    /// The number of feature rows.
    let features: Int
    /// The number of classes.
    let classes: Int
    /// `features × classes` weights, feature-major; or, when ``storedRows`` is set, the rows of
    /// those features only, in their order. A model read from a file uses the file's bytes in
    /// place (``FlatArray``).
    let weights: FlatArray<Float>
    /// The features whose rows ``weights`` holds, increasing, when it holds only those; every
    /// other row is zero. `nil` when ``weights`` holds every row.
    let storedRows: [Int32]?
    /// For a model with ``storedRows``, when it was asked for: the position in ``storedRows`` of
    /// each feature's row. A feature's row is then one lookup away, at 4 bytes a feature rather
    /// than the `4 × classes` of the expanded matrix; without it, a binary search in
    /// ``storedRows``.
    let rowPositions: RowPositions?
    /// One bias per class.
    let bias: [Float]
    /// How scores become probabilities.
    let probability: ProbabilityMapping

    init(features: Int, classes: Int, weights: [Float], bias: [Float], probability: ProbabilityMapping) {
        self.init(features: features, classes: classes, weights: FlatArray(weights), bias: bias, probability: probability)
    }

    init(features: Int, classes: Int, weights: FlatArray<Float>, bias: [Float], probability: ProbabilityMapping) {
        precondition(weights.count == features * classes && bias.count == classes)
        self.features = features
        self.classes = classes
        self.weights = weights
        self.storedRows = nil
        self.rowPositions = nil
        self.bias = bias
        self.probability = probability
    }

    /// A model that holds only the rows of `rows`, increasing and below `features`: every other
    /// row is zero.
    /// - Parameter indexed: Whether to build ``rowPositions``: `features` 32-bit entries, in one
    ///   pass over `rows`.
    init(features: Int, classes: Int, rows: [Int32], weights: FlatArray<Float>, bias: [Float],
         probability: ProbabilityMapping, indexed: Bool = false) {
        precondition(weights.count == rows.count * classes && bias.count == classes)
        self.features = features
        self.classes = classes
        self.weights = weights
        self.storedRows = rows
        self.rowPositions = indexed ? RowPositions(features: features, rows: rows) : nil
        self.bias = bias
        self.probability = probability
    }

    /// ``init(features:classes:rows:weights:bias:probability:indexed:)`` with the rows' weights
    /// in an array.
    init(features: Int, classes: Int, rows: [Int32], weights: [Float], bias: [Float], probability: ProbabilityMapping) {
        self.init(features: features, classes: classes, rows: rows, weights: FlatArray(weights), bias: bias,
                  probability: probability)
    }

    /// All `features × classes` weights, feature-major: ``weights`` itself, or the stored rows
    /// expanded with zero rows between them.
    var denseWeights: [Float] {
        guard let storedRows else { return weights.array }
        var dense = [Float](repeating: 0, count: features * classes)
        for (position, row) in storedRows.enumerated() {
            let target = Int(row) * classes
            dense.replaceSubrange(target..<(target + classes), with: weights[(position * classes)..<((position + 1) * classes)])
        }
        return dense
    }

    /// Writes the `classes` scores of a sparse row into `scores`.
    /// - Parameter prefetching: Whether to fetch the rows first when the matrix is large; `false`
    ///   when the featurizer has fetched them (``withWeightRows(_:)``).
    func scores(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                into scores: UnsafeMutableBufferPointer<Float>, prefetching: Bool = true) {
        guard let output = scores.baseAddress else { return }
        for lane in 0..<classes { output[lane] = bias[lane] }
        if let storedRows {
            storedScores(rows: storedRows, indices: indices, values: values, into: output)
            return
        }
        weights.withUnsafeBufferPointer { weights in
            if prefetching && weights.count >= Self.prefetchThreshold {
                SparseKernels.prefetchRows(indices: indices, weights: weights.baseAddress!, classes: classes)
            }
            SparseKernels.accumulateRows(indices: indices, values: values, weights: weights.baseAddress!,
                                         classes: classes, into: output)
        }
    }

    /// Adds the stored rows of the features of a sparse row onto `output`: each feature's row is
    /// found in ``rowPositions``, or by binary search in `rows` without it, and a feature without
    /// one (a zero row) is skipped.
    private func storedScores(rows: [Int32], indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                              into output: UnsafeMutablePointer<Float>) {
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: indices.count) { positions in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: indices.count) { kept in
                var count = 0
                func keep(_ position: Int32, _ value: Float) {
                    positions[count] = position
                    kept[count] = value
                    count += 1
                }
                if let rowPositions {
                    rowPositions.withLookup { position in
                        for (index, value) in zip(indices, values) {
                            if let row = position(index) { keep(row, value) }
                        }
                    }
                } else {
                    rows.withUnsafeBufferPointer { rows in
                        for (index, value) in zip(indices, values) {
                            var low = 0, high = rows.count
                            while low < high {
                                let middle = (low + high) / 2
                                if rows[middle] < index { low = middle + 1 } else { high = middle }
                            }
                            if low < rows.count, rows[low] == index { keep(Int32(low), value) }
                        }
                    }
                }
                guard count > 0 else { return }
                weights.withUnsafeBufferPointer { weights in
                    SparseKernels.accumulateRows(indices: UnsafeBufferPointer(rebasing: positions[0..<count]),
                                                 values: UnsafeBufferPointer(rebasing: kept[0..<count]),
                                                 weights: weights.baseAddress!, classes: classes, into: output)
                }
            }
        }
    }

    /// Calls `body` with the weight rows when the matrix holds every row and is large enough for
    /// their prefetching to pay (``prefetchThreshold``), else with `nil`.
    func withWeightRows<R>(_ body: (WeightRows?) -> R) -> R {
        guard storedRows == nil, weights.count >= Self.prefetchThreshold else { return body(nil) }
        return weights.withUnsafeBufferPointer { body(WeightRows(weights: $0.baseAddress!, classes: classes)) }
    }

    /// The number of weights (4 MB of them) from which a document's rows are prefetched before
    /// they are added: below it the matrix mostly sits in the cache.
    static let prefetchThreshold = 1 << 20

    /// Turns the scores in `values` into values in the order of the probabilities, in place,
    /// without computing them: what a label or a ranking needs.
    func order(fromScores values: UnsafeMutableBufferPointer<Float>) {
        probability.order(fromScores: values)
    }

    /// Turns the scores in `values` into probabilities, in place.
    func probabilities(fromScores values: UnsafeMutableBufferPointer<Float>) {
        switch probability {
        case .softmax(let temperature):
            var largest = -Float.infinity
            for score in values { largest = max(largest, score) }
            var total: Float = 0
            for lane in values.indices {
                values[lane] = expf((values[lane] - largest) / temperature)
                total += values[lane]
            }
            for lane in values.indices { values[lane] /= total }
        case .platt(let a, let b):
            var total: Float = 0
            for lane in values.indices {
                values[lane] = 1 / (1 + expf(a[lane] * values[lane] + b[lane]))
                total += values[lane]
            }
            for lane in values.indices { values[lane] = total > 0 ? values[lane] / total : 1 / Float(values.count) }
        }
    }
}

/// The position among a model's stored rows of each feature's row: one 32-bit entry a feature,
/// the position plus 1, or 0 for a feature without a stored row.
///
/// `Data(count:)` allocates the table zeroed (`calloc`), and only the entries of stored rows are
/// written. The pages of a large allocation become resident when first written, so a table
/// whose features have few stored rows takes a few pages: a small file that claims millions of
/// features does not take the whole table.
struct RowPositions: Sendable, Equatable {
    private var table: Data

    /// The table of `rows`, increasing and below `features` (< 2^31).
    init(features: Int, rows: [Int32]) {
        table = Data(count: features * MemoryLayout<Int32>.stride)
        table.withUnsafeMutableBytes { bytes in
            let entries = bytes.bindMemory(to: Int32.self)
            for (position, row) in rows.enumerated() { entries[Int(row)] = Int32(position + 1) }
        }
    }

    /// The number of features.
    var count: Int { table.count / MemoryLayout<Int32>.stride }

    /// Calls `body` with a function from a feature (below ``count``) to the position of its
    /// stored row, or `nil` when it has none.
    func withLookup<R>(_ body: ((Int32) -> Int32?) -> R) -> R {
        table.withUnsafeBytes { bytes in
            let entries = bytes.bindMemory(to: Int32.self)
            return body { feature in
                let entry = entries[Int(feature)]
                return entry == 0 ? nil : entry - 1
            }
        }
    }
}

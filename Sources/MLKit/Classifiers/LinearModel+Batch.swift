/// Scoring many rows at once: what calibration, validation and tests need.
extension LinearModel {
    /// The scores `x·W + b` of every row of `matrix`, row-major (`rows × classes`).
    /// - Parameters:
    ///   - matrix: Rows with this model's ``features`` columns.
    ///   - threads: Worker threads (0: all cores). The result does not depend on it.
    func scores(for matrix: SparseMatrix, threads: Int = 1) -> [Float] {
        precondition(matrix.columns == features, "the matrix must have the model's feature columns")
        let model = self
        let output = SharedBuffer<Float>(count: matrix.rows * classes, repeating: 0)
        _ = Parallel.balancedMap(matrix.rows, threads: threads) { rows in
            matrix.forEachRow(in: rows) { row, indices, values in
                model.scores(indices: indices, values: values,
                             into: UnsafeMutableBufferPointer(start: output.base + row * model.classes, count: model.classes))
            }
        }
        return output.array
    }

    /// The highest-scoring class of every row (the first one on ties).
    func predictions(for matrix: SparseMatrix, threads: Int = 1) -> [Int32] {
        let scores = scores(for: matrix, threads: threads)
        return (0..<matrix.rows).map { row in Self.argmax(scores[(row * classes)..<((row + 1) * classes)]) }
    }

    /// The fraction of rows of `problem` whose predicted class is their label.
    func accuracy(on problem: TrainingProblem, threads: Int = 1) -> Double {
        guard problem.labels.count > 0 else { return 0 }
        let predicted = predictions(for: problem.matrix, threads: threads)
        return Double(zip(predicted, problem.labels).filter { $0 == $1 }.count) / Double(problem.labels.count)
    }

    /// The probabilities of every row, row-major (`rows × classes`).
    func probabilities(for matrix: SparseMatrix, threads: Int = 1) -> [Float] {
        var values = scores(for: matrix, threads: threads)
        values.withUnsafeMutableBufferPointer { all in
            for row in 0..<matrix.rows {
                probabilities(fromScores: UnsafeMutableBufferPointer(rebasing: all[(row * classes)..<((row + 1) * classes)]))
            }
        }
        return values
    }

    /// The index of the largest element (the first on ties), relative to the slice's start.
    static func argmax(_ scores: ArraySlice<Float>) -> Int32 {
        var best = scores.startIndex
        for index in scores.indices where scores[index] > scores[best] { best = index }
        return Int32(best - scores.startIndex)
    }
}

import Foundation

/// The L2-regularized multinomial logistic loss of a training problem, with its gradient:
///
///     f(W, b) = ½‖W‖²_F + C Σᵢ w_{yᵢ} · (logsumexp(zᵢ) − zᵢ,yᵢ),    zᵢ = xᵢ W + b
///     ∇_W f   = W + Xᵀ R,    ∇_b f = Σᵢ Rᵢ,    Rᵢ,c = C w_{yᵢ} (softmax(zᵢ)_c − [c = yᵢ])
///
/// (scikit-learn's parameterization: `C` multiplies the summed losses; the bias is not
/// regularized). The parameter vector is `W` feature-major (`features × classes`) followed by
/// `b` (`classes`).
///
/// The evaluation makes two parallel passes. The row pass computes each document's scores,
/// loss and residual row `Rᵢ` into shared buffers; rows are independent. The feature pass
/// computes each feature's gradient row `W_f + Σ_{i ∋ f} x_if Rᵢ` from the column-major copy of
/// `X`, summing the documents in order; features are independent too. The few remaining sums
/// (losses, `Σ Rᵢ`, `‖W‖²` from per-feature parts) run serially in a fixed order. So the value
/// and the gradient are bit-for-bit the same on any number of threads, and no per-thread
/// `features × classes` gradient buffer is ever allocated.
struct SoftmaxLoss: Sendable {
    let matrix: SparseMatrix
    let columns: SparseColumns
    let labels: [Int32]
    /// `C · w_{yᵢ}` per row.
    let rowCosts: [Float]
    let classes: Int
    let threads: Int
    /// Column ranges of about equal work, one per thread.
    private let featureRanges: [Range<Int>]
    /// `rows × classes` residuals `R`, then scratch scores.
    private let residuals: SharedBuffer<Float>
    /// Per-row losses and per-feature `‖W_f‖²`.
    private let rowLosses: SharedBuffer<Double>
    private let featureSquares: SharedBuffer<Double>

    /// The loss of `problem` (whose matrix should already be compacted) with inverse
    /// regularization `c`, evaluated on `threads` threads.
    init(problem: TrainingProblem, c: Double, threads: Int) {
        matrix = problem.matrix
        columns = SparseColumns(transposing: problem.matrix)
        labels = problem.labels
        rowCosts = problem.labels.map { Float(c) * problem.classWeights[Int($0)] }
        classes = problem.classCount
        self.threads = threads
        featureRanges = columns.balancedRanges(parts: threads)
        residuals = SharedBuffer(count: problem.matrix.rows * problem.classCount, repeating: 0)
        rowLosses = SharedBuffer(count: problem.matrix.rows, repeating: 0)
        featureSquares = SharedBuffer(count: problem.matrix.columns, repeating: 0)
    }

    /// The number of parameters: `features × classes + classes`.
    var parameterCount: Int { (matrix.columns + 1) * classes }

    /// Returns `f(point)` and writes `∇f(point)` into `gradient`.
    func evaluate(_ point: UnsafeBufferPointer<Float>, _ gradient: UnsafeMutableBufferPointer<Float>) -> Double {
        let parameters = SharedPointer(readOnly: point.baseAddress!)
        let output = SharedPointer(gradient.baseAddress!)
        let loss = self
        _ = Parallel.map(matrix.rows, threads: threads) { rows in loss.rowPass(rows, parameters.base) }
        _ = Parallel.map(featureRanges.count, threads: featureRanges.count) { parts in
            for part in parts { loss.featurePass(loss.featureRanges[part], parameters.base, output.base) }
        }
        return serialSums(gradient: output.base)
    }

    /// Scores, loss and residual of each row in `rows`.
    private func rowPass(_ rows: Range<Int>, _ parameters: UnsafeMutablePointer<Float>) {
        let bias = parameters + matrix.columns * classes
        matrix.forEachRow(in: rows) { row, indices, values in
            let scores = residuals.base + row * classes
            scores.update(from: bias, count: classes)
            SparseKernels.accumulateRows(indices: indices, values: values, weights: parameters, classes: classes,
                                         into: scores)
            let label = Int(labels[row])
            var largest = -Float.infinity
            for lane in 0..<classes { largest = max(largest, scores[lane]) }
            let labelScore = scores[label]
            var total: Float = 0
            for lane in 0..<classes {
                scores[lane] = expf(scores[lane] - largest)
                total += scores[lane]
            }
            let cost = rowCosts[row]
            rowLosses.base[row] = Double(cost) * (Double(largest) + log(Double(total)) - Double(labelScore))
            let scale = cost / total
            for lane in 0..<classes { scores[lane] *= scale }
            scores[label] -= cost
        }
    }

    /// The gradient rows `W_f + Σᵢ x_if Rᵢ` and squared norms `‖W_f‖²` of the features in `range`.
    private func featurePass(_ range: Range<Int>, _ parameters: UnsafeMutablePointer<Float>,
                             _ gradient: UnsafeMutablePointer<Float>) {
        columns.rows.withUnsafeBufferPointer { rows in
            columns.values.withUnsafeBufferPointer { values in
                for feature in range {
                    let weights = parameters + feature * classes
                    let target = gradient + feature * classes
                    target.update(from: weights, count: classes)
                    var square = 0.0
                    for lane in 0..<classes { square += Double(weights[lane]) * Double(weights[lane]) }
                    featureSquares.base[feature] = square
                    let entries = columns.columnStarts[feature]..<columns.columnStarts[feature + 1]
                    SparseKernels.accumulateRows(indices: UnsafeBufferPointer(rebasing: rows[entries]),
                                                 values: UnsafeBufferPointer(rebasing: values[entries]),
                                                 weights: residuals.base, classes: classes, into: target)
                }
            }
        }
    }

    /// Adds up the losses, `‖W‖²` and the bias gradient `Σᵢ Rᵢ` in a fixed order.
    private func serialSums(gradient: UnsafeMutablePointer<Float>) -> Double {
        var lossTotal = 0.0
        for row in 0..<matrix.rows { lossTotal += rowLosses.base[row] }
        var squares = 0.0
        for feature in 0..<matrix.columns { squares += featureSquares.base[feature] }
        var biasGradient = [Double](repeating: 0, count: classes)
        for row in 0..<matrix.rows {
            let residual = residuals.base + row * classes
            for lane in 0..<classes { biasGradient[lane] += Double(residual[lane]) }
        }
        let biasTarget = gradient + matrix.columns * classes
        for lane in 0..<classes { biasTarget[lane] = Float(biasGradient[lane]) }
        return 0.5 * squares + lossTotal
    }
}

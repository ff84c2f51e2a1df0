import Foundation

/// The L2-regularized multinomial logistic loss of a training problem, with its gradient and
/// its Hessian-vector products:
///
///     f(W, b) = ½‖W‖²_F + C Σᵢ w_{yᵢ} · (logsumexp(zᵢ) − zᵢ,yᵢ),    zᵢ = xᵢ W + b
///     ∇_W f   = W + Xᵀ R,    ∇_b f = Σᵢ Rᵢ,    Rᵢ,c = C w_{yᵢ} (softmax(zᵢ)_c − [c = yᵢ])
///     ∇²f (V, v) = V + Xᵀ Q (and Σᵢ Qᵢ for the bias),  Qᵢ = C w_{yᵢ} (pᵢ ⊙ uᵢ − pᵢ (pᵢ · uᵢ)),
///                  uᵢ = xᵢ V + v,  pᵢ = softmax(zᵢ)
///
/// (scikit-learn's parameterization: `C` multiplies the summed losses; the bias is not
/// regularized). The parameter vector is `W` feature-major (`features × classes`) followed by
/// `b` (`classes`).
///
/// An evaluation makes two parallel passes. The row pass computes each document's scores,
/// loss and residual row `Rᵢ` into shared buffers; rows are independent. The feature pass
/// computes each feature's gradient row `W_f + Σ_{i ∋ f} x_if Rᵢ` from the column-major copy of
/// `X`, summing the documents in order; features are independent too. The few remaining sums
/// (losses, `Σ Rᵢ`, `‖W‖²` from per-feature parts) run serially in a fixed order. So the value
/// and the gradient are bit-for-bit the same on any number of threads, and no per-thread
/// `features × classes` gradient buffer is ever allocated. A Hessian-vector product has the same
/// two passes, with `Qᵢ` in place of `Rᵢ`, computed from the probabilities `pᵢ` of the last
/// point given to ``evaluate(_:_:)``: the row pass also gives `dᵀ∇²f d`
/// (``hessianCurvature(along:)``), and the feature pass adds a multiple of the product to a
/// vector of the solver's (``addHessianProduct(_:scale:to:)``) instead of storing it.
/// ``value(at:plus:)`` computes `f` alone and leaves the `pᵢ` as they are.
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
    /// `rows × classes` residuals `R` (or `Q`), and scratch scores.
    private let residuals: SharedBuffer<Float>
    /// `rows × classes` probabilities `pᵢ` at the last point given to ``evaluate(_:_:)``.
    private let probabilities: SharedBuffer<Float>
    /// `x_if²`, column after column, for the Hessian's diagonal.
    private let squaredValues: [Float]
    /// Per-row losses and per-feature `‖W_f‖²`, summed in order; for a curvature
    /// (``hessianCurvature(along:)``), per-row `uᵢ · Qᵢ` and per-feature `‖V_f‖²`.
    private let rowLosses: SharedBuffer<Double>
    private let featureSquares: SharedBuffer<Double>

    /// The loss of `problem` (whose matrix should already be compacted) with inverse
    /// regularization `c`, evaluated on `threads` threads.
    init(problem: TrainingProblem, c: Double, threads: Int) {
        matrix = problem.matrix
        columns = SparseColumns(transposing: problem.matrix)
        labels = problem.labels
        squaredValues = columns.values.map { $0 * $0 }
        rowCosts = problem.labels.map { Float(c) * problem.classWeights[Int($0)] }
        classes = problem.classCount
        self.threads = threads
        featureRanges = columns.balancedRanges(parts: threads)
        residuals = SharedBuffer(count: problem.matrix.rows * problem.classCount, repeating: 0)
        probabilities = SharedBuffer(count: problem.matrix.rows * problem.classCount, repeating: 0)
        rowLosses = SharedBuffer(count: problem.matrix.rows, repeating: 0)
        featureSquares = SharedBuffer(count: problem.matrix.columns, repeating: 0)
    }

    /// The number of parameters: `features × classes + classes`.
    var parameterCount: Int { (matrix.columns + 1) * classes }

    /// Returns `f(point)` and writes `∇f(point)` into `gradient`; later Hessian-vector products
    /// are taken at `point`.
    func evaluate(_ point: UnsafeBufferPointer<Float>, _ gradient: UnsafeMutableBufferPointer<Float>) -> Double {
        let parameters = SharedPointer(readOnly: point.baseAddress!)
        let loss = self
        _ = Parallel.map(matrix.rows, threads: threads) { rows in loss.rowPass(rows, parameters.base, keep: true) }
        return featurePasses(parameters, into: gradient.baseAddress!) + lossTotal()
    }

    /// `f(point + step)` (`f(point)` when `step` is `nil`) alone; the point of the Hessian-vector
    /// products stays the same. The sum `point + step` is never stored: the trust-region solver
    /// evaluates its trial points without a vector for them.
    func value(at point: UnsafeBufferPointer<Float>, plus step: UnsafeBufferPointer<Float>?) -> Double {
        let parameters = SharedPointer(readOnly: point.baseAddress!)
        let offset = step.map { SharedPointer(readOnly: $0.baseAddress!) }
        let loss = self
        _ = Parallel.map(matrix.rows, threads: threads) { rows in
            loss.rowPass(rows, parameters.base, plus: offset?.base, keep: false)
        }
        return 0.5 * weightSquare(parameters, plus: offset) + lossTotal()
    }

    /// Hands the diagonal of `∇²f(x)`, `x` the point of the last ``evaluate(_:_:)``, to
    /// `preconditioner`, one feature row at a time: `1 + Σᵢ x_if² Dᵢ,c` for the weights and
    /// `Σᵢ Dᵢ,c` for the bias, with `Dᵢ,c = C w_{yᵢ} pᵢ,c (1 − pᵢ,c)`. One pass like a
    /// Hessian-vector product.
    func hessianDiagonal(into preconditioner: Preconditioner) {
        let loss = self
        _ = Parallel.map(matrix.rows, threads: threads) { rows in
            for row in rows {
                let probability = loss.probabilities.base + row * loss.classes
                let weight = loss.residuals.base + row * loss.classes
                let cost = loss.rowCosts[row]
                for lane in 0..<loss.classes { weight[lane] = cost * probability[lane] * (1 - probability[lane]) }
            }
        }
        _ = Parallel.map(featureRanges.count, threads: featureRanges.count) { parts in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: loss.classes) { row in
                for part in parts {
                    for feature in loss.featureRanges[part] {
                        row.update(repeating: 1)
                        for entry in loss.columns.columnStarts[feature]..<loss.columns.columnStarts[feature + 1] {
                            let value = loss.squaredValues[entry]
                            SparseKernels.addScaled(value, loss.residuals.base + Int(loss.columns.rows[entry]) * loss.classes,
                                                    to: row.baseAddress!, count: loss.classes)
                        }
                        preconditioner.store(UnsafeBufferPointer(row), at: feature * loss.classes)
                    }
                }
            }
        }
        withUnsafeTemporaryAllocation(of: Float.self, capacity: classes) { bias in
            biasSum(into: bias.baseAddress!)
            preconditioner.store(UnsafeBufferPointer(bias), at: matrix.columns * classes)
        }
    }

    /// Returns `dᵀ ∇²f(x) d` for `d = direction`, at the point `x` of the last
    /// ``evaluate(_:_:)``, and keeps each row's `Qᵢ` for ``addHessianProduct(_:scale:to:)``:
    /// `‖V‖² + Σᵢ uᵢ · Qᵢ` (the bias is not regularized), summed in a fixed order. One pass over
    /// the rows, and one over the features for `‖V‖²`.
    func hessianCurvature(along direction: UnsafeBufferPointer<Float>) -> Double {
        let vector = SharedPointer(readOnly: direction.baseAddress!)
        let loss = self
        _ = Parallel.map(matrix.rows, threads: threads) { rows in loss.curvatureRowPass(rows, vector.base) }
        return weightSquare(vector, plus: nil) + lossTotal()
    }

    /// Adds `scale · ∇²f(x) d` to `target`, `d = direction` as given to the last
    /// ``hessianCurvature(along:)``: `V + Xᵀ Q` for the weights, `Σᵢ Qᵢ` for the bias. The
    /// product is never stored: each feature's row is summed on the stack, then added.
    func addHessianProduct(_ direction: UnsafeBufferPointer<Float>, scale: Float,
                           to target: UnsafeMutableBufferPointer<Float>) {
        let vector = SharedPointer(readOnly: direction.baseAddress!), output = SharedPointer(target.baseAddress!)
        let loss = self
        _ = Parallel.map(featureRanges.count, threads: featureRanges.count) { parts in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: loss.classes) { row in
                for part in parts {
                    for feature in loss.featureRanges[part] {
                        row.baseAddress!.update(from: vector.base + feature * loss.classes, count: loss.classes)
                        loss.accumulateResiduals(of: feature, into: row.baseAddress!)
                        let destination = output.base + feature * loss.classes
                        for lane in 0..<loss.classes { destination[lane] += scale * row[lane] }
                    }
                }
            }
        }
        withUnsafeTemporaryAllocation(of: Float.self, capacity: classes) { bias in
            biasSum(into: bias.baseAddress!)
            let destination = target.baseAddress! + matrix.columns * classes
            for lane in 0..<classes { destination[lane] += scale * bias[lane] }
        }
    }

    /// The feature pass over every feature range, then the bias row `Σᵢ Rᵢ`; returns `½‖W‖²`.
    private func featurePasses(_ parameters: SharedPointer<Float>, into output: UnsafeMutablePointer<Float>) -> Double {
        let loss = self, target = SharedPointer(output)
        _ = Parallel.map(featureRanges.count, threads: featureRanges.count) { parts in
            for part in parts { loss.featurePass(loss.featureRanges[part], parameters.base, target.base) }
        }
        biasSum(into: output + matrix.columns * classes)
        return 0.5 * squareTotal()
    }

    /// `‖v‖²` of one weight row, in double precision.
    @inline(__always)
    private func square(_ row: UnsafeMutablePointer<Float>) -> Double {
        var square = 0.0
        for lane in 0..<classes { square += Double(row[lane]) * Double(row[lane]) }
        return square
    }

    /// `‖W‖²` (or `‖W + S‖²` with `step`) of the weights of `parameters`, the bias left out: each
    /// feature's part on `threads` threads, then the parts added in feature order.
    private func weightSquare(_ parameters: SharedPointer<Float>, plus step: SharedPointer<Float>?) -> Double {
        let loss = self
        _ = Parallel.map(matrix.columns, threads: threads) { features in
            for feature in features {
                let weights = parameters.base + feature * loss.classes
                loss.featureSquares.base[feature] = if let step {
                    loss.squareOfSum(weights, step.base + feature * loss.classes)
                } else {
                    loss.square(weights)
                }
            }
        }
        return squareTotal()
    }

    /// `‖v + s‖²` of one weight row and its step, in double precision.
    @inline(__always)
    private func squareOfSum(_ row: UnsafeMutablePointer<Float>, _ step: UnsafeMutablePointer<Float>) -> Double {
        var square = 0.0
        for lane in 0..<classes {
            let value = Double(row[lane] + step[lane])
            square += value * value
        }
        return square
    }

    /// Writes `xᵢ M + m` into row `i`'s lane of the scratch buffer and returns it, where `point`
    /// holds `M` feature-major followed by `m` (the parameter layout: weights, then biases); with
    /// `step`, `xᵢ (M + S) + m + s` from a second vector of parameters.
    @inline(__always)
    private func linearRow(_ row: Int, _ indices: UnsafeBufferPointer<Int32>, _ values: UnsafeBufferPointer<Float>,
                           _ point: UnsafeMutablePointer<Float>,
                           plus step: UnsafeMutablePointer<Float>? = nil) -> UnsafeMutablePointer<Float> {
        let lane = residuals.base + row * classes
        lane.update(from: point + matrix.columns * classes, count: classes)
        SparseKernels.accumulateRows(indices: indices, values: values, weights: point, classes: classes, into: lane)
        if let step {
            let biasStep = step + matrix.columns * classes
            for index in 0..<classes { lane[index] += biasStep[index] }
            SparseKernels.accumulateRows(indices: indices, values: values, weights: step, classes: classes, into: lane)
        }
        return lane
    }

    /// Scores, loss and residual of each row in `rows`, at `parameters` (plus `step`).
    /// With `keep`, the residuals and probabilities are stored for the gradient and the
    /// Hessian; without, only the losses.
    private func rowPass(_ rows: Range<Int>, _ parameters: UnsafeMutablePointer<Float>,
                         plus step: UnsafeMutablePointer<Float>? = nil, keep: Bool) {
        matrix.forEachRow(in: rows) { row, indices, values in
            let scores = linearRow(row, indices, values, parameters, plus: step)
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
            guard keep else { return }
            let probability = probabilities.base + row * classes
            for lane in 0..<classes { probability[lane] = scores[lane] / total }
            for lane in 0..<classes { scores[lane] = cost * probability[lane] }
            scores[label] -= cost
        }
    }

    /// `Qᵢ = C w_{yᵢ} (pᵢ ⊙ uᵢ − pᵢ (pᵢ · uᵢ))`, `uᵢ = xᵢ V + v`, of each row in `rows`, and
    /// `uᵢ · Qᵢ` into the row's loss slot.
    private func curvatureRowPass(_ rows: Range<Int>, _ direction: UnsafeMutablePointer<Float>) {
        matrix.forEachRow(in: rows) { row, indices, values in
            let product = linearRow(row, indices, values, direction)
            let probability = probabilities.base + row * classes
            var mean: Float = 0
            for lane in 0..<classes { mean += probability[lane] * product[lane] }
            let cost = rowCosts[row]
            var curvature = 0.0
            for lane in 0..<classes {
                let u = product[lane]
                product[lane] = cost * probability[lane] * (u - mean)
                curvature += Double(u) * Double(product[lane])
            }
            rowLosses.base[row] = curvature
        }
    }

    /// Adds `Σᵢ x_if Rᵢ` (or `Qᵢ`), the documents of `feature` in order, to `row`.
    @inline(__always)
    private func accumulateResiduals(of feature: Int, into row: UnsafeMutablePointer<Float>) {
        columns.rows.withUnsafeBufferPointer { rows in
            columns.values.withUnsafeBufferPointer { values in
                let entries = columns.columnStarts[feature]..<columns.columnStarts[feature + 1]
                SparseKernels.accumulateRows(indices: UnsafeBufferPointer(rebasing: rows[entries]),
                                             values: UnsafeBufferPointer(rebasing: values[entries]),
                                             weights: residuals.base, classes: classes, into: row)
            }
        }
    }

    /// The gradient rows `W_f + Σᵢ x_if Rᵢ` and squared norms `‖W_f‖²` of the features in `range`.
    private func featurePass(_ range: Range<Int>, _ parameters: UnsafeMutablePointer<Float>,
                             _ gradient: UnsafeMutablePointer<Float>) {
        for feature in range {
            let weights = parameters + feature * classes
            let target = gradient + feature * classes
            target.update(from: weights, count: classes)
            featureSquares.base[feature] = square(weights)
            accumulateResiduals(of: feature, into: target)
        }
    }

    /// `Σᵢ` of the row losses, in row order.
    private func lossTotal() -> Double {
        var total = 0.0
        for row in 0..<matrix.rows { total += rowLosses.base[row] }
        return total
    }

    /// `‖W‖²` from the per-feature parts, in feature order.
    private func squareTotal() -> Double {
        var squares = 0.0
        for feature in 0..<matrix.columns { squares += featureSquares.base[feature] }
        return squares
    }

    /// Writes the bias row `Σᵢ Rᵢ` of the residuals, summed in row order.
    private func biasSum(into target: UnsafeMutablePointer<Float>) {
        var sums = [Double](repeating: 0, count: classes)
        for row in 0..<matrix.rows {
            let residual = residuals.base + row * classes
            for lane in 0..<classes { sums[lane] += Double(residual[lane]) }
        }
        for lane in 0..<classes { target[lane] = Float(sums[lane]) }
    }
}

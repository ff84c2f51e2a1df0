/// The dual coordinate descent solver of one binary L2-regularized L2-loss SVM with a bias
/// feature: LIBLINEAR's `-s 1 -B 1` (Hsieh, Chang, Lin, Keerthi & Sundararajan, "A dual
/// coordinate descent method for large-scale linear SVM", ICML 2008, Algorithm 1 with the
/// shrinking of Section 3.2).
///
/// The primal problem, over `w` and the bias `w_b` (regularized, the weight of a constant
/// feature 1), with labels `yᵢ = ±1` and per-example costs `Cᵢ` (`C₊` or `C₋`):
///
///     min ½(‖w‖² + w_b²) + Σᵢ Cᵢ max(0, 1 − yᵢ(w·xᵢ + w_b))²
///
/// Its dual is `min_α ½ αᵀ Q̄ α − eᵀα` subject to `α ≥ 0`, with `Q̄ = Q + D`,
/// `Qᵢⱼ = yᵢyⱼ(xᵢ·xⱼ + 1)` and `Dᵢᵢ = 1/(2Cᵢ)`, while `w = Σᵢ αᵢ yᵢ xᵢ` is kept up to date.
/// Each outer iteration visits the active examples in a random order (a Fisher–Yates pass of
/// ``SplitMix64``, as LIBLINEAR's `j = i + rand() % (active − i)`), and for each computes
/// `G = yᵢ(w·xᵢ + w_b) − 1 + αᵢ Dᵢᵢ` and the projected gradient `PG` (`min(G, 0)` at `αᵢ = 0`,
/// else `G`), then sets `αᵢ ← max(αᵢ − G/Q̄ᵢᵢ, 0)` and updates `w`. An example at `αᵢ = 0` with
/// `G > max PG of the previous pass` is shrunk (removed from the active set). It stops when
/// `max PG − min PG ≤ ε` over a pass of all examples (after un-shrinking once the active
/// set has converged), or after `maxIterations` passes.
struct DualCoordinateDescent: Sendable {
    /// The training rows (compact columns).
    let matrix: SparseMatrix
    /// `xᵢ·xᵢ + 1` per row (the 1 is the bias feature).
    let squaredNorms: [Double]
    /// The stopping tolerance `ε` on `max PG − min PG`.
    let tolerance: Double
    /// The largest number of outer iterations.
    let maxIterations: Int

    /// Prepares the solver for the rows of `matrix`.
    init(matrix: SparseMatrix, tolerance: Double, maxIterations: Int) {
        self.matrix = matrix
        var norms = [Double](repeating: 1, count: matrix.rows)
        matrix.forEachRow(in: 0..<matrix.rows) { row, _, values in
            for value in values { norms[row] += Double(value) * Double(value) }
        }
        squaredNorms = norms
        self.tolerance = tolerance
        self.maxIterations = maxIterations
    }

    /// The solution of one binary problem.
    struct Solution: Sendable {
        /// `w` over the compact columns.
        let weights: [Float]
        /// `w_b`.
        let bias: Float
        /// Outer iterations run.
        let iterations: Int
    }

    /// Solves the problem whose positive examples are those with `isPositive[i]`.
    /// - Parameters:
    ///   - isPositive: The label of each row.
    ///   - positiveCost: `C₊`, the cost of positive examples.
    ///   - negativeCost: `C₋`.
    ///   - seed: The seed of the visiting order.
    func solve(isPositive: [Bool], positiveCost: Double, negativeCost: Double, seed: UInt64) -> Solution {
        var state = DualState(rows: matrix.rows, columns: matrix.columns, isPositive: isPositive,
                              positiveCost: positiveCost, negativeCost: negativeCost, squaredNorms: squaredNorms)
        var generator = SplitMix64(seed: seed)
        var iterations = 0
        var active = matrix.rows
        var previousMax = Double.infinity
        while iterations < maxIterations {
            state.shuffle(active: active, with: &generator)
            let (largest, smallest) = pass(&state, active: &active, shrinkAbove: previousMax)
            iterations += 1
            if largest - smallest <= tolerance {
                if active == matrix.rows { break }
                active = matrix.rows
                previousMax = .infinity
                continue
            }
            previousMax = largest <= 0 ? .infinity : largest
        }
        return Solution(weights: state.weights.map { Float($0) }, bias: Float(state.bias), iterations: iterations)
    }

    /// One pass over the active examples in the current order; returns `(max PG, min PG)`.
    private func pass(_ state: inout DualState, active: inout Int, shrinkAbove threshold: Double) -> (Double, Double) {
        var largest = -Double.infinity, smallest = Double.infinity
        matrix.indices.withUnsafeBufferPointer { indices in
            matrix.values.withUnsafeBufferPointer { values in
                var position = 0
                while position < active {
                    let row = Int(state.order[position])
                    let entries = matrix.rowStarts[row]..<matrix.rowStarts[row + 1]
                    let rowIndices = UnsafeBufferPointer(rebasing: indices[entries])
                    let rowValues = UnsafeBufferPointer(rebasing: values[entries])
                    let sign = state.signs[row]
                    let gradient = sign * state.margin(rowIndices, rowValues) - 1 + state.alpha[row] * state.diagonal[row]
                    var projected = 0.0
                    if state.alpha[row] == 0 {
                        if gradient > threshold {
                            active -= 1
                            state.order.swapAt(position, active)
                            continue
                        }
                        projected = min(gradient, 0)
                    } else {
                        projected = gradient
                    }
                    largest = max(largest, projected)
                    smallest = min(smallest, projected)
                    if abs(projected) > 1e-12 {
                        let old = state.alpha[row]
                        state.alpha[row] = max(old - gradient / state.curvature[row], 0)
                        state.add((state.alpha[row] - old) * sign, rowIndices, rowValues)
                    }
                    position += 1
                }
            }
        }
        return (largest, smallest)
    }
}

/// The variables of one dual coordinate descent run.
private struct DualState {
    var weights: [Double]
    var bias = 0.0
    var alpha: [Double]
    /// `yᵢ` as ±1.
    let signs: [Double]
    /// `Dᵢᵢ = 1/(2Cᵢ)`.
    let diagonal: [Double]
    /// `Q̄ᵢᵢ = xᵢ·xᵢ + 1 + Dᵢᵢ`.
    let curvature: [Double]
    /// The visiting order; its first `active` entries are the active set.
    var order: [Int32]

    init(rows: Int, columns: Int, isPositive: [Bool], positiveCost: Double, negativeCost: Double,
         squaredNorms: [Double]) {
        weights = [Double](repeating: 0, count: columns)
        alpha = [Double](repeating: 0, count: rows)
        signs = isPositive.map { $0 ? 1 : -1 }
        diagonal = isPositive.map { 0.5 / ($0 ? positiveCost : negativeCost) }
        curvature = zip(squaredNorms, diagonal).map { $0 + $1 }
        order = (0..<rows).map { Int32($0) }
    }

    /// Shuffles the active part of the order: for each `i`, swap with `j` uniform in `i..<active`.
    mutating func shuffle(active: Int, with generator: inout SplitMix64) {
        for position in 0..<active {
            let pick = position + Int(generator.next(below: UInt64(active - position)))
            order.swapAt(position, pick)
        }
    }

    /// `w·x + w_b`.
    @inline(__always)
    func margin(_ indices: UnsafeBufferPointer<Int32>, _ values: UnsafeBufferPointer<Float>) -> Double {
        weights.withUnsafeBufferPointer { weights in
            var total = bias
            for position in indices.indices { total += weights[Int(indices[position])] * Double(values[position]) }
            return total
        }
    }

    /// `w ← w + d·x`, `w_b ← w_b + d`.
    @inline(__always)
    mutating func add(_ step: Double, _ indices: UnsafeBufferPointer<Int32>, _ values: UnsafeBufferPointer<Float>) {
        bias += step
        weights.withUnsafeMutableBufferPointer { weights in
            for position in indices.indices { weights[Int(indices[position])] += step * Double(values[position]) }
        }
    }
}

/// Limited-memory BFGS (Nocedal 1980; Liu & Nocedal 1989) for smooth unconstrained
/// minimization of `f: ℝⁿ → ℝ`, given a closure that returns `f(x)` and writes `∇f(x)`.
///
/// Each iteration computes the direction `d = −H ∇f`, where `H` is the BFGS inverse Hessian
/// approximation built from the last ``memory`` pairs `sᵢ = xᵢ₊₁ − xᵢ`, `yᵢ = ∇fᵢ₊₁ − ∇fᵢ` on
/// `H₀ = γI`, `γ = sᵀy / yᵀy` of the newest pair. It is applied in the compact form of Byrd,
/// Nocedal & Schnabel, "Representations of quasi-Newton matrices and their use in limited
/// memory methods", Math. Programming 63 (1994), Theorem 2.2:
///
///     H g = γ g + S p − γ Y t,   t = R⁻¹ Sᵀg,   p = R⁻ᵀ((D + γ YᵀY) t − γ Yᵀg)
///
/// with `S`, `Y` the pairs as columns, `R` the upper triangle of `SᵀY` and `D` its diagonal.
/// This is the same direction as the two-loop recursion (Nocedal & Wright, *Numerical
/// Optimization*, 2nd ed., Algorithm 7.4), but it streams each stored vector through memory
/// twice per iteration instead of reading and writing the direction `2m` times: once to
/// compute every dot product the small `m × m` matrices need (fused with forming `y`), once to
/// combine the direction. On problems with millions of weights, that memory traffic is the cost
/// of an iteration.
///
/// It then steps `x ← x + α d` with a step `α` that satisfies the strong Wolfe conditions
/// `f(x + αd) ≤ f(x) + c₁ α ∇fᵀd` and `|∇f(x + αd)ᵀd| ≤ c₂ |∇fᵀd|` (`c₁ = 10⁻⁴`, `c₂ = 0.9`),
/// found by bracketing and cubic-interpolation zoom (Algorithms 3.5 and 3.6).
///
/// It stops when `‖∇f‖₂ ≤ tolerance · ‖∇f(x₀)‖₂` (there are no bounds, so the projected gradient
/// is the gradient), after ``maxIterations`` iterations, when an iteration lowers `f` by less
/// than `10⁻¹⁰ · max(|f|, 1)`, or when no step along the direction and then along `−∇f` lowers `f`.
///
/// The point and the vectors are single precision, the function values and the dot products
/// of the recursion are accumulated in double precision. Vector operations run on ``threads``
/// threads in fixed blocks, so results depend on neither the thread count nor scheduling.
struct LBFGS: Sendable {
    /// The objective: returns `f(point)` and writes `∇f(point)` into `gradient`.
    typealias Objective = (_ point: UnsafeBufferPointer<Float>, _ gradient: UnsafeMutableBufferPointer<Float>) -> Double

    /// Why the minimization stopped.
    enum Stop: Sendable, Equatable {
        /// The gradient norm fell below the tolerance.
        case converged
        /// The iteration limit was reached.
        case iterationLimit
        /// An iteration lowered `f` by a negligible amount.
        case noProgress
        /// No step satisfying the line search conditions was found.
        case lineSearchFailed
    }

    /// The outcome of a minimization.
    struct Result: Sendable {
        /// The last point.
        let solution: [Float]
        /// `f` there.
        let value: Double
        /// `‖∇f‖₂` there.
        let gradientNorm: Double
        /// `‖∇f(x₀)‖₂`.
        let initialGradientNorm: Double
        /// The number of iterations (accepted steps).
        let iterations: Int
        /// The number of objective evaluations, the first included.
        let evaluations: Int
        /// Why it stopped.
        let stop: Stop
    }

    /// The number of correction pairs kept (`m`).
    var memory = 10
    /// The relative gradient-norm tolerance.
    var tolerance: Double = 1e-4
    /// The largest number of iterations.
    var maxIterations = 100
    /// Threads for the vector operations (1: serial).
    var threads = 1

    /// Minimizes `objective` starting from `start`.
    func minimize(from start: [Float], _ objective: Objective) -> Result {
        withoutActuallyEscaping(objective) { objective in
            var run = LBFGSRun(start: start, memory: memory, threads: max(1, threads), objective: objective)
            return run.solve(tolerance: tolerance, maxIterations: maxIterations)
        }
    }
}

/// The state of one L-BFGS minimization.
private struct LBFGSRun {
    let objective: LBFGS.Objective
    let vectors: BlockedVectors
    /// The current point and its gradient.
    var point: SharedBuffer<Float>
    var gradient: SharedBuffer<Float>
    /// A trial point and its gradient, swapped with the current pair when accepted.
    var trialPoint: SharedBuffer<Float>
    var trialGradient: SharedBuffer<Float>
    /// The best point of a line search so far (the low end of the zoom bracket).
    var bracketPoint: SharedBuffer<Float>
    var bracketGradient: SharedBuffer<Float>
    var history: CompactHistory
    var value: Double = 0
    var gradientSquare: Double = 0
    var evaluations = 0

    /// Allocates the point, gradient, trial and bracket buffers and the history.
    init(start: [Float], memory: Int, threads: Int, objective: @escaping LBFGS.Objective) {
        let count = start.count
        self.objective = objective
        vectors = BlockedVectors(count: count, threads: threads)
        point = SharedBuffer(count: count, repeating: 0)
        _ = point.buffer.update(from: start)
        gradient = SharedBuffer(count: count, repeating: 0)
        trialPoint = SharedBuffer(count: count, repeating: 0)
        trialGradient = SharedBuffer(count: count, repeating: 0)
        bracketPoint = SharedBuffer(count: count, repeating: 0)
        bracketGradient = SharedBuffer(count: count, repeating: 0)
        history = CompactHistory(memory: max(1, memory), count: count)
    }

    /// The direction of the current iteration: the history's spare step slot.
    var direction: UnsafeMutablePointer<Float> { history.direction }

    /// Iterates from the start until a stopping rule of ``LBFGS`` holds.
    mutating func solve(tolerance: Double, maxIterations: Int) -> LBFGS.Result {
        value = evaluate(point, into: gradient)
        gradientSquare = vectors.dot(gradient, gradient)
        let initialNorm = gradientSquare.squareRoot()
        var iterations = 0
        var stop = LBFGS.Stop.iterationLimit
        while true {
            if !(gradientSquare.squareRoot() > tolerance * initialNorm) { stop = .converged; break }
            if iterations >= maxIterations { stop = .iterationLimit; break }
            let previous = value
            guard step() else { stop = .lineSearchFailed; break }
            iterations += 1
            if previous - value <= 1e-10 * max(abs(value), 1) && gradientSquare.squareRoot() > tolerance * initialNorm {
                stop = .noProgress
                break
            }
        }
        return LBFGS.Result(solution: point.array, value: value, gradientNorm: gradientSquare.squareRoot(),
                            initialGradientNorm: initialNorm, iterations: iterations, evaluations: evaluations,
                            stop: stop)
    }

    /// One iteration: a quasi-Newton step, or a steepest-descent step if that fails.
    /// Returns `false` when neither lowers `f`.
    private mutating func step() -> Bool {
        var slope = history.computeDirection(gradient: gradient, vectors: vectors)
        if !(slope < 0) {
            history.reset()
            slope = history.computeDirection(gradient: gradient, vectors: vectors)
        }
        let steepestStep = 1 / max(gradientSquare.squareRoot(), 1e-30)
        if lineSearch(slope: slope, initialStep: history.isEmpty ? steepestStep : 1) { return true }
        guard !history.isEmpty else { return false }
        history.reset()
        slope = history.computeDirection(gradient: gradient, vectors: vectors)
        return lineSearch(slope: slope, initialStep: steepestStep)
    }

    /// `f` and `∇f` at `x`.
    private mutating func evaluate(_ x: SharedBuffer<Float>, into g: SharedBuffer<Float>) -> Double {
        evaluations += 1
        return objective(UnsafeBufferPointer(x.buffer), g.buffer)
    }

    /// `f` and the directional derivative at `x + α d`, left in the trial buffers.
    private mutating func evaluateTrial(step: Double) -> (value: Double, slope: Double) {
        vectors.combine(point.base, Float(step), direction, into: trialPoint.base)
        let trialValue = evaluate(trialPoint, into: trialGradient)
        return (trialValue, vectors.dot(trialGradient.base, direction))
    }

    /// Finds a strong Wolfe step along ``direction`` (Nocedal & Wright, Algorithm 3.5), accepts
    /// it and records the correction pair. Returns `false` if no step lowers `f`.
    private mutating func lineSearch(slope: Double, initialStep: Double) -> Bool {
        let c1 = 1e-4, c2 = 0.9
        var previous = (step: 0.0, value: value, slope: slope)
        var step = initialStep
        for trial in 0..<20 {
            let current = evaluateTrial(step: step)
            guard current.value.isFinite else {
                step = previous.step + (step - previous.step) / 4
                continue
            }
            if current.value > value + c1 * step * slope || (trial > 0 && current.value >= previous.value) {
                return zoom(low: previous, high: (step, current.value, current.slope), slope: slope)
            }
            if abs(current.slope) <= -c2 * slope { return accept(step: step, value: current.value, fromTrial: true) }
            if current.slope >= 0 {
                keepTrialAsBracket()
                return zoom(low: (step, current.value, current.slope), high: previous, slope: slope)
            }
            keepTrialAsBracket()
            previous = (step, current.value, current.slope)
            step *= 2
        }
        return previous.step > 0 && previous.value < value
            && accept(step: previous.step, value: previous.value, fromTrial: false)
    }

    /// Shrinks the bracket `[low, high]`, where `low` has the lowest `f` so far, until a strong
    /// Wolfe step is found (Nocedal & Wright, Algorithm 3.6, with cubic interpolation).
    private mutating func zoom(low: (step: Double, value: Double, slope: Double),
                               high: (step: Double, value: Double, slope: Double), slope: Double) -> Bool {
        let c1 = 1e-4, c2 = 0.9
        var low = low, high = high
        for _ in 0..<20 {
            let step = Self.cubicMinimizer(low, high)
            let current = evaluateTrial(step: step)
            if !current.value.isFinite || current.value > value + c1 * step * slope || current.value >= low.value {
                high = (step, current.value, current.slope)
            } else {
                if abs(current.slope) <= -c2 * slope { return accept(step: step, value: current.value, fromTrial: true) }
                if current.slope * (high.step - low.step) >= 0 { high = low }
                keepTrialAsBracket()
                low = (step, current.value, current.slope)
            }
            if abs(high.step - low.step) <= 1e-12 * max(abs(low.step), 1e-30) { break }
        }
        // No strong Wolfe step: settle for the best point, which satisfies sufficient decrease.
        return low.step > 0 && low.value < value && accept(step: low.step, value: low.value, fromTrial: false)
    }

    /// The minimizer of the cubic that interpolates `f` and `f′` at both ends, kept at least a
    /// tenth of the interval away from either end; bisection when the cubic has no minimizer.
    private static func cubicMinimizer(_ a: (step: Double, value: Double, slope: Double),
                                       _ b: (step: Double, value: Double, slope: Double)) -> Double {
        let width = b.step - a.step
        let lower = min(a.step, b.step) + 0.1 * abs(width), upper = max(a.step, b.step) - 0.1 * abs(width)
        let d1 = a.slope + b.slope - 3 * (a.value - b.value) / (a.step - b.step)
        let radicand = d1 * d1 - a.slope * b.slope
        guard b.value.isFinite, radicand >= 0 else { return a.step + width / 2 }
        let d2 = (width >= 0 ? 1.0 : -1.0) * radicand.squareRoot()
        let candidate = b.step - width * (b.slope + d2 - d1) / (b.slope - a.slope + 2 * d2)
        guard candidate.isFinite else { return a.step + width / 2 }
        return min(max(candidate, lower), upper)
    }

    /// Remembers the trial point as the best of the bracket.
    private mutating func keepTrialAsBracket() {
        swap(&trialPoint, &bracketPoint)
        swap(&trialGradient, &bracketGradient)
    }

    /// Makes the trial point (or, when `fromTrial` is false, the bracket point) current and
    /// records the correction pair `s = αd`, `y = ∇f₊ − ∇f`.
    private mutating func accept(step: Double, value newValue: Double, fromTrial: Bool) -> Bool {
        if !fromTrial { keepTrialAsBracket() }
        gradientSquare = history.record(step: Float(step), oldGradient: gradient, newGradient: trialGradient,
                                        vectors: vectors)
        swap(&point, &trialPoint)
        swap(&gradient, &trialGradient)
        value = newValue
        return true
    }
}

/// The last `m` correction pairs in compact form (Byrd, Nocedal & Schnabel 1994): `m + 1`
/// slots for `s` and for `y` (the spare slot holds the direction being tried, then the newest
/// pair), and by slot the dot products `sᵢ·yⱼ`, `yᵢ·yⱼ`, `sᵢ·g` and `yᵢ·g` that the direction
/// needs.
private struct CompactHistory {
    let memory: Int
    let count: Int
    let steps: SharedBuffer<Float>
    let changes: SharedBuffer<Float>
    /// The slots of the stored pairs, oldest first, and the spare slot.
    var order: [Int] = []
    var spare = 0
    /// `s_a·y_b`, `y_a·y_b` by slot, `(m + 1)²` each.
    var sy: [Double]
    var yy: [Double]
    /// `s_a·g` and `y_a·g` for the current gradient `g`, by slot.
    var sg: [Double]
    var yg: [Double]
    /// `γ = sᵀy / yᵀy` of the newest pair.
    var gamma = 1.0

    /// An empty history for vectors of `count` elements.
    init(memory: Int, count: Int) {
        self.memory = memory
        self.count = count
        steps = SharedBuffer(count: (memory + 1) * count, repeating: 0)
        changes = SharedBuffer(count: (memory + 1) * count, repeating: 0)
        sy = Array(repeating: 0, count: (memory + 1) * (memory + 1))
        yy = sy
        sg = Array(repeating: 0, count: memory + 1)
        yg = sg
    }

    var isEmpty: Bool { order.isEmpty }

    /// Where the direction is written: the spare `s` slot.
    var direction: UnsafeMutablePointer<Float> { steps.base + spare * count }

    /// The `s` and `y` vectors of a slot.
    private func s(_ slot: Int) -> UnsafeMutablePointer<Float> { steps.base + slot * count }
    private func y(_ slot: Int) -> UnsafeMutablePointer<Float> { changes.base + slot * count }

    /// Forgets every pair: the next direction is steepest descent.
    mutating func reset() {
        order.removeAll()
        gamma = 1
    }

    /// Writes `d = −H g = −γ g − S p + γ Y t` into the spare slot and returns `d·g`.
    mutating func computeDirection(gradient: SharedBuffer<Float>, vectors: BlockedVectors) -> Double {
        let (t, p) = smallSolve()
        let slots = order, count = self.count
        let gCoefficient = Float(-gamma)
        let sCoefficients = p.map { Float(-$0) }, yCoefficients = t.map { Float(gamma * $0) }
        let g = SharedPointer(gradient.base), d = SharedPointer(direction)
        let sBase = SharedPointer(steps.base), yBase = SharedPointer(changes.base)
        return vectors.forEachBlock { range in
            VectorKernels.combine(g.base, gCoefficient - 1, g.base, d.base, range)
            for (index, slot) in slots.enumerated() {
                VectorKernels.combine(d.base, sCoefficients[index], sBase.base + slot * count, d.base, range)
                VectorKernels.combine(d.base, yCoefficients[index], yBase.base + slot * count, d.base, range)
            }
            return VectorKernels.dot(d.base, g.base, range)
        }.reduce(0, +)
    }

    /// `t = R⁻¹ u` and `p = R⁻ᵀ((D + γ YᵀY) t − γ v)` for `u = Sᵀg`, `v = Yᵀg`, in the order of the pairs.
    private func smallSolve() -> (t: [Double], p: [Double]) {
        let k = order.count, width = memory + 1
        func r(_ i: Int, _ j: Int) -> Double { sy[order[i] * width + order[j]] }
        var t = [Double](repeating: 0, count: k)
        for i in stride(from: k - 1, through: 0, by: -1) {
            var total = sg[order[i]]
            for j in (i + 1)..<max(i + 1, k) { total -= r(i, j) * t[j] }
            t[i] = total / r(i, i)
        }
        var w = [Double](repeating: 0, count: k)
        for i in 0..<k {
            var total = r(i, i) * t[i] - gamma * yg[order[i]]
            for j in 0..<k { total += gamma * yy[order[i] * width + order[j]] * t[j] }
            w[i] = total
        }
        var p = [Double](repeating: 0, count: k)
        for i in 0..<k {
            var total = w[i]
            for j in 0..<i { total -= r(j, i) * p[j] }
            p[i] = total / r(i, i)
        }
        return (t, p)
    }

    /// After a step `α` along the spare slot's direction: scales it to `s = αd`, forms
    /// `y = g₊ − g` in the spare `y` slot, and in the same pass takes every dot product of the
    /// stored and new vectors with `y` and `g₊`. Keeps the pair if `sᵀy > 10⁻¹⁰ yᵀy` (dropping the
    /// oldest when full). Returns `g₊·g₊`.
    mutating func record(step: Float, oldGradient: SharedBuffer<Float>, newGradient: SharedBuffer<Float>,
                         vectors: BlockedVectors) -> Double {
        let slots = order + [spare], count = self.count
        let old = SharedPointer(oldGradient.base), new = SharedPointer(newGradient.base)
        let sBase = SharedPointer(steps.base), yBase = SharedPointer(changes.base), newSlot = spare
        let blocks = vectors.forEachBlock { range -> [Double] in
            let sNew = sBase.base + newSlot * count, yNew = yBase.base + newSlot * count
            VectorKernels.combine(sNew, step - 1, sNew, sNew, range)
            VectorKernels.combine(new.base, -1, old.base, yNew, range)
            var sums = [Double](repeating: 0, count: 4 * slots.count + 1)
            for (index, slot) in slots.enumerated() {
                let s = sBase.base + slot * count, y = yBase.base + slot * count
                sums[4 * index] = VectorKernels.dot(s, yNew, range)
                sums[4 * index + 1] = VectorKernels.dot(y, yNew, range)
                sums[4 * index + 2] = VectorKernels.dot(s, new.base, range)
                sums[4 * index + 3] = VectorKernels.dot(y, new.base, range)
            }
            sums[4 * slots.count] = VectorKernels.dot(new.base, new.base, range)
            return sums
        }
        var totals = [Double](repeating: 0, count: 4 * slots.count + 1)
        for block in blocks { for index in totals.indices { totals[index] += block[index] } }
        store(totals, slots: slots)
        return totals[4 * slots.count]
    }

    /// Files the dot products of ``record(step:oldGradient:newGradient:vectors:)`` by slot.
    private mutating func store(_ totals: [Double], slots: [Int]) {
        let width = memory + 1, newSlot = spare
        for (index, slot) in slots.enumerated() {
            sg[slot] = totals[4 * index + 2]
            yg[slot] = totals[4 * index + 3]
        }
        let last = 4 * (slots.count - 1)
        let curvature = totals[last], newSquare = totals[last + 1]
        guard curvature > 1e-10 * newSquare, curvature.isFinite, newSquare > 0 else { return }
        for (index, slot) in slots.enumerated() {
            sy[slot * width + newSlot] = totals[4 * index]
            yy[slot * width + newSlot] = totals[4 * index + 1]
            yy[newSlot * width + slot] = totals[4 * index + 1]
        }
        gamma = curvature / newSquare
        order.append(newSlot)
        if order.count > memory {
            spare = order.removeFirst()
        } else {
            spare = (0...memory).first { !order.contains($0) }!
        }
    }
}

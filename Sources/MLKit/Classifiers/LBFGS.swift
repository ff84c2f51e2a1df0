/// Limited-memory BFGS (Nocedal 1980; Liu & Nocedal 1989) for smooth unconstrained
/// minimization of `f: ℝⁿ → ℝ`, given a closure that returns `f(x)` and writes `∇f(x)`.
///
/// Each iteration computes the direction `d = −H ∇f` with the two-loop recursion over the last
/// ``memory`` pairs `sᵢ = xᵢ₊₁ − xᵢ`, `yᵢ = ∇fᵢ₊₁ − ∇fᵢ` and the initial scaling
/// `H₀ = (sᵀy / yᵀy) I` (Nocedal & Wright, *Numerical Optimization*, 2nd ed., Algorithm 7.4),
/// then steps `x ← x + α d` with a step `α` that satisfies the strong Wolfe conditions
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
    let count: Int
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
    let direction: SharedBuffer<Float>
    var history: CorrectionHistory
    var value: Double = 0
    var evaluations = 0

    init(start: [Float], memory: Int, threads: Int, objective: @escaping LBFGS.Objective) {
        count = start.count
        self.objective = objective
        vectors = BlockedVectors(count: start.count, threads: threads)
        point = SharedBuffer(count: count, repeating: 0)
        _ = point.buffer.update(from: start)
        gradient = SharedBuffer(count: count, repeating: 0)
        trialPoint = SharedBuffer(count: count, repeating: 0)
        trialGradient = SharedBuffer(count: count, repeating: 0)
        bracketPoint = SharedBuffer(count: count, repeating: 0)
        bracketGradient = SharedBuffer(count: count, repeating: 0)
        direction = SharedBuffer(count: count, repeating: 0)
        history = CorrectionHistory(memory: max(1, memory), count: count)
    }

    mutating func solve(tolerance: Double, maxIterations: Int) -> LBFGS.Result {
        value = evaluate(point, into: gradient)
        let initialNorm = vectors.dot(gradient, gradient).squareRoot()
        var norm = initialNorm
        var iterations = 0
        var stop = LBFGS.Stop.iterationLimit
        while true {
            if !(norm > tolerance * initialNorm) { stop = .converged; break }
            if iterations >= maxIterations { stop = .iterationLimit; break }
            let previous = value
            guard step(firstIteration: iterations == 0, gradientNorm: norm) else { stop = .lineSearchFailed; break }
            iterations += 1
            norm = vectors.dot(gradient, gradient).squareRoot()
            if previous - value <= 1e-10 * max(abs(value), 1) && norm > tolerance * initialNorm {
                stop = .noProgress
                break
            }
        }
        return LBFGS.Result(solution: point.array, value: value, gradientNorm: norm, initialGradientNorm: initialNorm,
                            iterations: iterations, evaluations: evaluations, stop: stop)
    }

    /// One iteration: a quasi-Newton step, or a steepest-descent step if that fails.
    /// Returns `false` when neither lowers `f`.
    private mutating func step(firstIteration: Bool, gradientNorm: Double) -> Bool {
        history.direction(for: gradient, into: direction, vectors: vectors)
        var slope = vectors.dot(direction, gradient)
        if !(slope < 0) {
            history.reset()
            slope = steepestDescent()
        }
        let initialStep = history.isEmpty ? 1 / max(gradientNorm, 1e-30) : 1
        if lineSearch(slope: slope, initialStep: initialStep) { return true }
        guard !history.isEmpty else { return false }
        history.reset()
        slope = steepestDescent()
        return lineSearch(slope: slope, initialStep: 1 / max(gradientNorm, 1e-30))
    }

    /// Sets the direction to `−∇f` and returns its slope `−‖∇f‖²`.
    private mutating func steepestDescent() -> Double {
        for index in 0..<count { direction.base[index] = -gradient.base[index] }
        return -vectors.dot(gradient, gradient)
    }

    /// `f` and `∇f` at `x`.
    private mutating func evaluate(_ x: SharedBuffer<Float>, into g: SharedBuffer<Float>) -> Double {
        evaluations += 1
        return objective(UnsafeBufferPointer(x.buffer), g.buffer)
    }

    /// `f` and the directional derivative at `x + α d`, left in the trial buffers.
    private mutating func evaluateTrial(step: Double) -> (value: Double, slope: Double) {
        vectors.combine(point, Float(step), direction, into: trialPoint)
        let trialValue = evaluate(trialPoint, into: trialGradient)
        return (trialValue, vectors.dot(trialGradient, direction))
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
        if !fromTrial {
            swap(&trialPoint, &bracketPoint)
            swap(&trialGradient, &bracketGradient)
        }
        history.record(step: Float(step), direction: direction, oldGradient: gradient, newGradient: trialGradient,
                       vectors: vectors)
        swap(&point, &trialPoint)
        swap(&gradient, &trialGradient)
        value = newValue
        return true
    }
}

/// The last `m` correction pairs `(sᵢ, yᵢ)` with `ρᵢ = 1 / sᵢᵀyᵢ`, in a ring, and the two-loop
/// recursion that applies the implicit inverse Hessian approximation to a gradient.
private struct CorrectionHistory {
    let memory: Int
    let count: Int
    /// `memory × count` floats each: slot `j` holds one `s` (or `y`) vector.
    let steps: SharedBuffer<Float>
    let gradientChanges: SharedBuffer<Float>
    var rho: [Double]
    var alpha: [Double]
    /// The slot of the newest pair, and the number of pairs stored.
    var newest = -1
    var stored = 0
    /// `sᵀy / yᵀy` of the newest pair: the initial Hessian scaling.
    var scaling = 1.0

    init(memory: Int, count: Int) {
        self.memory = memory
        self.count = count
        steps = SharedBuffer(count: memory * count, repeating: 0)
        gradientChanges = SharedBuffer(count: memory * count, repeating: 0)
        rho = Array(repeating: 0, count: memory)
        alpha = Array(repeating: 0, count: memory)
    }

    var isEmpty: Bool { stored == 0 }

    mutating func reset() {
        stored = 0
        newest = -1
        scaling = 1
    }

    private func s(_ slot: Int) -> UnsafeMutablePointer<Float> { steps.base + slot * count }
    private func y(_ slot: Int) -> UnsafeMutablePointer<Float> { gradientChanges.base + slot * count }

    /// Stores `s = α d` and `y = ∇f₊ − ∇f`, unless `sᵀy ≤ 10⁻¹⁰ yᵀy` (which would break positive
    /// definiteness; the Wolfe conditions rule it out except through rounding).
    mutating func record(step: Float, direction: SharedBuffer<Float>, oldGradient: SharedBuffer<Float>,
                         newGradient: SharedBuffer<Float>, vectors: BlockedVectors) {
        let slot = (newest + 1) % memory
        vectors.scale(step, direction.base, into: s(slot))
        vectors.difference(newGradient.base, oldGradient.base, into: y(slot))
        let sy = vectors.dot(s(slot), y(slot))
        let yy = vectors.dot(y(slot), y(slot))
        guard sy > 1e-10 * yy, sy.isFinite, yy > 0 else { return }
        newest = slot
        stored = min(stored + 1, memory)
        rho[slot] = 1 / sy
        scaling = sy / yy
    }

    /// `d = −H ∇f` by the two-loop recursion (Nocedal & Wright, Algorithm 7.4).
    mutating func direction(for gradient: SharedBuffer<Float>, into d: SharedBuffer<Float>, vectors: BlockedVectors) {
        vectors.scale(-1, gradient.base, into: d.base)
        for back in 0..<stored {
            let slot = (newest - back + memory) % memory
            alpha[slot] = rho[slot] * vectors.dot(s(slot), d.base)
            vectors.axpy(Float(-alpha[slot]), y(slot), d.base)
        }
        vectors.scale(Float(scaling), d.base, into: d.base)
        for forward in stride(from: stored - 1, through: 0, by: -1) {
            let slot = (newest - forward + memory) % memory
            let beta = rho[slot] * vectors.dot(y(slot), d.base)
            vectors.axpy(Float(alpha[slot] - beta), s(slot), d.base)
        }
    }
}

/// A function that a Newton method can minimize: its value, its gradient, and products of its
/// Hessian with a vector.
protocol SecondOrderObjective {
    /// Returns `f(point)`, writes `∇f(point)` into `gradient`, and makes `point` the point where
    /// ``hessianProduct(_:into:)`` takes the Hessian.
    func evaluate(_ point: UnsafeBufferPointer<Float>, _ gradient: UnsafeMutableBufferPointer<Float>) -> Double
    /// `f(point)`, leaving the Hessian's point as it was.
    func value(at point: UnsafeBufferPointer<Float>) -> Double
    /// Writes the diagonal of `∇²f(x)` into `diagonal`, `x` the last point given to ``evaluate(_:_:)``.
    func hessianDiagonal(into diagonal: UnsafeMutableBufferPointer<Float>)
    /// Writes `∇²f(x) · direction` into `product`, `x` the last point given to ``evaluate(_:_:)``.
    func hessianProduct(_ direction: UnsafeBufferPointer<Float>, into product: UnsafeMutableBufferPointer<Float>)
}

/// The trust-region Newton method of LIBLINEAR (Lin, Weng & Keerthi, "Trust region Newton
/// method for large-scale logistic regression", JMLR 9, 2008; with the conjugate-gradient
/// stopping rule of Hsia, Chiang & Lin, "Preconditioned conjugate gradient methods in truncated
/// Newton frameworks for large-scale linear classification", ACML 2018) for smooth convex
/// minimization of `f: ℝⁿ → ℝ`.
///
/// Each iteration approximately minimizes the quadratic model `q(s) = ∇fᵀs + ½ sᵀ∇²f s` inside
/// the trust region `‖s‖ ≤ Δ` by conjugate gradient, which needs only Hessian-vector products:
/// for a loss over data, one pass over the data each, and no stored history. CG stops when
/// `j · (q_j − q_{j−1}) ≥ η · q_j` at its `j`-th step, `η = min(0.5, ‖∇f‖^½)` (the model's
/// relative decrease has become small; LIBLINEAR's `eps_cg`), or on the boundary of the region. The step is taken
/// when the actual reduction is more than `10⁻⁴` of the predicted one; the region then grows
/// or shrinks with their ratio (LIBLINEAR's `η = 10⁻⁴, 0.25, 0.75`, `σ = 0.25, 0.5, 4`).
///
/// It stops when `‖∇f‖₂ ≤ tolerance · ‖∇f(0)‖₂` (at `0`, not at the start, as LIBLINEAR), after ``maxIterations`` accepted steps, or
/// when the predicted and actual reductions both fall below `10⁻¹² |f|` (no progress left at
/// single precision).
///
/// The seven vectors (the point `x`, `∇f`, the preconditioner `M`, the step `s`, the CG residual
/// `r`, the direction `d` and `∇²f d`, which also holds the trial point) are single precision; dot
/// products and `f` are double. Vector operations run on ``threads`` threads in fixed blocks
/// (``BlockedVectors``), so results depend neither on the thread count nor on scheduling.
struct TrustRegionNewton: Sendable {
    /// Why the minimization stopped.
    enum Stop: Sendable, Equatable {
        /// The gradient norm fell below the tolerance.
        case converged
        /// The iteration limit was reached.
        case iterationLimit
        /// The predicted and actual reductions became negligible.
        case noProgress
    }

    /// The outcome of a minimization.
    struct Result: Sendable {
        /// The last point.
        let solution: [Float]
        /// How the run went.
        let summary: Summary
    }

    /// How a minimization went, without its solution.
    struct Summary: Sendable {
        /// `f` at the last point.
        let value: Double
        /// `‖∇f‖₂` at the last point.
        let gradientNorm: Double
        /// `‖∇f(0)‖₂`.
        let initialGradientNorm: Double
        /// The number of accepted Newton steps.
        let iterations: Int
        /// The number of conjugate-gradient steps (Hessian-vector products).
        let conjugateGradientSteps: Int
        /// The number of evaluations of `f`, the first included.
        let evaluations: Int
        /// Why it stopped.
        let stop: Stop
    }

    /// The weight of the Hessian's diagonal in the preconditioner `M = (1 − a) I + a diag(∇²f)`
    /// (LIBLINEAR's `alpha_pcg`).
    static let preconditionerMix = 0.01
    /// The largest relative decrease of the quadratic model at which CG stops (`eps_cg`).
    static let conjugateGradientTolerance = 0.5

    /// The relative gradient-norm tolerance.
    var tolerance: Double = 1e-4
    /// The largest number of Newton iterations.
    var maxIterations = 100
    /// Threads for the vector operations (1: serial).
    var threads = 1

    /// Minimizes `objective` starting from `start`.
    func minimize<Objective: SecondOrderObjective>(_ objective: Objective, from start: [Float]) -> Result {
        minimize(objective, count: start.count) { _ = $0.update(fromContentsOf: start) }
    }

    /// Minimizes `objective` over `count` variables, starting from the point that `start`
    /// writes into the solver's own buffer (zeros until it does).
    ///
    /// No copy of the start lives beside the seven working vectors: `start` runs before the
    /// other six are allocated, so whatever it reads from can be freed by then. They are all
    /// freed before the solution is copied out, so that at most seven vectors of `count` floats
    /// are alive at once. Handing the start in an array that the caller kept, and copying the
    /// solution while the vectors were alive, made nine on maximum entropy's refit of
    /// debian-sections (1,216 MB peak, `docs/benchmarks.md`, session 19).
    func minimize<Objective: SecondOrderObjective>(_ objective: Objective, count: Int,
                                                   start: (UnsafeMutableBufferPointer<Float>) -> Void) -> Result {
        let (point, summary) = {
            var run = NewtonRun(objective: objective, count: count, threads: max(1, threads), start: start)
            return run.solve(tolerance: tolerance, maxIterations: maxIterations)
        }()
        return Result(solution: point.array, summary: summary)
    }
}

/// The state of one trust-region Newton minimization.
private struct NewtonRun<Objective: SecondOrderObjective> {
    let objective: Objective
    let vectors: BlockedVectors
    var point: SharedBuffer<Float>
    let gradient: SharedBuffer<Float>
    /// The preconditioner `M`, a positive diagonal.
    let preconditioner: SharedBuffer<Float>
    let step: SharedBuffer<Float>
    let residual: SharedBuffer<Float>
    let direction: SharedBuffer<Float>
    /// `∇²f d` during conjugate gradient, then the trial point `x + s`.
    var product: SharedBuffer<Float>
    var value = 0.0
    var evaluations = 0
    var conjugateGradientSteps = 0

    /// A run over `count` variables, from the point that `start` writes over zeros, before the
    /// working vectors are allocated.
    init(objective: Objective, count: Int, threads: Int, start: (UnsafeMutableBufferPointer<Float>) -> Void) {
        self.objective = objective
        vectors = BlockedVectors(count: count, threads: threads)
        point = SharedBuffer(count: count, repeating: 0)
        start(point.buffer)
        gradient = SharedBuffer(count: count, repeating: 0)
        preconditioner = SharedBuffer(count: count, repeating: 1)
        step = SharedBuffer(count: count, repeating: 0)
        residual = SharedBuffer(count: count, repeating: 0)
        direction = SharedBuffer(count: count, repeating: 0)
        product = SharedBuffer(count: count, repeating: 0)
    }

    /// `f`, `∇f` and the preconditioner at ``point``; returns `‖∇f‖₂`.
    private mutating func evaluatePoint() -> Double {
        value = objective.evaluate(UnsafeBufferPointer(point.buffer), gradient.buffer)
        evaluations += 1
        objective.hessianDiagonal(into: preconditioner.buffer)
        let mix = Float(TrustRegionNewton.preconditionerMix), m = SharedPointer(preconditioner.base)
        _ = vectors.forEachBlock { range in
            for index in range { m.base[index] = (1 - mix) + mix * m.base[index] }
        }
        return vectors.dot(gradient, gradient).squareRoot()
    }

    /// Iterates from ``point`` until a stopping rule of ``TrustRegionNewton`` holds.
    /// - Returns: The buffer that holds the last point, and how the run went.
    mutating func solve(tolerance: Double, maxIterations: Int) -> (SharedBuffer<Float>, TrustRegionNewton.Summary) {
        let (eta0, eta1, eta2) = (1e-4, 0.25, 0.75)
        let (sigma1, sigma2, sigma3) = (0.25, 0.5, 4.0)
        // As LIBLINEAR: the tolerance is relative to ‖∇f(0)‖, so that a warm start near the
        // optimum stops at once instead of chasing a fraction of its own tiny gradient.
        var initialNorm = 0.0
        if point.buffer.contains(where: { $0 != 0 }) {
            step.fill(0)
            _ = objective.evaluate(UnsafeBufferPointer(step.buffer), gradient.buffer)
            evaluations += 1
            initialNorm = vectors.dot(gradient, gradient).squareRoot()
        }
        var gradientNorm = evaluatePoint()
        if initialNorm == 0 { initialNorm = gradientNorm }
        var radius = vectors.weightedDot(gradient.base, preconditioner.base, gradient.base).squareRoot()
        var iterations = 0
        var stop = TrustRegionNewton.Stop.iterationLimit
        var first = true
        while true {
            if !(gradientNorm > tolerance * initialNorm) { stop = .converged; break }
            if iterations >= maxIterations { stop = .iterationLimit; break }
            let (reachedBoundary, stepNorm) = conjugateGradient(radius: radius)
            vectors.combine(point.base, 1, step.base, into: product.base)
            let slope = vectors.dot(gradient, step)
            let predicted = -0.5 * (slope - vectors.dot(step, residual))
            let trialValue = objective.value(at: UnsafeBufferPointer(product.buffer))
            evaluations += 1
            let actual = value - trialValue
            if first { radius = min(radius, stepNorm); first = false }
            let curvature = trialValue - value - slope
            let alpha = curvature <= 0 ? sigma3 : max(sigma1, -0.5 * (slope / curvature))
            if !(actual >= eta0 * predicted) {
                radius = min(alpha * stepNorm, sigma2 * radius)
            } else if actual < eta1 * predicted {
                radius = max(sigma1 * radius, min(alpha * stepNorm, sigma2 * radius))
            } else if actual < eta2 * predicted {
                radius = max(sigma1 * radius, min(alpha * stepNorm, sigma3 * radius))
            } else if reachedBoundary {
                radius = sigma3 * radius
            } else {
                radius = max(radius, min(alpha * stepNorm, sigma3 * radius))
            }
            if actual > eta0 * predicted {
                iterations += 1
                swap(&point, &product)
                gradientNorm = evaluatePoint()
            }
            if !(predicted > 0) || (abs(actual) <= 1e-12 * abs(value) && abs(predicted) <= 1e-12 * abs(value)) {
                if gradientNorm > tolerance * initialNorm { stop = .noProgress; break }
            }
        }
        let summary = TrustRegionNewton.Summary(value: value, gradientNorm: gradientNorm, initialGradientNorm: initialNorm,
                                                iterations: iterations, conjugateGradientSteps: conjugateGradientSteps,
                                                evaluations: evaluations, stop: stop)
        return (point, summary)
    }

    /// Approximately minimizes `q(s) = ∇fᵀs + ½ sᵀ∇²f s` over `‖s‖_M ≤ radius` by conjugate
    /// gradient preconditioned with `M` (Steihaug's truncated CG), leaving `s` in ``step`` and
    /// `r = −∇f − ∇²f s` in ``residual``. Returns whether it stopped on the boundary, and `‖s‖_M`.
    private mutating func conjugateGradient(radius: Double) -> (reachedBoundary: Bool, stepNorm: Double) {
        let m = preconditioner.base
        step.fill(0)
        vectors.combine(step.base, -1, gradient.base, into: residual.base)
        var residualSquare = vectors.precondition(residual.base, m, beta: 0, into: direction.base)
        let relativeDecrease = min(TrustRegionNewton.conjugateGradientTolerance, residualSquare.squareRoot().squareRoot())
        var model = 0.0
        var stepSquare = 0.0
        var steps = 0
        while steps < max(point.count, 5) {
            steps += 1
            conjugateGradientSteps += 1
            objective.hessianProduct(UnsafeBufferPointer(direction.buffer), into: product.buffer)
            let curvature = vectors.dot(direction, product)
            guard curvature > 1e-16 else { break }
            let alpha = residualSquare / curvature
            let newSquare = vectors.combineAndWeightedSquare(step.base, Float(alpha), direction.base, m, into: step.base)
            if newSquare.squareRoot() > radius {
                // Back to the previous step, then to where the direction crosses the boundary.
                vectors.combine(step.base, Float(-alpha), direction.base, into: step.base)
                let sd = vectors.weightedDot(step.base, m, direction.base)
                let dd = vectors.weightedDot(direction.base, m, direction.base)
                let gap = radius * radius - stepSquare
                let root = (sd * sd + dd * gap).squareRoot()
                let boundaryAlpha = sd >= 0 ? gap / (sd + root) : (root - sd) / dd
                vectors.combine(step.base, Float(boundaryAlpha), direction.base, into: step.base)
                vectors.combine(residual.base, Float(-boundaryAlpha), product.base, into: residual.base)
                return (true, radius)
            }
            stepSquare = newSquare
            vectors.combine(residual.base, Float(-alpha), product.base, into: residual.base)
            // q falls by ½ α rᵀM⁻¹r at each CG step.
            let decrease = 0.5 * alpha * residualSquare
            let newModel = model - decrease
            if Double(steps) * decrease <= relativeDecrease * -newModel { break }
            model = newModel
            let newResidualSquare = vectors.preconditionedSquare(residual.base, m)
            _ = vectors.precondition(residual.base, m, beta: Float(newResidualSquare / residualSquare), into: direction.base)
            residualSquare = newResidualSquare
        }
        return (false, stepSquare.squareRoot())
    }
}

extension BlockedVectors {
    /// `Σ aᵢ mᵢ bᵢ`.
    func weightedDot(_ a: UnsafePointer<Float>, _ m: UnsafePointer<Float>, _ b: UnsafePointer<Float>) -> Double {
        let a = SharedPointer(readOnly: a), m = SharedPointer(readOnly: m), b = SharedPointer(readOnly: b)
        return forEachBlock { range in
            var sum = 0.0
            for index in range { sum += Double(a.base[index] * m.base[index]) * Double(b.base[index]) }
            return sum
        }.reduce(0, +)
    }

    /// `out ← x + α d`, returning `Σ mᵢ outᵢ²`.
    func combineAndWeightedSquare(_ x: UnsafePointer<Float>, _ alpha: Float, _ d: UnsafePointer<Float>,
                                  _ m: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) -> Double {
        let x = SharedPointer(readOnly: x), d = SharedPointer(readOnly: d), m = SharedPointer(readOnly: m)
        let out = SharedPointer(out)
        return forEachBlock { range in
            VectorKernels.combine(x.base, alpha, d.base, out.base, range)
            var sum = 0.0
            for index in range { sum += Double(m.base[index] * out.base[index]) * Double(out.base[index]) }
            return sum
        }.reduce(0, +)
    }

    /// `Σ rᵢ² / mᵢ`.
    func preconditionedSquare(_ r: UnsafePointer<Float>, _ m: UnsafePointer<Float>) -> Double {
        let r = SharedPointer(readOnly: r), m = SharedPointer(readOnly: m)
        return forEachBlock { range in
            var sum = 0.0
            for index in range { sum += Double(r.base[index] / m.base[index]) * Double(r.base[index]) }
            return sum
        }.reduce(0, +)
    }

    /// `d ← r / m + β d` (with `β = 0`, `d`'s old contents are ignored), returning `Σ rᵢ² / mᵢ`.
    func precondition(_ r: UnsafePointer<Float>, _ m: UnsafePointer<Float>, beta: Float,
                      into d: UnsafeMutablePointer<Float>) -> Double {
        let r = SharedPointer(readOnly: r), m = SharedPointer(readOnly: m), d = SharedPointer(d)
        return forEachBlock { range in
            var sum = 0.0
            for index in range {
                let z = r.base[index] / m.base[index]
                d.base[index] = beta == 0 ? z : z + beta * d.base[index]
                sum += Double(z) * Double(r.base[index])
            }
            return sum
        }.reduce(0, +)
    }
}

extension SoftmaxLoss: SecondOrderObjective {}

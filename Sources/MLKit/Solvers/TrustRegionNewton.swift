/// A function that a Newton method can minimize: its value, its gradient, and products of its
/// Hessian with a vector, taken without storing the product.
protocol SecondOrderObjective {
    /// Returns `f(point)`, writes `∇f(point)` into `gradient`, and makes `point` the point `x`
    /// where the Hessian is taken.
    func evaluate(_ point: UnsafeBufferPointer<Float>, _ gradient: UnsafeMutableBufferPointer<Float>) -> Double
    /// `f(point + step)` (`f(point)` when `step` is `nil`), leaving `x` as it was.
    func value(at point: UnsafeBufferPointer<Float>, plus step: UnsafeBufferPointer<Float>?) -> Double
    /// Hands the diagonal of `∇²f(x)` to `preconditioner`.
    func hessianDiagonal(into preconditioner: Preconditioner)
    /// Returns `directionᵀ ∇²f(x) direction`, and prepares ``addHessianProduct(_:scale:to:)`` for
    /// `direction`.
    func hessianCurvature(along direction: UnsafeBufferPointer<Float>) -> Double
    /// Adds `scale · ∇²f(x) direction` to `target`, `direction` the one given to the last
    /// ``hessianCurvature(along:)``.
    func addHessianProduct(_ direction: UnsafeBufferPointer<Float>, scale: Float,
                           to target: UnsafeMutableBufferPointer<Float>)
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
/// It keeps four vectors of single precision (the point `x`, the step `s`, the CG direction `d`
/// and the CG residual `r`, which holds `∇f` between two runs of CG) and the preconditioner `M`
/// in bfloat16: four and a half vectors' worth, where a plain implementation keeps seven (`∇f`,
/// `M` and `∇²f d` as vectors of their own). `∇²f d` is added
/// into `r` without being stored, `∇fᵀs` and the model's decrease come from CG's scalars, and the
/// trial point `x + s` is never formed. The price is one evaluation of `∇f` more after each
/// rejected step. Dot products and `f` are double. Vector operations run on ``threads`` threads
/// in fixed blocks (``BlockedVectors``), so results depend neither on the thread count nor on
/// scheduling.
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
    /// No copy of the start lives beside the working vectors: `start` runs before the others are
    /// allocated, so whatever it reads from can be freed by then. They are all freed before the
    /// solution is copied out, so that at most four and a half vectors of `count` floats are
    /// alive at once. Handing the start in an array that the caller kept, and copying the
    /// solution while the vectors were alive, made nine on maximum entropy's refit of
    /// debian-sections (1,216 MB peak).
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
    let point: SharedBuffer<Float>
    /// `∇f` at ``point`` until conjugate gradient starts from it, then the CG residual
    /// `r = −∇f − ∇²f s`. After a rejected step, `∇f` is computed again into it
    /// (``gradientIsCurrent``).
    let residual: SharedBuffer<Float>
    /// The preconditioner `M`, a positive diagonal, in bfloat16.
    let preconditioner: Preconditioner
    let step: SharedBuffer<Float>
    let direction: SharedBuffer<Float>
    /// Whether ``residual`` holds `∇f` at ``point``.
    var gradientIsCurrent = false
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
        residual = SharedBuffer(count: count, repeating: 0)
        preconditioner = Preconditioner(count: count, mix: Float(TrustRegionNewton.preconditionerMix))
        step = SharedBuffer(count: count, repeating: 0)
        direction = SharedBuffer(count: count, repeating: 0)
    }

    /// `f`, `∇f` (into ``residual``) and the preconditioner at ``point``; returns `‖∇f‖₂`.
    private mutating func evaluatePoint() -> Double {
        value = objective.evaluate(UnsafeBufferPointer(point.buffer), residual.buffer)
        evaluations += 1
        gradientIsCurrent = true
        objective.hessianDiagonal(into: preconditioner)
        return vectors.dot(residual, residual).squareRoot()
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
            _ = objective.evaluate(UnsafeBufferPointer(step.buffer), residual.buffer)
            evaluations += 1
            initialNorm = vectors.dot(residual, residual).squareRoot()
        }
        var gradientNorm = evaluatePoint()
        if initialNorm == 0 { initialNorm = gradientNorm }
        var radius = vectors.weightedDot(residual.base, preconditioner, residual.base).squareRoot()
        var iterations = 0
        var stop = TrustRegionNewton.Stop.iterationLimit
        var first = true
        while true {
            if !(gradientNorm > tolerance * initialNorm) { stop = .converged; break }
            if iterations >= maxIterations { stop = .iterationLimit; break }
            if !gradientIsCurrent {
                // The last step was rejected, and conjugate gradient used up ∇f at the point: the
                // same evaluation gives it again, bit for bit (the preconditioner is unchanged).
                _ = objective.evaluate(UnsafeBufferPointer(point.buffer), residual.buffer)
                evaluations += 1
                gradientIsCurrent = true
            }
            let (reachedBoundary, stepNorm, slope, predicted) = conjugateGradient(radius: radius)
            gradientIsCurrent = false
            let trialValue = objective.value(at: UnsafeBufferPointer(point.buffer), plus: UnsafeBufferPointer(step.buffer))
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
                vectors.combine(point.base, 1, step.base, into: point.base)
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
    /// gradient preconditioned with `M` (Steihaug's truncated CG), from `∇f` in ``residual``,
    /// leaving `s` in ``step`` and `r = −∇f − ∇²f s` in ``residual``.
    ///
    /// `∇²f d` is never stored: the objective gives `dᵀ∇²f d` first, then adds `−α ∇²f d` to
    /// `r`. `∇fᵀs` and `q(s)` come from the CG scalars: with `ρᵢ = rᵢᵀM⁻¹rᵢ`, `∇fᵀdᵢ = −ρᵢ`,
    /// since the directions are `∇²f`-conjugate and each `rᵢ` is orthogonal to `dᵢ₋₁`; so a step
    /// `αᵢ dᵢ` adds `−αᵢρᵢ` to `∇fᵀs` and `−½αᵢρᵢ` to `q`.
    /// - Returns: Whether it stopped on the boundary, `‖s‖_M`, `∇fᵀs`, and the predicted
    ///   reduction `−q(s)`.
    private mutating func conjugateGradient(radius: Double)
        -> (reachedBoundary: Bool, stepNorm: Double, slope: Double, predicted: Double) {
        let m = preconditioner
        step.fill(0)
        vectors.combine(step.base, -1, residual.base, into: residual.base)
        var residualSquare = vectors.precondition(residual.base, m, beta: 0, into: direction.base)
        let relativeDecrease = min(TrustRegionNewton.conjugateGradientTolerance, residualSquare.squareRoot().squareRoot())
        var model = 0.0
        var slope = 0.0
        var stepSquare = 0.0
        var steps = 0
        let d = UnsafeBufferPointer(direction.buffer)
        while steps < max(point.count, 5) {
            steps += 1
            conjugateGradientSteps += 1
            let curvature = objective.hessianCurvature(along: d)
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
                objective.addHessianProduct(d, scale: Float(-boundaryAlpha), to: residual.buffer)
                slope -= boundaryAlpha * residualSquare
                model += -boundaryAlpha * residualSquare + 0.5 * boundaryAlpha * boundaryAlpha * curvature
                return (true, radius, slope, -model)
            }
            stepSquare = newSquare
            objective.addHessianProduct(d, scale: Float(-alpha), to: residual.buffer)
            slope -= alpha * residualSquare
            // q falls by ½ α rᵀM⁻¹r at each CG step.
            let decrease = 0.5 * alpha * residualSquare
            model -= decrease
            if Double(steps) * decrease <= relativeDecrease * -model { break }
            let newResidualSquare = vectors.preconditionedSquare(residual.base, m)
            _ = vectors.precondition(residual.base, m, beta: Float(newResidualSquare / residualSquare),
                                     into: direction.base)
            residualSquare = newResidualSquare
        }
        return (false, stepSquare.squareRoot(), slope, -model)
    }
}

/// The diagonal preconditioner `M = (1 − a) I + a diag(∇²f)` of ``TrustRegionNewton``, kept in
/// bfloat16 (the high half of a float's bits, rounded to nearest even): any positive diagonal
/// is a valid preconditioner, and the conjugate-gradient steps hardly change (111 → 114 on
/// maximum entropy's debian-sections, 105 → 112 on wordnet-hypernyms, against float32 and the
/// seven-vector layout), for half the memory of a vector of floats. Against float32 storage in
/// the same layout, maximum entropy on debian-sections peaked at 806 MB instead of 895 MB, in
/// the same time within the noise (2-core AMD EPYC VM, 2026-11-26).
///
/// An objective hands it the diagonal of its Hessian piece by piece (``store(_:at:)``); parallel
/// workers may store disjoint pieces at once, which makes the unchecked `Sendable` conformance
/// sound.
final class Preconditioner: @unchecked Sendable {
    /// The entries, as the high 16 bits of their float bit patterns.
    let bits: UnsafeMutablePointer<UInt16>
    /// The number of entries.
    let count: Int
    /// The weight `a` of the Hessian's diagonal.
    let mix: Float

    /// A preconditioner of `count` entries, all 1 (the identity).
    init(count: Int, mix: Float) {
        self.count = count
        self.mix = mix
        bits = .allocate(capacity: max(count, 1))
        bits.initialize(repeating: Self.encode(1), count: count)
    }

    deinit { bits.deallocate() }

    /// Sets the entries `offset ..< offset + diagonal.count` from those of the Hessian's diagonal.
    func store(_ diagonal: UnsafeBufferPointer<Float>, at offset: Int) {
        precondition(offset >= 0 && offset + diagonal.count <= count, "outside the preconditioner")
        for (index, value) in diagonal.enumerated() { bits[offset + index] = Self.encode((1 - mix) + mix * value) }
    }

    /// Entry `index`.
    @inline(__always)
    subscript(index: Int) -> Float { Float(bitPattern: UInt32(bits[index]) << 16) }

    /// A positive finite float in bfloat16, rounded to nearest even.
    @inline(__always)
    static func encode(_ value: Float) -> UInt16 {
        let pattern = value.bitPattern
        return UInt16(truncatingIfNeeded: (pattern &+ 0x7FFF &+ ((pattern >> 16) & 1)) >> 16)
    }
}

extension BlockedVectors {
    /// `Σ aᵢ mᵢ bᵢ`.
    func weightedDot(_ a: UnsafePointer<Float>, _ m: Preconditioner, _ b: UnsafePointer<Float>) -> Double {
        let a = SharedPointer(readOnly: a), b = SharedPointer(readOnly: b)
        return forEachBlock { range in
            var sum = 0.0
            for index in range { sum += Double(a.base[index] * m[index]) * Double(b.base[index]) }
            return sum
        }.reduce(0, +)
    }

    /// `out ← x + α d`, returning `Σ mᵢ outᵢ²`.
    func combineAndWeightedSquare(_ x: UnsafePointer<Float>, _ alpha: Float, _ d: UnsafePointer<Float>,
                                  _ m: Preconditioner, into out: UnsafeMutablePointer<Float>) -> Double {
        let x = SharedPointer(readOnly: x), d = SharedPointer(readOnly: d)
        let out = SharedPointer(out)
        return forEachBlock { range in
            VectorKernels.combine(x.base, alpha, d.base, out.base, range)
            var sum = 0.0
            for index in range { sum += Double(m[index] * out.base[index]) * Double(out.base[index]) }
            return sum
        }.reduce(0, +)
    }

    /// `Σ rᵢ² / mᵢ`.
    func preconditionedSquare(_ r: UnsafePointer<Float>, _ m: Preconditioner) -> Double {
        let r = SharedPointer(readOnly: r)
        return forEachBlock { range in
            var sum = 0.0
            for index in range { sum += Double(r.base[index] / m[index]) * Double(r.base[index]) }
            return sum
        }.reduce(0, +)
    }

    /// `d ← r / m + β d` (with `β = 0`, `d`'s old contents are ignored), returning `Σ rᵢ² / mᵢ`.
    func precondition(_ r: UnsafePointer<Float>, _ m: Preconditioner, beta: Float,
                      into d: UnsafeMutablePointer<Float>) -> Double {
        let r = SharedPointer(readOnly: r), d = SharedPointer(d)
        return forEachBlock { range in
            var sum = 0.0
            for index in range {
                let z = r.base[index] / m[index]
                d.base[index] = beta == 0 ? z : z + beta * d.base[index]
                sum += Double(z) * Double(r.base[index])
            }
            return sum
        }.reduce(0, +)
    }
}

extension SoftmaxLoss: SecondOrderObjective {}

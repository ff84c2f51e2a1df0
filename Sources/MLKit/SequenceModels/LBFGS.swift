/// Limited-memory BFGS (Nocedal 1980; Liu and Nocedal 1989): minimizes a smooth function from
/// its values and gradients, approximating the inverse Hessian from the last few steps and
/// gradient changes by the two-loop recursion, with a backtracking line search (Armijo's
/// condition, quadratic interpolation).
///
/// The last `historySize` steps and gradient changes are kept as float32: they only shape the
/// search direction, and halving them keeps a model with millions of weights small in memory.
/// The point, the gradient and every sum are float64.
struct LBFGS {
    /// How many steps shape the direction.
    var historySize = 6
    /// The most iterations.
    var maxIterations: Int
    /// Stop when the value fell by less than this fraction over the last ``period`` iterations.
    var tolerance: Double
    /// The window of ``tolerance``.
    var period = 10
    /// Stop when `‖g‖ / max(1, ‖x‖)` falls below this.
    var gradientTolerance = 1e-5

    /// How the minimization ended.
    struct Result {
        var iterations: Int
        var value: Double
        /// Why it stopped: `converged`, `iterations`, `line search` or `stopped`.
        var reason: String
    }

    /// Minimizes `objective`, starting from `x` and leaving the minimum found there.
    /// - Parameters:
    ///   - objective: Writes the gradient at a point into its second argument and returns the
    ///     value there.
    ///   - afterIteration: Called with the iteration number, the value and the point after each
    ///     iteration; returns `false` to stop.
    ///   - firstDirection: A direction to search first, such as another model's weights from
    ///     a start at zero, used when it goes downhill; else the steepest descent.
    func minimize(_ x: inout [Double], firstDirection: [Double]? = nil,
                  objective: (UnsafeBufferPointer<Double>, UnsafeMutableBufferPointer<Double>) -> Double,
                  afterIteration: (Int, Double, UnsafeBufferPointer<Double>) -> Bool) -> Result {
        let n = x.count
        var gradient = [Double](repeating: 0, count: n)
        var value = evaluate(objective, x, &gradient)
        var trial = [Double](repeating: 0, count: n)
        var trialGradient = [Double](repeating: 0, count: n)
        var direction = gradient.map { -$0 }
        var step = 1 / max(Self.norm(direction), 1e-300)
        if let firstDirection, firstDirection.count == n, Self.dot(gradient, firstDirection) < 0 {
            direction = firstDirection
            step = 1
        }
        var steps: [[Float]] = [], changes: [[Float]] = [], curvatures: [Double] = []
        var values = [value]
        if Self.norm(gradient) / max(1, Self.norm(x)) < gradientTolerance {
            return Result(iterations: 0, value: value, reason: "converged")
        }
        for iteration in 1...max(1, maxIterations) {
            var slope = Self.dot(gradient, direction)
            if slope >= 0 {
                // Not a descent direction: start again from the steepest descent.
                for index in 0..<n { direction[index] = -gradient[index] }
                steps.removeAll(); changes.removeAll(); curvatures.removeAll()
                slope = Self.dot(gradient, direction)
                step = 1 / max(Self.norm(direction), 1e-300)
            }
            guard let trialValue = lineSearch(objective, x: x, value: value, direction: direction, slope: slope,
                                              step: step, trial: &trial, trialGradient: &trialGradient) else {
                return Result(iterations: iteration - 1, value: value, reason: "line search")
            }
            var s = [Float](repeating: 0, count: n), y = [Float](repeating: 0, count: n)
            var sy = 0.0, yy = 0.0
            for index in 0..<n {
                let ds = trial[index] - x[index], dy = trialGradient[index] - gradient[index]
                s[index] = Float(ds)
                y[index] = Float(dy)
                sy += ds * dy
                yy += dy * dy
            }
            swap(&x, &trial)
            swap(&gradient, &trialGradient)
            value = trialValue
            values.append(value)
            // Only a step along which the gradient grew (positive curvature) can join the history.
            if sy > 1e-12 * yy && yy > 0 {
                if steps.count == historySize {
                    steps.removeFirst(); changes.removeFirst(); curvatures.removeFirst()
                }
                steps.append(s)
                changes.append(y)
                curvatures.append(sy)
            }
            let keepGoing = x.withUnsafeBufferPointer { afterIteration(iteration, value, $0) }
            if !keepGoing { return Result(iterations: iteration, value: value, reason: "stopped") }
            if Self.norm(gradient) / max(1, Self.norm(x)) < gradientTolerance {
                return Result(iterations: iteration, value: value, reason: "converged")
            }
            if values.count > period {
                let earlier = values[values.count - 1 - period]
                if (earlier - value) / max(abs(value), 1e-300) < tolerance {
                    return Result(iterations: iteration, value: value, reason: "converged")
                }
            }
            if iteration == maxIterations { return Result(iterations: iteration, value: value, reason: "iterations") }
            twoLoop(gradient, steps, changes, curvatures, into: &direction)
            step = 1
        }
        return Result(iterations: maxIterations, value: value, reason: "iterations")
    }

    /// Finds a step along `direction` that meets the strong Wolfe conditions (sufficient
    /// decrease, `c₁ = 10⁻⁴`, and a flatter slope, `c₂ = 0.9`), by bracketing and zooming with
    /// cubic interpolation (Nocedal and Wright, *Numerical Optimization*, algorithms 3.5 and
    /// 3.6). Leaves the point, and its gradient, in `trial` and `trialGradient`.
    /// - Returns: The value at the point, or `nil` when no step decreased the value.
    private func lineSearch(_ objective: (UnsafeBufferPointer<Double>, UnsafeMutableBufferPointer<Double>) -> Double,
                            x: [Double], value: Double, direction: [Double], slope: Double, step initial: Double,
                            trial: inout [Double], trialGradient: inout [Double]) -> Double? {
        let (c1, c2) = (1e-4, 0.9)
        let n = x.count
        /// The value and slope at `step`, leaving the point in `trial`.
        func probe(_ step: Double) -> (value: Double, slope: Double) {
            for index in 0..<n { trial[index] = x[index] + step * direction[index] }
            let value = evaluate(objective, trial, &trialGradient)
            return (value, Self.dot(trialGradient, direction))
        }
        var evaluations = 0
        var last = 0.0  // the step whose point `trial` holds
        func at(_ step: Double) -> (value: Double, slope: Double) {
            evaluations += 1
            last = step
            return probe(step)
        }
        /// The step `step` as the result, re-evaluated when `trial` holds another.
        func accept(_ step: Double, _ value: Double) -> Double {
            if step != last { _ = at(step) }
            return value
        }
        func zoom(_ lowStart: (step: Double, value: Double, slope: Double),
                  _ highStart: (step: Double, value: Double, slope: Double)) -> Double? {
            var low = lowStart, high = highStart
            while evaluations < 40 {
                let step = Self.interpolate(low, high)
                let (probeValue, probeSlope) = at(step)
                if !probeValue.isFinite || probeValue > value + c1 * step * slope || probeValue >= low.value {
                    high = (step, probeValue, probeSlope)
                } else {
                    if abs(probeSlope) <= -c2 * slope { return probeValue }
                    if probeSlope * (high.step - low.step) >= 0 { high = low }
                    low = (step, probeValue, probeSlope)
                }
                if abs(high.step - low.step) <= 1e-12 * max(1, abs(low.step)) { break }
            }
            // The bracket has shrunk to nothing: keep its best end if it decreased the value.
            return low.step > 0 && low.value < value ? accept(low.step, low.value) : nil
        }
        var previous = (step: 0.0, value: value, slope: slope)
        var step = initial
        while evaluations < 40 {
            let (probeValue, probeSlope) = at(step)
            if !probeValue.isFinite || probeValue > value + c1 * step * slope
                || (evaluations > 1 && probeValue >= previous.value) {
                return zoom(previous, (step, probeValue, probeSlope))
            }
            if abs(probeSlope) <= -c2 * slope { return probeValue }
            if probeSlope >= 0 { return zoom((step, probeValue, probeSlope), previous) }
            previous = (step, probeValue, probeSlope)
            step *= 2
        }
        return previous.step > 0 ? accept(previous.step, previous.value) : nil
    }

    /// The minimizer of the cubic that fits the values and slopes at two steps, kept inside the
    /// middle 80% of the interval; the midpoint when the cubic has none there.
    private static func interpolate(_ a: (step: Double, value: Double, slope: Double),
                                    _ b: (step: Double, value: Double, slope: Double)) -> Double {
        let (low, high) = (min(a.step, b.step), max(a.step, b.step))
        let d1 = a.slope + b.slope - 3 * (a.value - b.value) / (a.step - b.step)
        let square = d1 * d1 - a.slope * b.slope
        var candidate = (low + high) / 2
        if square >= 0 && a.step != b.step {
            let d2 = (b.step > a.step ? 1.0 : -1.0) * square.squareRoot()
            let cubic = b.step - (b.step - a.step) * (b.slope + d2 - d1) / (b.slope - a.slope + 2 * d2)
            if cubic.isFinite { candidate = cubic }
        }
        let margin = 0.1 * (high - low)
        return min(max(candidate, low + margin), high - margin)
    }

    private func evaluate(_ objective: (UnsafeBufferPointer<Double>, UnsafeMutableBufferPointer<Double>) -> Double,
                          _ x: [Double], _ gradient: inout [Double]) -> Double {
        x.withUnsafeBufferPointer { x in gradient.withUnsafeMutableBufferPointer { objective(x, $0) } }
    }

    /// The direction `−H g`, with `H` the inverse Hessian approximated from the history.
    private func twoLoop(_ gradient: [Double], _ steps: [[Float]], _ changes: [[Float]], _ curvatures: [Double],
                         into direction: inout [Double]) {
        let n = gradient.count
        for index in 0..<n { direction[index] = -gradient[index] }
        guard let lastCurvature = curvatures.last else { return }
        var alphas = [Double](repeating: 0, count: steps.count)
        for k in stride(from: steps.count - 1, through: 0, by: -1) {
            let alpha = Self.dot(steps[k], direction) / curvatures[k]
            alphas[k] = alpha
            changes[k].withUnsafeBufferPointer { y in
                for index in 0..<n { direction[index] -= alpha * Double(y[index]) }
            }
        }
        let lastChange = changes[changes.count - 1]
        let yy = Self.dot(lastChange, lastChange.map(Double.init))
        let gamma = yy > 0 ? lastCurvature / yy : 1
        for index in 0..<n { direction[index] *= gamma }
        for k in 0..<steps.count {
            let beta = Self.dot(changes[k], direction) / curvatures[k]
            let alpha = alphas[k]
            steps[k].withUnsafeBufferPointer { s in
                for index in 0..<n { direction[index] += (alpha - beta) * Double(s[index]) }
            }
        }
    }

    static func dot(_ a: [Double], _ b: [Double]) -> Double {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                var sum = 0.0
                for index in 0..<a.count { sum += a[index] * b[index] }
                return sum
            }
        }
    }

    static func dot(_ a: [Float], _ b: [Double]) -> Double {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                var sum = 0.0
                for index in 0..<a.count { sum += Double(a[index]) * b[index] }
                return sum
            }
        }
    }

    static func norm(_ a: [Double]) -> Double { dot(a, a).squareRoot() }
}

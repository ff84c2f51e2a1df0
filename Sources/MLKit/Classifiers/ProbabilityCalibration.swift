import Foundation

/// Maps a linear model's scores to probabilities fitted on held-out data: Platt scaling for
/// margins (SVM) and a softmax temperature for log-linear scores (naive Bayes).
enum ProbabilityCalibration {
    /// Platt's sigmoid `P(positive | f) = 1 / (1 + exp(a·f + b))` fitted to decision values `f`
    /// (Platt 1999), in the robust form of Lin, Lin & Weng, "A note on Platt's probabilistic
    /// outputs for support vector machines", Machine Learning 68 (2007), Algorithm 1.
    ///
    /// It minimizes the cross-entropy `−Σᵢ tᵢ log pᵢ + (1 − tᵢ) log(1 − pᵢ)` against smoothed
    /// targets `t₊ = (N₊ + 1)/(N₊ + 2)` and `t₋ = 1/(N₋ + 2)`, from `a = 0`,
    /// `b = log((N₋ + 1)/(N₊ + 1))`, by Newton's method on `(a, b)` with the Hessian shifted by
    /// `σ = 10⁻¹²` and a backtracking line search (sufficient decrease `10⁻⁴`, steps halved down
    /// to `10⁻¹⁰`). Each term is evaluated in the overflow-free form for the sign of `a·f + b`.
    /// It stops when both gradient components are below `10⁻⁵` or after 100 iterations.
    ///
    /// With many values (``subsampledStartThreshold``), Newton's method first runs the same way
    /// on about a thousand of them (every `n / 1024`-th, with the targets of all of them), and the
    /// fit on all of them starts from that solution instead of `a = 0`: the same optimum, in
    /// fewer passes over all the values. On fortunes-topic's refit (39 sigmoids on 11,945
    /// training decision values, with slopes of −12 to −17) the fit from `a = 0` took 12.9
    /// evaluations of the loss on average.
    /// - Returns: `(a, b)`; `a` is negative when larger decision values mean "positive".
    static func plattParameters(decisionValues: [Double], positives: [Bool]) -> (a: Double, b: Double) {
        let (targets, prior) = plattTargets(positives)
        var start = prior
        if decisionValues.count >= subsampledStartThreshold {
            let sample = Array(stride(from: 0, to: decisionValues.count, by: decisionValues.count / 1024))
            let fitted = plattNewton(decisionValues: sample.map { decisionValues[$0] }, targets: sample.map { targets[$0] },
                                     start: prior).parameters
            if fitted.a.isFinite && fitted.b.isFinite { start = fitted }
        }
        return plattNewton(decisionValues: decisionValues, targets: targets, start: start).parameters
    }

    /// From how many decision values ``plattParameters(decisionValues:positives:)`` starts
    /// from a subsample's fit.
    static let subsampledStartThreshold = 4096

    /// The smoothed targets of Platt's fit, `t₊ = (N₊ + 1)/(N₊ + 2)` for a positive and `t₋ =
    /// 1/(N₋ + 2)` for a negative, and its usual start, `a = 0`, `b = log((N₋ + 1)/(N₊ + 1))`.
    static func plattTargets(_ positives: [Bool]) -> (targets: [Double], prior: (a: Double, b: Double)) {
        let positiveCount = Double(positives.filter { $0 }.count)
        let negativeCount = Double(positives.count) - positiveCount
        let high = (positiveCount + 1) / (positiveCount + 2), low = 1 / (negativeCount + 2)
        return (positives.map { $0 ? high : low }, (0, log((negativeCount + 1) / (positiveCount + 1))))
    }

    /// Newton's method of ``plattParameters(decisionValues:positives:)`` on `targets`
    /// (``plattTargets(_:)``), from `start`.
    /// - Returns: The parameters, and how many times the loss was evaluated.
    static func plattNewton(decisionValues: [Double], targets: [Double], start: (a: Double, b: Double))
        -> (parameters: (a: Double, b: Double), evaluations: Int) {
        var (a, b) = start
        var current = plattTerms(decisionValues, targets, a, b)
        var evaluations = 1
        for _ in 0..<100 {
            if abs(current.g1) < 1e-5 && abs(current.g2) < 1e-5 { break }
            let determinant = current.h11 * current.h22 - current.h21 * current.h21
            let dA = -(current.h22 * current.g1 - current.h21 * current.g2) / determinant
            let dB = -(-current.h21 * current.g1 + current.h11 * current.g2) / determinant
            let slope = current.g1 * dA + current.g2 * dB
            var step = 1.0
            while step >= 1e-10 {
                let trial = plattTerms(decisionValues, targets, a + step * dA, b + step * dB)
                evaluations += 1
                if trial.value < current.value + 1e-4 * step * slope {
                    a += step * dA
                    b += step * dB
                    current = trial
                    break
                }
                step /= 2
            }
            if step < 1e-10 { break }
        }
        return ((a, b), evaluations)
    }

    /// The cross-entropy of Platt's sigmoid, `Σᵢ tᵢ zᵢ + log(1 + e^{−zᵢ})` with `zᵢ = a fᵢ + b`,
    /// with its gradient `(g₁, g₂)` and its Hessian shifted by `σ = 10⁻¹²` `(h₁₁, h₂₂, h₂₁)`,
    /// all from one exponential and one logarithm per value: with `e = exp(−|z|)`, the loss term
    /// is `t z + log1p(e)` for `z ≥ 0` and `(t − 1) z + log1p(e)` otherwise, and
    /// `p = 1/(1 + exp(z))` is `e/(1 + e)` or `1/(1 + e)`.

    static func plattTerms(_ values: [Double], _ targets: [Double], _ a: Double, _ b: Double)
        -> (value: Double, g1: Double, g2: Double, h11: Double, h22: Double, h21: Double) {
        var value = 0.0, h11 = 1e-12, h22 = 1e-12, h21 = 0.0, g1 = 0.0, g2 = 0.0
        for index in values.indices {
            let f = values[index], z = f * a + b
            let e = exp(-abs(z)), inverse = 1 / (1 + e)
            value += (z >= 0 ? targets[index] * z : (targets[index] - 1) * z) + log1p(e)
            let p = z >= 0 ? e * inverse : inverse
            let d2 = e * inverse * inverse
            h11 += f * f * d2
            h22 += d2
            h21 += f * d2
            let d1 = targets[index] - p
            g1 += f * d1
            g2 += d1
        }
        return (value, g1, g2, h11, h22, h21)
    }

    /// One-vs-rest Platt scaling: for each class `c`, ``plattParameters(decisionValues:positives:)``
    /// on the scores of class `c` with "label is `c`" as the positive event. A class whose fitted
    /// slope `a` is not negative keeps `a = −1, b = 0`, the logistic of the margin, so that
    /// calibration can never reverse the order of a class's scores.
    /// - Parameters:
    ///   - scores: Row-major `rows × classes` decision values.
    ///   - labels: The class of each row.
    ///   - classes: The number of classes.
    ///   - threads: Worker threads (0: all cores); classes are fitted independently, so the
    ///     result does not depend on it.
    static func fitPlatt(scores: [Float], labels: [Int32], classes: Int, threads: Int = 1) -> LinearModel.ProbabilityMapping {
        let parts = Parallel.map(classes, threads: threads == 0 ? Parallel.defaultThreadCount : threads) { lanes in
            lanes.map { lane -> (a: Double, b: Double) in
                let fitted = plattParameters(decisionValues: labels.indices.map { Double(scores[$0 * classes + lane]) },
                                             positives: labels.map { Int($0) == lane })
                // A sigmoid that does not rise with the decision value (too few or unrepresentative
                // examples) would invert the classifier; keep the plain logistic of the margin then.
                guard fitted.a < -1e-6, fitted.a.isFinite, fitted.b.isFinite else { return (-1, 0) }
                return fitted
            }
        }
        let fitted = parts.flatMap { $0 }
        return .platt(a: fitted.map { Float($0.a) }, b: fitted.map { Float($0.b) })
    }

    /// The probability mapping of a one-vs-rest SVM, fitted on labelled decision values.
    ///
    /// Platt's per-class sigmoids (``fitPlatt(scores:labels:classes:threads:)``) can change which
    /// class scores highest; a softmax temperature (``fitTemperature(scores:labels:classes:)``)
    /// keeps the largest decision value on top, as LIBLINEAR and scikit-learn predict. With more
    /// than two classes, both are fitted and the one that labels more of these examples correctly
    /// is kept (Platt on a tie). With two classes Platt's sigmoid rises with the one decision
    /// value, so it never changes the label.
    static func fitSVMMapping(scores: [Float], labels: [Int32], classes: Int,
                              threads: Int = 1) -> LinearModel.ProbabilityMapping {
        let platt = fitPlatt(scores: scores, labels: labels, classes: classes, threads: threads)
        guard classes > 2 else { return platt }
        let softmax = LinearModel.ProbabilityMapping.softmax(
            temperature: fitTemperature(scores: scores, labels: labels, classes: classes, threads: threads))
        return correctCount(softmax, scores: scores, labels: labels, classes: classes)
            > correctCount(platt, scores: scores, labels: labels, classes: classes) ? softmax : platt
    }

    /// How many rows of `scores` the mapping labels with their own class (the first of equal
    /// values wins, as in prediction).
    static func correctCount(_ mapping: LinearModel.ProbabilityMapping, scores: [Float], labels: [Int32],
                             classes: Int) -> Int {
        var ordered = scores
        ordered.withUnsafeMutableBufferPointer { all in
            for row in labels.indices {
                mapping.order(fromScores: UnsafeMutableBufferPointer(rebasing: all[(row * classes)..<((row + 1) * classes)]))
            }
        }
        return labels.indices.filter { row in
            LinearModel.argmax(ordered[(row * classes)..<((row + 1) * classes)]) == labels[row]
        }.count
    }

    /// The temperature `T` that minimizes the negative log-likelihood of `softmax(s / T)` on
    /// labelled scores (Guo et al., "On calibration of modern neural networks", ICML 2017).
    ///
    /// With `β = 1/T`, `NLL(β) = Σᵢ logsumexp(β sᵢ) − β sᵢ,yᵢ` is convex, and its derivative
    /// `Σᵢ E_{softmax(β sᵢ)}[sᵢ] − sᵢ,yᵢ` increases with `β`; the root is bracketed by doubling
    /// and found by Newton's method on the derivative (the second derivative is the sum of the
    /// scores' variances), falling back to bisection whenever a step would leave the bracket:
    /// about ten passes over the scores, where bisection to the same precision took sixty. It
    /// stops when `β` moves by less than 10⁻⁹ of itself, 60 times finer than the `Float` it is
    /// returned as. (At 10⁻¹², below the rounding noise of the derivative summed over a million
    /// scores, the Newton steps near the root fell outside the bracket and bisection crawled
    /// there: up to 44 passes instead of 6, for the same `Float` in all 31 fits of five
    /// benchmark sets, docs/benchmarks.md.)
    /// Scores that predict worse than chance give `β = 0`, returned as `T = 10⁶` (uniform
    /// probabilities). Perfectly separated scores give a `β` at which the derivative rounds to
    /// 0 (all probabilities to 0 and 1), and at most `β = 2³⁰`.
    /// - Parameter threads: Worker threads for each pass (0: all cores); the result does not
    ///   depend on it.
    static func fitTemperature(scores: [Float], labels: [Int32], classes: Int, threads: Int = 1) -> Float {
        guard !labels.isEmpty, classes > 1 else { return 1 }
        // Below 100k scores (a validation set) a pass takes well under a millisecond.
        let threads = scores.count >= 100_000 ? threads : 1
        if temperatureSlope(scores, labels, classes, 0, threads: threads).slope >= 0 { return 1e6 }
        var low = 0.0, high = 1.0
        while temperatureSlope(scores, labels, classes, high, threads: threads).slope < 0 {
            guard high < 0x1p30 else { return Float(1 / high) }
            low = high
            high *= 2
        }
        var beta = (low + high) / 2
        for _ in 0..<100 {
            let (slope, curvature) = temperatureSlope(scores, labels, classes, beta, threads: threads)
            if slope < 0 { low = beta } else { high = beta }
            var next = beta - slope / curvature
            if !(next > low && next < high) { next = (low + high) / 2 }
            let converged = abs(next - beta) <= 1e-9 * beta || high - low <= 1e-9 * high
            beta = next
            if converged { break }
        }
        return Float(1 / beta)
    }

    /// `d NLL / dβ = Σᵢ (E_{softmax(β sᵢ)}[sᵢ] − sᵢ,yᵢ)` and `d² NLL / dβ² = Σᵢ Var_{softmax(β sᵢ)}[sᵢ]`.
    /// The rows' terms are computed on `threads` threads (0: all cores) and added in row order, so
    /// the sums are the same on any number of threads.
    private static func temperatureSlope(_ scores: [Float], _ labels: [Int32], _ classes: Int,
                                         _ beta: Double, threads: Int) -> (slope: Double, curvature: Double) {
        let parts = Parallel.balancedMap(labels.count, threads: threads) { rows in
            scores.withUnsafeBufferPointer { scores in
                rows.map { row -> (slope: Double, curvature: Double) in
                    let base = row * classes
                    let moments = softmaxMoments(scores.baseAddress! + base, classes: classes, beta: beta)
                    let mean = moments.expected / moments.weightSum
                    return (mean - Double(scores[base + Int(labels[row])]),
                            max(0, moments.expectedSquare / moments.weightSum - mean * mean))
                }
            }
        }
        var total = 0.0, curvature = 0.0
        for part in parts {
            for terms in part {
                total += terms.slope
                curvature += terms.curvature
            }
        }
        return (total, curvature)
    }

    /// The moments of `softmax(β s)` over one row of scores `s`: `Σ w`, `Σ w s` and `Σ w s²` with
    /// `w = exp(β s − max β s)`.
    @inline(__always)
    static func softmaxMoments(_ scores: UnsafePointer<Float>, classes: Int, beta: Double)
        -> (weightSum: Double, expected: Double, expectedSquare: Double) {
        var largest = -Double.infinity
        for lane in 0..<classes { largest = max(largest, beta * Double(scores[lane])) }
        var weightSum = 0.0, expected = 0.0, expectedSquare = 0.0
        for lane in 0..<classes {
            let score = Double(scores[lane])
            let weight = exp(beta * score - largest)
            weightSum += weight
            expected += weight * score
            expectedSquare += weight * score * score
        }
        return (weightSum, expected, expectedSquare)
    }

    /// `model` with its softmax temperature fitted on `validation`, or unchanged without one.
    /// - Parameter threads: Worker threads for the scores and the fit (0: all cores); the result
    ///   does not depend on it.
    static func withFittedTemperature(_ model: LinearModel, validation: TrainingProblem?, threads: Int) -> LinearModel {
        guard let validation, validation.matrix.rows > 0 else { return model }
        let temperature = fitTemperature(scores: model.scores(for: validation.matrix, threads: threads),
                                         labels: validation.labels, classes: model.classes, threads: threads)
        return model.with(probability: .softmax(temperature: temperature))
    }

    /// The mean negative log-likelihood `−(1/n) Σᵢ log pᵢ,yᵢ` of `model`'s probabilities on
    /// `problem`, with probabilities floored at 10⁻¹⁵.
    static func meanNegativeLogLikelihood(of model: LinearModel, on problem: TrainingProblem) -> Double {
        let probabilities = model.probabilities(for: problem.matrix)
        var total = 0.0
        for row in problem.labels.indices {
            total -= log(max(Double(probabilities[row * model.classes + Int(problem.labels[row])]), 1e-15))
        }
        return total / Double(max(problem.labels.count, 1))
    }
}

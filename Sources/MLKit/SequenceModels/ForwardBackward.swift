import Foundation

/// The forward-backward algorithm of a linear-chain CRF: the log partition function of a
/// sentence and the marginal probability of each label at each token, and of each pair of
/// consecutive labels, in O(n·L²) time.
///
/// It works with probabilities rather than their logarithms, rescaled at every position as
/// CRFsuite does: each token's scores are shifted by their maximum before `exp`, the forward
/// vector is normalized to sum to 1 at every step, and the backward vector is divided by the
/// same factors. So no `exp` overflows, and the sum of the logarithms of the factors and
/// shifts is `log Z`.
///
/// With `ψₜ[j] = exp(sₜ[j] − mₜ)` and `M[i][j] = exp(transitions[i][j])`:
/// `α₀ ∝ exp(start) ⊙ ψ₀`, `αₜ ∝ ψₜ ⊙ (αₜ₋₁ M)`, each scaled by `cₜ` to sum to 1;
/// `βₙ₋₁ = exp(end) / c_end` with `c_end = Σⱼ αₙ₋₁[j] exp(end[j])`, and
/// `βₜ = M (ψₜ₊₁ ⊙ βₜ₊₁) / cₜ₊₁`. Then `P(yₜ = j) = αₜ[j] βₜ[j]` and
/// `P(yₜ₋₁ = i, yₜ = j) = αₜ₋₁[i] M[i][j] ψₜ[j] βₜ[j] / cₜ`.
struct ForwardBackward {
    /// The exponentials of the transition, start and end weights, computed once per model.
    struct Potentials {
        let labelCount: Int
        /// `exp(transitions[i × L + j])`.
        let transitions: [Float]
        let start: [Float]
        let end: [Float]

        init(_ model: LinearChainModel.Views) {
            let labels = model.labelCount
            labelCount = labels
            transitions = (0..<(labels * labels)).map { Foundation.exp(model.transitions[$0]) }
            start = (0..<labels).map { Foundation.exp(model.start[$0]) }
            end = (0..<labels).map { Foundation.exp(model.end[$0]) }
        }
    }

    /// Buffers for one sentence at a time.
    private(set) var alpha: [Float] = []
    private(set) var beta: [Float] = []
    private var scale: [Float] = []
    private var weighted: [Float] = []

    init() {}

    /// Runs forward-backward on one sentence.
    /// - Parameters:
    ///   - scores: The state scores, `length × L`; replaced by the marginals `P(yₜ = j)`.
    ///   - length: The number of tokens, at least 1.
    ///   - potentials: The model's exponentiated weights.
    ///   - pairSums: When given (`L × L`), receives `Σₜ αₜ₋₁[i] ψₜ[j] βₜ[j] / cₜ` added to it:
    ///     multiplied by `M[i][j]`, the expected number of `i → j` transitions.
    /// - Returns: `log Z`, the log of the sum over all label sequences of exp(score).
    mutating func run(scores: UnsafeMutablePointer<Float>, length: Int, potentials: Potentials,
                      pairSums: UnsafeMutablePointer<Float>?) -> Double {
        let labels = potentials.labelCount
        if alpha.count < length * labels {
            alpha = [Float](repeating: 0, count: length * labels)
            beta = [Float](repeating: 0, count: length * labels)
            scale = [Float](repeating: 0, count: length)
        }
        if weighted.count < labels { weighted = [Float](repeating: 0, count: labels) }
        var logZ = 0.0
        alpha.withUnsafeMutableBufferPointer { alpha in
            beta.withUnsafeMutableBufferPointer { beta in
                scale.withUnsafeMutableBufferPointer { scale in
                    weighted.withUnsafeMutableBufferPointer { weighted in
                        potentials.transitions.withUnsafeBufferPointer { transitions in
                            logZ = Self.run(scores, length, labels, transitions.baseAddress!, potentials.start, potentials.end,
                                            alpha.baseAddress!, beta.baseAddress!, scale.baseAddress!, weighted.baseAddress!,
                                            pairSums)
                        }
                    }
                }
            }
        }
        return logZ
    }

    private static func run(_ scores: UnsafeMutablePointer<Float>, _ length: Int, _ labels: Int,
                            _ transitions: UnsafePointer<Float>, _ start: [Float], _ end: [Float],
                            _ alpha: UnsafeMutablePointer<Float>, _ beta: UnsafeMutablePointer<Float>,
                            _ scale: UnsafeMutablePointer<Float>, _ weighted: UnsafeMutablePointer<Float>,
                            _ pairSums: UnsafeMutablePointer<Float>?) -> Double {
        var logZ = 0.0
        // ψ: the exponentials of the scores, each token's shifted by its maximum.
        for t in 0..<length {
            let row = scores + t * labels
            var top = row[0]
            for j in 1..<max(1, labels) { top = max(top, row[j]) }
            for j in 0..<labels { row[j] = Foundation.exp(row[j] - top) }
            logZ += Double(top)
        }
        // Forward.
        var sum: Float = 0
        for j in 0..<labels {
            alpha[j] = start[j] * scores[j]
            sum += alpha[j]
        }
        scale[0] = sum
        for j in 0..<labels { alpha[j] /= sum }
        for t in 1..<max(1, length) {
            let previous = alpha + (t - 1) * labels, current = alpha + t * labels
            current.initialize(repeating: 0, count: labels)
            for i in 0..<labels {
                let from = previous[i]
                let row = transitions + i * labels
                for j in 0..<labels { current[j] += from * row[j] }
            }
            let psi = scores + t * labels
            sum = 0
            for j in 0..<labels {
                current[j] *= psi[j]
                sum += current[j]
            }
            scale[t] = sum
            let inverse = 1 / sum
            for j in 0..<labels { current[j] *= inverse }
        }
        let last = alpha + (length - 1) * labels
        var closing: Float = 0
        for j in 0..<labels { closing += last[j] * end[j] }
        for t in 0..<length { logZ += Double(Foundation.log(scale[t])) }
        logZ += Double(Foundation.log(closing))
        // Backward.
        let lastBeta = beta + (length - 1) * labels
        for j in 0..<labels { lastBeta[j] = end[j] / closing }
        var t = length - 1
        while t > 0 {
            let psi = scores + t * labels, next = beta + t * labels, current = beta + (t - 1) * labels
            let inverse = 1 / scale[t]
            for j in 0..<labels { weighted[j] = psi[j] * next[j] * inverse }
            if let pairSums {
                let previous = alpha + (t - 1) * labels
                for i in 0..<labels {
                    let from = previous[i]
                    let row = pairSums + i * labels
                    for j in 0..<labels { row[j] += from * weighted[j] }
                }
            }
            for i in 0..<labels {
                let row = transitions + i * labels
                var total: Float = 0
                for j in 0..<labels { total += row[j] * weighted[j] }
                current[i] = total
            }
            t -= 1
        }
        // Marginals, in place of the scores.
        for index in 0..<(length * labels) { scores[index] = alpha[index] * beta[index] }
        return logZ
    }
}

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
///
/// Every row of L labels is stored padded with zeros to a multiple of 8 floats, so that the
/// loops run over whole SIMD vectors. It is portable Swift, so that a model is the same on every
/// processor: a kernel in AVX2 with fused multiply-adds saves about 15% of the CPU time of a
/// CRF's training on 44 labels, but changes 2% of its predictions, which the performance budget
/// of `docs/architecture.md` refuses.
struct ForwardBackward {
    /// The exponentials of the transition, start and end weights, computed once per model, in
    /// padded rows.
    struct Potentials {
        let labelCount: Int
        /// The row length: the label count rounded up to 8.
        let stride: Int
        /// `exp(transitions[i × L + j])` at `[i × stride + j]`, zero in the padding.
        let transitions: [Float]
        /// The same, transposed: `[j × stride + i]`.
        let transposed: [Float]
        let start: [Float]
        let end: [Float]

        init(_ model: LinearChainModel.Views) {
            let labels = model.labelCount
            let stride = (labels + 7) / 8 * 8
            labelCount = labels
            self.stride = stride
            var transitions = [Float](repeating: 0, count: stride * stride), transposed = transitions
            for i in 0..<labels {
                for j in 0..<labels {
                    let value = Foundation.exp(model.transitions[i * labels + j])
                    transitions[i * stride + j] = value
                    transposed[j * stride + i] = value
                }
            }
            self.transitions = transitions
            self.transposed = transposed
            start = (0..<stride).map { $0 < labels ? Foundation.exp(model.start[$0]) : 0 }
            end = (0..<stride).map { $0 < labels ? Foundation.exp(model.end[$0]) : 0 }
        }
    }


    /// Buffers for one sentence at a time, rows padded to the stride.
    private var psi: [Float] = []
    private var alpha: [Float] = []
    private var beta: [Float] = []
    private var scale: [Float] = []
    private var work: [Float] = []
    /// `Σ αₜ₋₁[i] ψₜ[j] βₜ[j] / cₜ` over the sentences run with `accumulatingPairs`, `stride × stride`.
    private var pairSums: [Float] = []

    init() {}

    /// Runs forward-backward on one sentence.
    /// - Parameters:
    ///   - scores: The state scores, `length × L`; replaced by the marginals `P(yₜ = j)`.
    ///   - length: The number of tokens, at least 1.
    ///   - potentials: The model's exponentiated weights.
    ///   - accumulatingPairs: Whether to add the sentence's pair terms to the sums that
    ///     ``addExpectedTransitions(to:potentials:)`` turns into expected transition counts.
    /// - Returns: `log Z`, the log of the sum over all label sequences of exp(score).
    mutating func run(scores: UnsafeMutablePointer<Float>, length: Int, potentials: Potentials,
                      accumulatingPairs: Bool = false) -> Double {
        let labels = potentials.labelCount, stride = potentials.stride
        if alpha.count < length * stride {
            let capacity = max(length, 64) * stride
            psi = [Float](repeating: 0, count: capacity)
            alpha = [Float](repeating: 0, count: capacity)
            beta = [Float](repeating: 0, count: capacity)
            scale = [Float](repeating: 0, count: capacity / stride)
        }
        if work.count != stride {
            work = [Float](repeating: 0, count: stride)
            pairSums = [Float](repeating: 0, count: stride * stride)
        }
        return psi.withUnsafeMutableBufferPointer { psi in
            alpha.withUnsafeMutableBufferPointer { alpha in
                beta.withUnsafeMutableBufferPointer { beta in
                    scale.withUnsafeMutableBufferPointer { scale in
                        work.withUnsafeMutableBufferPointer { work in
                            pairSums.withUnsafeMutableBufferPointer { pairSums in
                                potentials.transitions.withUnsafeBufferPointer { transitions in
                                    potentials.transposed.withUnsafeBufferPointer { transposed in
                                        let buffers = Buffers(psi: psi.baseAddress!, alpha: alpha.baseAddress!, beta: beta.baseAddress!,
                                                              scale: scale.baseAddress!, work: work.baseAddress!,
                                                              pairSums: accumulatingPairs ? pairSums.baseAddress! : nil)
                                        return Self.run(scores, length, labels, stride, transitions.baseAddress!,
                                                        transposed.baseAddress!, potentials, buffers)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Adds the expected count of every transition, `M[i][j] × pairSums[i][j]`, to
    /// `gradient[i × L + j]`, and clears the sums.
    mutating func addExpectedTransitions(to gradient: UnsafeMutablePointer<Double>, potentials: Potentials) {
        let labels = potentials.labelCount, stride = potentials.stride
        guard pairSums.count == stride * stride else { return }
        for i in 0..<labels {
            for j in 0..<labels {
                gradient[i * labels + j] += Double(pairSums[i * stride + j] * potentials.transitions[i * stride + j])
            }
        }
        for index in pairSums.indices { pairSums[index] = 0 }
    }

    /// The scratch rows of one run.
    private struct Buffers {
        let psi: UnsafeMutablePointer<Float>
        let alpha: UnsafeMutablePointer<Float>
        let beta: UnsafeMutablePointer<Float>
        let scale: UnsafeMutablePointer<Float>
        let work: UnsafeMutablePointer<Float>
        let pairSums: UnsafeMutablePointer<Float>?
    }

    /// `out[0 ..< stride] = Σ_{i < L} x[i] × rows[i × stride ..< (i + 1) × stride]`.
    @inline(__always)
    private static func combine(_ x: UnsafePointer<Float>, _ rows: UnsafePointer<Float>, _ labels: Int, _ stride: Int,
                                into out: UnsafeMutablePointer<Float>) {
        out.initialize(repeating: 0, count: stride)
        for i in 0..<labels {
            let a = x[i], row = rows + i * stride
            for j in 0..<stride { out[j] += a * row[j] }
        }
    }

    /// The forward-backward pass over one sentence, on padded rows.
    private static func run(_ scores: UnsafeMutablePointer<Float>, _ length: Int, _ labels: Int, _ stride: Int,
                            _ transitions: UnsafePointer<Float>, _ transposed: UnsafePointer<Float>,
                            _ potentials: Potentials, _ buffers: Buffers) -> Double {
        let (psi, alpha, beta, scale, work) = (buffers.psi, buffers.alpha, buffers.beta, buffers.scale, buffers.work)
        var logZ = 0.0
        for t in 0..<length {
            let row = scores + t * labels, out = psi + t * stride
            var top = row[0]
            for j in 1..<max(1, labels) { top = max(top, row[j]) }
            logZ += Double(top)
            for j in 0..<stride { out[j] = j < labels ? Foundation.exp(row[j] - top) : 0 }
        }
        for t in 0..<length {
            let current = alpha + t * stride
            if t == 0 {
                for j in 0..<stride { current[j] = potentials.start[j] }
            } else {
                combine(alpha + (t - 1) * stride, transitions, labels, stride, into: current)
            }
            var sum: Float = 0
            for j in 0..<stride {
                current[j] *= psi[t * stride + j]
                sum += current[j]
            }
            scale[t] = sum
            let inverse = 1 / sum
            for j in 0..<stride { current[j] *= inverse }
        }
        let last = alpha + (length - 1) * stride
        var closing: Float = 0
        for j in 0..<stride { closing += last[j] * potentials.end[j] }
        for t in 0..<length { logZ += Double(Foundation.log(scale[t])) }
        logZ += Double(Foundation.log(closing))
        for j in 0..<stride { beta[(length - 1) * stride + j] = potentials.end[j] / closing }
        var t = length - 1
        while t > 0 {
            let inverse = 1 / scale[t]
            for j in 0..<stride { work[j] = psi[t * stride + j] * beta[t * stride + j] * inverse }
            if let pairSums = buffers.pairSums {
                let previous = alpha + (t - 1) * stride
                for i in 0..<labels {
                    let from = previous[i], row = pairSums + i * stride
                    for j in 0..<stride { row[j] += from * work[j] }
                }
            }
            combine(work, transposed, labels, stride, into: beta + (t - 1) * stride)
            t -= 1
        }
        for t in 0..<length {
            for j in 0..<labels { scores[t * labels + j] = alpha[t * stride + j] * beta[t * stride + j] }
        }
        return logZ
    }
}

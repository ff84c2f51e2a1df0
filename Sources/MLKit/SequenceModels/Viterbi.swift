/// The Viterbi algorithm: the highest-scoring labels of a sentence under a linear-chain model,
/// by dynamic programming over positions, in O(n·L²) time for n tokens and L labels.
enum Viterbi {
    /// Finds the labels with the highest total score. Of equal scores, the lowest label wins,
    /// so the result never depends on anything but the scores.
    ///
    /// Each step takes, for every label `j`, the best of `current[i] + transitions[i][j]` over
    /// the previous labels `i`, in increasing `i` with a strict comparison. Eight labels `j` go
    /// through that scan at once in SIMD lanes; each lane does the scalar loop's additions and
    /// comparisons in the scalar loop's order, so the path is the same on every processor.
    /// - Parameters:
    ///   - scores: The state scores, `length × L`, row-major.
    ///   - length: The number of tokens, at least 1.
    ///   - model: The transition, start and end weights.
    ///   - workspace: Room for `length × L` back pointers and `2 × L` running scores.
    ///   - path: Receives `length` labels.
    static func decode(scores: UnsafePointer<Float>, length: Int, model: LinearChainModel.Views,
                       workspace: inout Workspace, path: UnsafeMutablePointer<Int32>) {
        let labels = model.labelCount
        workspace.reserve(tokens: length, labels: labels)
        workspace.backPointers.withUnsafeMutableBufferPointer { backPointers in
            workspace.running.withUnsafeMutableBufferPointer { running in
                var current = running.baseAddress!, next = current + labels
                for j in 0..<labels { current[j] = model.start[j] + scores[j] }
                for t in 1..<max(1, length) {
                    step(from: current, transitions: model.transitions, labels: labels, into: next,
                         pointers: backPointers.baseAddress! + t * labels)
                    let stateScores = scores + t * labels
                    for j in 0..<labels { next[j] += stateScores[j] }
                    swap(&current, &next)
                }
                var best = 0
                var bestScore = current[0] + model.end[0]
                for j in 1..<max(1, labels) where current[j] + model.end[j] > bestScore {
                    best = j
                    bestScore = current[j] + model.end[j]
                }
                var t = length - 1
                path[t] = Int32(best)
                while t > 0 {
                    path[t - 1] = backPointers[t * labels + Int(path[t])]
                    t -= 1
                }
            }
        }
    }

    /// One step of the recursion: `next[j] = max over i of current[i] + transitions[i × L + j]`,
    /// the first `i` of the maximum in `pointers[j]`.
    @inline(__always)
    private static func step(from current: UnsafePointer<Float>, transitions: UnsafePointer<Float>, labels: Int,
                             into next: UnsafeMutablePointer<Float>, pointers: UnsafeMutablePointer<Int32>) {
        typealias Lanes = SIMD8<Float>
        var j = 0
        while j + Lanes.scalarCount <= labels {
            var best = Lanes(repeating: current[0]) + load(transitions + j)
            var from = SIMD8<Int32>(repeating: 0)
            for i in 1..<labels {
                let candidate = Lanes(repeating: current[i]) + load(transitions + i * labels + j)
                let better = candidate .> best
                best.replace(with: candidate, where: better)
                from.replace(with: Int32(i), where: better)
            }
            UnsafeMutableRawPointer(next + j).storeBytes(of: best, as: Lanes.self)
            UnsafeMutableRawPointer(pointers + j).storeBytes(of: from, as: SIMD8<Int32>.self)
            j += Lanes.scalarCount
        }
        for j in j..<labels {
            var best = current[0] + transitions[j]
            var from: Int32 = 0
            for i in 1..<labels {
                let candidate = current[i] + transitions[i * labels + j]
                if candidate > best {
                    best = candidate
                    from = Int32(i)
                }
            }
            next[j] = best
            pointers[j] = from
        }
    }

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Float>) -> SIMD8<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Float>.self)
    }

    /// Buffers reused from one sentence to the next.
    struct Workspace {
        var backPointers: [Int32] = []
        var running: [Float] = []

        init() {}

        mutating func reserve(tokens: Int, labels: Int) {
            if backPointers.count < tokens * labels { backPointers = [Int32](repeating: 0, count: tokens * labels) }
            if running.count < 2 * labels { running = [Float](repeating: 0, count: 2 * labels) }
        }
    }
}

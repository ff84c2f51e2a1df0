/// The Viterbi algorithm: the highest-scoring labels of a sentence under a linear-chain model,
/// by dynamic programming over positions, in O(n·L²) time for n tokens and L labels.
enum Viterbi {
    /// Finds the labels with the highest total score. Of equal scores, the lowest label wins,
    /// so the result never depends on anything but the scores.
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
                    let pointers = backPointers.baseAddress! + t * labels
                    for j in 0..<labels {
                        next[j] = current[0] + model.transitions[j]
                        pointers[j] = 0
                    }
                    for i in 1..<max(1, labels) {
                        let from = current[i]
                        let row = model.transitions + i * labels
                        for j in 0..<labels {
                            let candidate = from + row[j]
                            if candidate > next[j] {
                                next[j] = candidate
                                pointers[j] = Int32(i)
                            }
                        }
                    }
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

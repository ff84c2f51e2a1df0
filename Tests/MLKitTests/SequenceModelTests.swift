import Foundation
import TestSupport
import Testing
@testable import MLKit

/// A small model with random weights and every (attribute, label) pair, for checking the
/// algorithms against brute force.
private func randomModel(labels: Int, attributes: Int, seed: UInt64) -> LinearChainModel {
    var generator = SplitMix64(seed: seed)
    func weight() -> Float { generator.nextFloat() * 4 - 2 }
    let rows = (0...attributes).map { Int32($0 * labels) }
    let pairLabels = (0..<(attributes * labels)).map { Int32($0 % labels) }
    return LinearChainModel(labelCount: labels, features: StateFeatures(rowStarts: rows, pairLabels: pairLabels),
                            pairWeights: (0..<(attributes * labels)).map { _ in weight() },
                            transitions: (0..<(labels * labels)).map { _ in weight() },
                            start: (0..<labels).map { _ in weight() }, end: (0..<labels).map { _ in weight() })
}

/// Every labeling of `length` tokens with its total score.
private func allLabelings(_ model: LinearChainModel, scores: [Float], length: Int) -> [([Int], Double)] {
    let labels = model.labelCount
    var result: [([Int], Double)] = []
    var path = [Int](repeating: 0, count: length)
    let total = Int(pow(Double(labels), Double(length)))
    for code in 0..<total {
        var rest = code
        for t in 0..<length {
            path[t] = rest % labels
            rest /= labels
        }
        var score = Double(model.start[path[0]]) + Double(model.end[path[length - 1]])
        for t in 0..<length {
            score += Double(scores[t * labels + path[t]])
            if t > 0 { score += Double(model.transitions[path[t - 1] * labels + path[t]]) }
        }
        result.append((path, score))
    }
    return result
}

/// Viterbi one label at a time, with a strict comparison in increasing label order: the
/// reference that the decoder's SIMD lanes must reproduce exactly.
private func scalarViterbi(_ model: LinearChainModel, scores: [Float], length: Int) -> [Int32] {
    let labels = model.labelCount
    var current = (0..<labels).map { model.start[$0] + scores[$0] }
    var pointers = [[Int32]](repeating: [Int32](repeating: 0, count: labels), count: length)
    for t in 1..<max(1, length) {
        var next = [Float](repeating: 0, count: labels)
        for j in 0..<labels {
            var best = current[0] + model.transitions[j]
            for i in 1..<labels where current[i] + model.transitions[i * labels + j] > best {
                best = current[i] + model.transitions[i * labels + j]
                pointers[t][j] = Int32(i)
            }
            next[j] = best + scores[t * labels + j]
        }
        current = next
    }
    var best = 0
    for j in 1..<max(1, labels) where current[j] + model.end[j] > current[best] + model.end[best] { best = j }
    var path = [Int32](repeating: Int32(best), count: length)
    for t in stride(from: length - 1, to: 0, by: -1) { path[t - 1] = pointers[t][Int(path[t])] }
    return path
}

@Suite("Sequence models: the algorithms against brute force", .onOwnThreads)
struct SequenceAlgorithmTests {
    @Test("Viterbi finds the labeling with the highest score", arguments: [1, 2, 5])
    func viterbi(length: Int) {
        let model = randomModel(labels: 3, attributes: 1, seed: UInt64(length))
        var generator = SplitMix64(seed: 99)
        let scores = (0..<(length * 3)).map { _ in generator.nextFloat() * 6 - 3 }
        let best = allLabelings(model, scores: scores, length: length).max { $0.1 < $1.1 }!.0
        var workspace = Viterbi.Workspace()
        var path = [Int32](repeating: -1, count: length)
        model.withViews { views in
            path.withUnsafeMutableBufferPointer { path in
                Viterbi.decode(scores: scores, length: length, model: views, workspace: &workspace, path: path.baseAddress!)
            }
        }
        #expect(path.map(Int.init) == best)
    }

    @Test("Viterbi's lanes give the path of the scalar recursion, ties to the lowest label",
          arguments: [1, 2, 7, 8, 9, 16, 23, 44])
    func viterbiLanes(labels: Int) {
        var generator = SplitMix64(seed: UInt64(labels))
        // Weights on a grid of quarters, so equal sums (ties) are common and exact.
        func weight() -> Float { Float(Int(generator.nextFloat() * 16) - 8) / 4 }
        let model = LinearChainModel(labelCount: labels, features: StateFeatures(rowStarts: [0], pairLabels: []),
                                     pairWeights: [], transitions: (0..<(labels * labels)).map { _ in weight() },
                                     start: (0..<labels).map { _ in weight() }, end: (0..<labels).map { _ in weight() })
        var workspace = Viterbi.Workspace()
        for length in [1, 2, 3, 17, 60] {
            let scores = (0..<(length * labels)).map { _ in weight() }
            var path = [Int32](repeating: -1, count: length)
            model.withViews { views in
                path.withUnsafeMutableBufferPointer { path in
                    Viterbi.decode(scores: scores, length: length, model: views, workspace: &workspace, path: path.baseAddress!)
                }
            }
            #expect(path == scalarViterbi(model, scores: scores, length: length), "\(labels) labels, \(length) tokens")
        }
    }

    @Test("Forward-backward gives log Z and the marginals of every token",
          arguments: [(1, 3), (3, 3), (6, 3), (4, 9)])
    func forwardBackward(length: Int, labels: Int) {
        let model = randomModel(labels: labels, attributes: 1, seed: 7 + UInt64(length))
        var generator = SplitMix64(seed: 5)
        // Large scores, to exercise the rescaling.
        let original = (0..<(length * labels)).map { _ in generator.nextFloat() * 60 - 30 }
        let labelings = allLabelings(model, scores: original, length: length)
        let top = labelings.map(\.1).max()!
        let z = labelings.reduce(0) { $0 + exp($1.1 - top) }
        var marginals = [Double](repeating: 0, count: length * labels)
        var pairs = [Double](repeating: 0, count: labels * labels)
        for (path, score) in labelings {
            let p = exp(score - top) / z
            for t in 0..<length {
                marginals[t * labels + path[t]] += p
                if t > 0 { pairs[path[t - 1] * labels + path[t]] += p }
            }
        }
        do {
            var runner = ForwardBackward()
            var scores = original
            var pairSums = [Double](repeating: 0, count: labels * labels)
            let logZ = model.withViews { views in
                let potentials = ForwardBackward.Potentials(views)
                let logZ = scores.withUnsafeMutableBufferPointer { scores in
                    runner.run(scores: scores.baseAddress!, length: length, potentials: potentials, accumulatingPairs: true)
                }
                pairSums.withUnsafeMutableBufferPointer { runner.addExpectedTransitions(to: $0.baseAddress!, potentials: potentials) }
                return logZ
            }
            #expect(abs(logZ - (top + log(z))) < 1e-3 * max(1, abs(logZ)))
            for index in marginals.indices {
                #expect(abs(Double(scores[index]) - marginals[index]) < 1e-4, "marginal \(index)")
            }
            for index in pairs.indices { #expect(abs(pairSums[index] - pairs[index]) < 1e-4, "pair \(index)") }
        }
    }

    @Test("On long sentences and many labels, each token's marginals sum to 1 and the transitions to n − 1",
          arguments: [4, 13, 44, 70])
    func longSentences(labels: Int) {
        let model = randomModel(labels: labels, attributes: 1, seed: UInt64(labels))
        var generator = SplitMix64(seed: 11)
        let length = 37
        var scores = (0..<(length * labels)).map { _ in generator.nextFloat() * 20 - 10 }
        var runner = ForwardBackward()
        var pairSums = [Double](repeating: 0, count: labels * labels)
        let logZ = model.withViews { views in
            let potentials = ForwardBackward.Potentials(views)
            let logZ = scores.withUnsafeMutableBufferPointer {
                runner.run(scores: $0.baseAddress!, length: length, potentials: potentials, accumulatingPairs: true)
            }
            pairSums.withUnsafeMutableBufferPointer { runner.addExpectedTransitions(to: $0.baseAddress!, potentials: potentials) }
            return logZ
        }
        #expect(logZ.isFinite)
        for t in 0..<length {
            let sum = scores[(t * labels)..<((t + 1) * labels)].reduce(0, +)
            #expect(abs(sum - 1) < 1e-4)
        }
        #expect(abs(pairSums.reduce(0, +) - Double(length - 1)) < 1e-3 * Double(length))
    }

    @Test("The CRF's gradient matches finite differences of its objective")
    func gradient() throws {
        let rows = Array(try TaggerFixtures.headlines().prefix(8))
        let plan = TaggerTrainingPlan(rows: rows, parameters: .init(algorithm: .crf, validation: .none, threads: 2))
        let features = StateFeatures(plan.all)
        let objective = LinearChainCRF.Objective(plan.all, features: features, regularization: 0.5, threads: 2)
        var generator = SplitMix64(seed: 3)
        let theta = (0..<objective.layout.count).map { _ in Double(generator.nextFloat()) - 0.5 }
        var gradient = [Double](repeating: 0, count: theta.count)
        func value(_ point: [Double]) -> Double {
            var scratch = [Double](repeating: 0, count: point.count)
            return point.withUnsafeBufferPointer { point in
                scratch.withUnsafeMutableBufferPointer { objective.evaluate(point, $0) }
            }
        }
        _ = theta.withUnsafeBufferPointer { theta in gradient.withUnsafeMutableBufferPointer { objective.evaluate(theta, $0) } }
        let layout = objective.layout
        // Pair weights, transitions, start and end weights.
        let coordinates = [0, 1, layout.pairs / 2, layout.pairs - 1, layout.transitions, layout.transitions + 3,
                           layout.start, layout.end + 1]
        for coordinate in coordinates {
            let step = 1e-2
            var up = theta, down = theta
            up[coordinate] += step
            down[coordinate] -= step
            let numeric = (value(up) - value(down)) / (2 * step)
            #expect(abs(numeric - gradient[coordinate]) < 2e-2 * max(1, abs(numeric)),
                    "coordinate \(coordinate): analytic \(gradient[coordinate]), numeric \(numeric)")
        }
    }

    @Test("L-BFGS finds the minimum of a badly scaled quadratic")
    func lbfgs() {
        let scales = (0..<50).map { pow(10, Double($0 % 5)) }
        let targets = (0..<50).map { Double($0) - 20 }
        var x = [Double](repeating: 0, count: 50)
        let result = LBFGS(maxIterations: 500, tolerance: 0, gradientTolerance: 1e-7).minimize(&x, objective: { x, g in
            var value = 0.0
            for i in 0..<x.count {
                value += scales[i] * (x[i] - targets[i]) * (x[i] - targets[i])
                g[i] = 2 * scales[i] * (x[i] - targets[i])
            }
            return value
        }, afterIteration: { _, _, _ in true })
        // SciPy's L-BFGS-B with the same memory takes 250 iterations to its tolerance here.
        #expect(result.reason == "converged")
        #expect(result.iterations < 400)
        for i in 0..<50 { #expect(abs(x[i] - targets[i]) < 1e-4) }
    }

    @Test("The gold pairs of a problem, attribute by attribute")
    func stateFeatures() {
        let problem = TaggingProblem(labelCount: 3, attributeCount: 3, sentenceStarts: [0, 2, 3], tokenStarts: [0, 2, 3, 5],
                                     attributes: [0, 2, 2, 0, 2], gold: [1, 0, 2])
        let features = StateFeatures(problem)
        #expect(features.rowStarts == [0, 2, 2, 5])
        #expect(features.pairLabels == [1, 2, 0, 1, 2])
        #expect(features.pair(2, 1) == 3)
        #expect(features.pair(1, 0) == nil)
    }
}

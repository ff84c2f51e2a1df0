/// A first-order linear-chain conditional random field (Lafferty, McCallum and Pereira, 2001)
/// trained by maximum likelihood with L2 regularization, as CRFsuite's `lbfgs` trainer does.
///
/// It minimizes, over the weights θ of a ``LinearChainModel`` (pairs, transitions, start, end),
///
///     f(θ) = Σₛ (log Z(xₛ) − score(xₛ, yₛ)) + c₂ ‖θ‖²
///
/// with ``LBFGS``. The gradient is the expected count of each feature under the model, from
/// ``ForwardBackward``'s marginals, minus its count in the gold labels, plus 2c₂θ. The
/// sentences are split into one contiguous chunk per thread, and the chunks' sums are added in
/// chunk order, so the result depends only on the data, the settings and the thread count.
struct LinearChainCRF {
    /// c₂, the weight of the squared L2 norm (CRFsuite's `c2`, default 1).
    var regularization = 1.0
    /// The most L-BFGS iterations.
    var maxIterations = 100
    /// Stop when the objective fell by less than this fraction over the last 10 iterations.
    var tolerance = 1e-4
    /// Worker threads (0: all cores).
    var threads = 0

    /// A trained model and the optimizer's account of the run.
    struct Fit {
        let model: LinearChainModel
        let optimization: LBFGS.Result
    }

    /// Trains a model.
    /// - Parameters:
    ///   - problem: The training sentences.
    ///   - features: The (attribute, label) pairs with a weight.
    ///   - initial: Weights to start from, with the same features and labels; zero when `nil`.
    ///   - afterIteration: Called after each L-BFGS iteration with its number, the objective and
    ///     the model at that point; returns `false` to stop.
    ///   - direction: Weights with the same features and labels to search along first, from zero
    ///     (a perceptron's): L-BFGS's first line search then finds how far to go along them.
    func train(_ problem: TaggingProblem, features: StateFeatures, initial: LinearChainModel? = nil,
               direction: LinearChainModel? = nil,
               afterIteration: ((Int, Double, () -> LinearChainModel) -> Bool)? = nil) -> Fit {
        let objective = Objective(problem, features: features, regularization: regularization, threads: threads)
        let layout = objective.layout
        var theta = initial.map { layout.flatten($0) } ?? [Double](repeating: 0, count: layout.count)
        let optimizer = LBFGS(maxIterations: maxIterations, tolerance: tolerance)
        let result = optimizer.minimize(&theta, firstDirection: direction.map { layout.flatten($0) },
                                        objective: objective.evaluate) { iteration, value, theta in
            afterIteration?(iteration, value, { layout.model(from: theta, features: features) }) ?? true
        }
        return Fit(model: theta.withUnsafeBufferPointer { layout.model(from: $0, features: features) }, optimization: result)
    }

    /// The function L-BFGS minimizes, f(θ), and its gradient.
    struct Objective {
        let problem: TaggingProblem
        let features: StateFeatures
        let layout: Layout
        let regularization: Double
        /// Each feature's count in the gold labels.
        let empirical: [Double]
        let threads: Int
        /// The sentences of each worker.
        let chunks: [Range<Int>]
        let workspaces: [ChunkWorkspace]
        /// The run of pairs of each attribute occurrence of the problem.
        let runs: PairRuns

        init(_ problem: TaggingProblem, features: StateFeatures, regularization: Double, threads: Int) {
            self.problem = problem
            self.features = features
            layout = Layout(pairs: features.pairCount, labels: problem.labelCount)
            self.regularization = regularization
            empirical = LinearChainCRF.empiricalCounts(problem, features, layout)
            self.threads = threads == 0 ? Parallel.defaultThreadCount : threads
            chunks = Parallel.chunks(of: problem.sentenceCount, threads: self.threads)
            let (count, labels) = (layout.count, layout.labels)
            workspaces = chunks.map { _ in ChunkWorkspace(count: count, labels: labels) }
            runs = PairRuns(problem, features)
        }

        /// Writes the gradient at `theta` and returns the value there.
        func evaluate(_ theta: UnsafeBufferPointer<Double>, _ gradient: UnsafeMutableBufferPointer<Double>) -> Double {
            let model = layout.model(from: theta, features: features)
            // Each pair's label beside its weight: a token's scores read one array.
            let (problem, chunks, workspaces, layout, runs) = (self.problem, self.chunks, self.workspaces, self.layout, self.runs)
            let weights = features.pairLabels.withUnsafeBufferPointer { labels in
                (0..<layout.pairs).map { LabeledWeight(label: labels[$0], weight: Float(theta[$0])) }
            }
            let logPartition = Parallel.map(chunks.count, threads: threads) { parts in
                parts.reduce(0.0) { total, part in
                    total + workspaces[part].expectedCounts(problem, sentences: chunks[part], model: model, weights: weights,
                                                            runs: runs, layout: layout)
                }
            }.reduce(0, +)
            // The gradient: the expected counts of every chunk, in chunk order, minus the gold
            // counts, plus the regularizer's.
            let shares = workspaces.map { UnsafePointer($0.gradient.base) }
            let g = gradient.baseAddress!, x = theta.baseAddress!
            let n = layout.count
            g.update(from: shares[0], count: n)
            for share in shares.dropFirst() {
                for index in 0..<n { g[index] += share[index] }
            }
            var value = logPartition
            empirical.withUnsafeBufferPointer { empirical in
                let e = empirical.baseAddress!
                for index in 0..<n {
                    let weight = x[index]
                    value += (regularization * weight - e[index]) * weight
                    g[index] += 2 * regularization * weight - e[index]
                }
            }
            return value
        }
    }

    /// Where each kind of weight sits in the flat vector that L-BFGS sees: the pairs, then
    /// `L × L` transitions, then `L` start and `L` end weights.
    struct Layout: Sendable {
        let pairs: Int
        let labels: Int
        var transitions: Int { pairs }
        var start: Int { pairs + labels * labels }
        var end: Int { start + labels }
        var count: Int { end + labels }

        func flatten(_ model: LinearChainModel) -> [Double] {
            model.pairWeights.map(Double.init) + model.transitions.map(Double.init)
                + model.start.map(Double.init) + model.end.map(Double.init)
        }

        /// The model whose weights are `theta`, in this layout.
        func model<Value: BinaryFloatingPoint>(from theta: UnsafeBufferPointer<Value>, features: StateFeatures) -> LinearChainModel {
            LinearChainModel(labelCount: labels, features: features,
                             pairWeights: theta[0..<pairs].map { Float($0) },
                             transitions: theta[transitions..<start].map { Float($0) },
                             start: theta[start..<end].map { Float($0) }, end: theta[end..<count].map { Float($0) })
        }
    }

    /// Each feature's count in the gold labels.
    static func empiricalCounts(_ problem: TaggingProblem, _ features: StateFeatures, _ layout: Layout) -> [Double] {
        var counts = [Double](repeating: 0, count: layout.count)
        let labels = layout.labels
        for sentence in 0..<problem.sentenceCount {
            let first = problem.sentenceStarts[sentence], end = problem.sentenceStarts[sentence + 1]
            guard first < end else { continue }
            counts[layout.start + Int(problem.gold[first])] += 1
            counts[layout.end + Int(problem.gold[end - 1])] += 1
            for token in first..<end {
                let label = problem.gold[token]
                if token > first { counts[layout.transitions + Int(problem.gold[token - 1]) * labels + Int(label)] += 1 }
                for position in problem.tokenStarts[token]..<problem.tokenStarts[token + 1] {
                    if let pair = features.pair(Int(problem.attributes[position]), label) { counts[pair] += 1 }
                }
            }
        }
        return counts
    }

    /// What one worker keeps from one evaluation to the next: its share of the gradient and its
    /// buffers. Each is used by one worker at a time.
    final class ChunkWorkspace: @unchecked Sendable {
        let gradient: SharedBuffer<Double>
        private var forwardBackward = ForwardBackward()
        private var scores: [Float] = []

        init(count: Int, labels: Int) {
            gradient = SharedBuffer(count: count, repeating: 0)
        }

        /// Fills ``gradient`` with the expected counts of every feature over `sentences`, and
        /// returns the sum of their `log Z`.
        func expectedCounts(_ problem: TaggingProblem, sentences: Range<Int>, model: LinearChainModel, weights: [LabeledWeight],
                            runs: PairRuns, layout: Layout) -> Double {
            gradient.fill(0)
            let labels = layout.labels
            let g = gradient.base
            var logPartition = 0.0
            model.withViews { views in
                let potentials = ForwardBackward.Potentials(views)
                weights.withUnsafeBufferPointer { weights in
                    runs.withRuns { runs in
                        problem.tokenStarts.withUnsafeBufferPointer { tokenStarts in
                            let weights = weights.baseAddress!, tokenStarts = tokenStarts.baseAddress!
                            for sentence in sentences {
                                let first = problem.sentenceStarts[sentence], length = problem.sentenceStarts[sentence + 1] - first
                                guard length > 0 else { continue }
                                if scores.count < length * labels { scores = [Float](repeating: 0, count: length * labels) }
                                scores.withUnsafeMutableBufferPointer { scores in
                                    let marginals = scores.baseAddress!
                                    marginals.initialize(repeating: 0, count: length * labels)
                                    for t in 0..<length {
                                        let row = marginals + t * labels, token = first + t
                                        for position in tokenStarts[token]..<tokenStarts[token + 1] {
                                            let (start, count) = runs.run(position)
                                            for pair in start..<(start + count) { row[Int(weights[pair].label)] += weights[pair].weight }
                                        }
                                    }
                                    logPartition += forwardBackward.run(scores: marginals, length: length, potentials: potentials,
                                                                        accumulatingPairs: true)
                                    for t in 0..<length {
                                        let row = marginals + t * labels, token = first + t
                                        for position in tokenStarts[token]..<tokenStarts[token + 1] {
                                            let (start, count) = runs.run(position)
                                            for pair in start..<(start + count) { g[pair] += Double(row[Int(weights[pair].label)]) }
                                        }
                                    }
                                    for j in 0..<labels {
                                        g[layout.start + j] += Double(marginals[j])
                                        g[layout.end + j] += Double(marginals[(length - 1) * labels + j])
                                    }
                                }
                                // Each sentence's transitions go into the float64 sums at once.
                                forwardBackward.addExpectedTransitions(to: g + layout.transitions, potentials: potentials)
                            }
                        }
                    }
                }
            }
            return logPartition
        }
    }
}

/// A pair's label beside its weight.
struct LabeledWeight {
    var label: Int32
    var weight: Float
}

/// The run of (attribute, label) pairs that each attribute occurrence of a problem reads, its
/// start and length packed in 32 bits (26 and 6) when every run fits, so that scoring a token
/// reads its runs straight from the occurrences instead of looking each attribute's run up.
/// Runs that do not fit (more than 63 labels, or more than 2²⁶ pairs) are looked up through
/// the attribute's row starts.
struct PairRuns: Sendable {
    private let packed: [UInt32]?
    private let attributes: [Int32]
    private let rowStarts: [Int32]

    init(_ problem: TaggingProblem, _ features: StateFeatures) {
        attributes = problem.attributes
        rowStarts = features.rowStarts
        guard problem.labelCount <= 63, features.pairCount < 1 << 26 else {
            packed = nil
            return
        }
        packed = problem.attributes.map { attribute in
            let start = features.rowStarts[Int(attribute)], end = features.rowStarts[Int(attribute) + 1]
            return UInt32(start) << 6 | UInt32(end - start)
        }
    }

    /// Calls `body` with a view of the runs, valid inside it.
    @inline(__always)
    func withRuns<R>(_ body: (View) -> R) -> R {
        attributes.withUnsafeBufferPointer { attributes in
            rowStarts.withUnsafeBufferPointer { rowStarts in
                guard let packed else {
                    return body(View(packed: nil, attributes: attributes.baseAddress, rowStarts: rowStarts.baseAddress!))
                }
                return packed.withUnsafeBufferPointer {
                    body(View(packed: $0.baseAddress, attributes: attributes.baseAddress, rowStarts: rowStarts.baseAddress!))
                }
            }
        }
    }

    struct View {
        let packed: UnsafePointer<UInt32>?
        let attributes: UnsafePointer<Int32>?
        let rowStarts: UnsafePointer<Int32>

        /// The first pair and the number of pairs of occurrence `position`.
        @inline(__always)
        func run(_ position: Int) -> (start: Int, count: Int) {
            if let packed {
                let value = packed[position]
                return (Int(value >> 6), Int(value & 63))
            }
            let attribute = Int(attributes![position])
            let start = Int(rowStarts[attribute])
            return (start, Int(rowStarts[attribute + 1]) - start)
        }
    }
}

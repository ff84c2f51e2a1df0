/// The averaged structured perceptron (Collins, 2002): decodes each training sentence with the
/// current weights (``Viterbi``) and, where the labels are wrong, adds 1 to the weights of the
/// gold labels' features and takes 1 from those of the predicted ones. The model is the average
/// of the weights over every step, which generalizes far better than the last weights.
///
/// The average is kept without summing every step (Daumé's trick): with `c` the step count, each
/// update `δ` also adds `c·δ` to a second vector `u`, and the average is `w − u / c`.
///
/// Sentences are visited in a new seeded order each epoch (``SplitMix64``). Each batch of
/// ``batchSize`` sentences is decoded with the same weights, on all threads, and the batch's
/// updates are then applied in sentence order; so the result depends on the seed and the batch
/// size, and never on the thread count. A batch is one sentence per 2,000 (at least 1, at most
/// 16): small data needs every update at once, large data has updates to spare.
struct StructuredPerceptron {
    /// Passes over the training sentences.
    var epochs = 10
    /// The seed of the sentence order.
    var seed: UInt64 = 42
    /// Sentences decoded with the same weights (`nil`: one per 2,000 sentences, from 1 to 16).
    var batchSize: Int?
    /// Worker threads (0: all cores).
    var threads = 0

    /// Trains a model.
    /// - Parameters:
    ///   - problem: The training sentences.
    ///   - features: The (attribute, label) pairs with a weight.
    ///   - afterEpoch: Called after each epoch with its number and the averaged model so far;
    ///     returns `false` to stop.
    func train(_ problem: TaggingProblem, features: StateFeatures,
               afterEpoch: ((Int, () -> LinearChainModel) -> Bool)? = nil) -> LinearChainModel {
        let layout = LinearChainCRF.Layout(pairs: features.pairCount, labels: problem.labelCount)
        // The weights live in one buffer that the decoding workers read between updates.
        let weights = SharedBuffer<Float>(count: layout.count, repeating: 0)
        var sums = [Double](repeating: 0, count: layout.count)
        var step = 1.0
        var order = Array(0..<problem.sentenceCount)
        var generator = SplitMix64(seed: seed)
        let batchSize = self.batchSize ?? max(1, min(16, problem.sentenceCount / 2000))
        let threads = max(1, min(threads == 0 ? Parallel.defaultThreadCount : threads, batchSize))
        let workspaces = (0..<threads).map { _ in DecodingWorkspace() }
        func averaged() -> LinearChainModel {
            let average = (0..<layout.count).map { Float(Double(weights.base[$0]) - sums[$0] / step) }
            return average.withUnsafeBufferPointer { layout.model(from: $0, features: features) }
        }
        features.rowStarts.withUnsafeBufferPointer { rowStarts in
            features.pairLabels.withUnsafeBufferPointer { pairLabels in
                let views = LinearChainModel.Views(
                    labelCount: layout.labels, rowStarts: rowStarts.baseAddress!,
                    pairLabels: pairLabels.baseAddress ?? UnsafePointer(bitPattern: 4)!,
                    pairWeights: weights.base, transitions: weights.base + layout.transitions,
                    start: weights.base + layout.start, end: weights.base + layout.end)
                for epoch in 1...max(1, epochs) {
                    generator.shuffle(&order)
                    var batchStart = 0
                    while batchStart < order.count {
                        let batch = Array(order[batchStart..<min(order.count, batchStart + batchSize)])
                        batchStart += batch.count
                        let parts = Parallel.chunks(of: batch.count, threads: threads)
                        let paths = Parallel.map(parts.count, threads: parts.count) { indices in
                            indices.flatMap { part in
                                parts[part].map { workspaces[part].decode(problem, sentence: batch[$0], model: views) }
                            }
                        }.flatMap { $0 }
                        for (sentence, path) in zip(batch, paths) {
                            update(problem, sentence: sentence, predicted: path, features: features, layout: layout,
                                   weights: weights.base, sums: &sums, step: step)
                            step += 1
                        }
                    }
                    if let afterEpoch, !afterEpoch(epoch, averaged) { break }
                }
            }
        }
        return averaged()
    }

    /// Applies one sentence's update: +1 to the gold features, −1 to the predicted ones, where
    /// they differ.
    private func update(_ problem: TaggingProblem, sentence: Int, predicted: [Int32], features: StateFeatures,
                        layout: LinearChainCRF.Layout, weights: UnsafeMutablePointer<Float>, sums: inout [Double],
                        step: Double) {
        let first = problem.sentenceStarts[sentence]
        let gold = problem.gold
        guard predicted.indices.contains(where: { predicted[$0] != gold[first + $0] }) else { return }
        func add(_ index: Int, _ delta: Float) {
            weights[index] += delta
            sums[index] += step * Double(delta)
        }
        let labels = layout.labels
        for (t, guess) in predicted.enumerated() {
            let token = first + t, truth = gold[token]
            let previousTruth = t > 0 ? gold[token - 1] : -1, previousGuess = t > 0 ? predicted[t - 1] : -1
            if t == 0 && truth != guess {
                add(layout.start + Int(truth), 1)
                add(layout.start + Int(guess), -1)
            }
            if t == predicted.count - 1 && truth != guess {
                add(layout.end + Int(truth), 1)
                add(layout.end + Int(guess), -1)
            }
            if t > 0 && (truth != guess || previousTruth != previousGuess) {
                add(layout.transitions + Int(previousTruth) * labels + Int(truth), 1)
                add(layout.transitions + Int(previousGuess) * labels + Int(guess), -1)
            }
            guard truth != guess else { continue }
            for position in problem.tokenStarts[token]..<problem.tokenStarts[token + 1] {
                let attribute = Int(problem.attributes[position])
                if let pair = features.pair(attribute, truth) { add(pair, 1) }
                if let pair = features.pair(attribute, guess) { add(pair, -1) }
            }
        }
    }

    /// A worker's buffers for decoding.
    final class DecodingWorkspace: @unchecked Sendable {
        private var scores: [Float] = []
        private var viterbi = Viterbi.Workspace()

        /// The best labels of one sentence under `model`.
        func decode(_ problem: TaggingProblem, sentence: Int, model views: LinearChainModel.Views) -> [Int32] {
            let first = problem.sentenceStarts[sentence], length = problem.sentenceStarts[sentence + 1] - first
            guard length > 0 else { return [] }
            let labels = views.labelCount
            if scores.count < length * labels { scores = [Float](repeating: 0, count: length * labels) }
            var path = [Int32](repeating: 0, count: length)
            problem.attributes.withUnsafeBufferPointer { attributes in
                scores.withUnsafeMutableBufferPointer { scores in
                    views.stateScores(tokens: length, into: scores.baseAddress!) { t in
                        let token = first + t
                        return UnsafeBufferPointer(rebasing: attributes[problem.tokenStarts[token]..<problem.tokenStarts[token + 1]])
                    }
                    path.withUnsafeMutableBufferPointer { path in
                        Viterbi.decode(scores: scores.baseAddress!, length: length, model: views, workspace: &viterbi,
                                       path: path.baseAddress!)
                    }
                }
            }
            return path
        }
    }
}

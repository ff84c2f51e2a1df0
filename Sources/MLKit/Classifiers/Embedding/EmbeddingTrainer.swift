import Dispatch

/// The settings of embedding training. The defaults were chosen by measurement on the
/// fortunes-topic (39 labels) and vader-sentiment (2 labels) datasets; see ``EmbeddingTrainer``.
struct EmbeddingTrainingOptions: Sendable, Hashable {
    /// The embedding dimension d.
    var dimension: Int
    /// Passes over the training set.
    var epochs: Int
    /// The initial learning rate η₀, per example (as in fastText); it decays linearly to 0.
    var learningRate: Float
    /// Examples per mini-batch B.
    var batchSize: Int
    /// Keep a feature only if at least this many training documents contain it.
    var minCount: Int
    /// The seed of the initialization and of the per-epoch shuffles.
    var seed: UInt64
    /// Training threads (0: all cores). The trained model does not depend on it.
    var threads: Int

    /// Creates settings.
    /// - Parameters:
    ///   - dimension: The embedding dimension (default 64).
    ///   - epochs: Passes over the data (default 10).
    ///   - learningRate: The initial per-example learning rate (default 1).
    ///   - batchSize: Examples per mini-batch (default 32).
    ///   - minCount: The minimum document frequency of a kept feature (default 1).
    ///   - seed: The random seed (default 0).
    ///   - threads: Training threads, 0 for all cores (default 0).
    init(dimension: Int = 64, epochs: Int = 10, learningRate: Float = 1, batchSize: Int = 32,
         minCount: Int = 1, seed: UInt64 = 0, threads: Int = 0) {
        self.dimension = dimension
        self.epochs = epochs
        self.learningRate = learningRate
        self.batchSize = batchSize
        self.minCount = minCount
        self.seed = seed
        self.threads = threads
    }

    /// Checks the settings.
    /// - Throws: ``MLKitError`` with code `invalidParameter`, naming the setting at fault.
    func validate() throws {
        func fail(_ field: String, _ reason: String) -> MLKitError {
            MLKitError(.invalidParameter, reason, at: .init(field: field))
        }
        guard (1...1024).contains(dimension) else { throw fail("dimension", "must be 1 to 1024, not \(dimension)") }
        guard epochs >= 1 else { throw fail("epochs", "must be at least 1, not \(epochs)") }
        guard learningRate > 0, learningRate.isFinite else {
            throw fail("learningRate", "must be positive, not \(learningRate)")
        }
        guard (1...65_536).contains(batchSize) else { throw fail("batchSize", "must be 1 to 65536, not \(batchSize)") }
        guard minCount >= 1 else { throw fail("minCount", "must be at least 1, not \(minCount)") }
        guard threads >= 0 else { throw fail("threads", "must be 0 (all cores) or more, not \(threads)") }
    }
}

/// Trains an ``EmbeddingModel`` by mini-batch stochastic gradient descent on the softmax
/// cross-entropy, as fastText's supervised mode does with its `softmax` loss.
///
/// The loss of a batch 𝓑 of B documents is `L = Σ_{j∈𝓑} a_j · (log Σ_c exp s_jc − s_{j,y_j})`,
/// with `a_j` the weight of document j's class and `s_j = b + Wᵀh_j` (see ``EmbeddingModel``).
/// Its gradients:
///
///     G = ∂L/∂S = A·(P − Y)       (B × C: P the softmax rows, Y one-hot labels, A = diag(a))
///     ∂L/∂W = Hᵀ·G                (d × C)
///     ∂L/∂b = Σ_j G[j, :]
///     ∂L/∂H = G·Wᵀ                (B × d)
///     ∂L/∂E[r, :] = Σ_{j∈𝓑} Σ_{i: r_ji = r} w_ji · ∂L/∂H[j, :]
///
/// A step, with every gradient taken at the parameters before it, is
///
///     E −= η_t ∂L/∂E,   W −= η_t ∂L/∂W,   b −= (η_t / B) ∂L/∂b
///
/// The loss is a sum, not a mean, so η is a per-example rate as in fastText, whose per-example
/// SGD is the case B = 1. The bias alone takes the batch mean: its input is the constant 1 that
/// every document shares, so the summed step moved it B times as far as any feature, and the
/// measurement showed the loss oscillating (mean first-epoch loss 3.0 against ln 2 = 0.69 on
/// vader-sentiment at η = 0.5, B = 32) until it was averaged. The rate decays linearly as in
/// fastText: `η_t = η₀ · (1 − t / (epochs · N))` after t of the epochs · N examples.
///
/// Each step gathers H (sparse, SIMD, split over threads by document), computes `S = H·W`,
/// `∂L/∂H = G·Wᵀ` and `W −= η HᵀG` with `cblas_sgemm` on the calling thread, and scatters
/// `∂L/∂H` into the rows of E that the batch used (sparse, SIMD, split over threads by row:
/// each thread owns a contiguous range of rows and applies their updates in document order).
/// No two threads write the same memory and every sum runs in a fixed order, so the model
/// depends only on the seed and the data, not on the thread count.
///
/// Initialization follows fastText: `E[r, k] ~ U(−1/d, 1/d)` from ``SplitMix64`` seeded with
/// the options' seed, W = 0, b = 0; the same generator then shuffles the documents (Fisher–Yates)
/// before each epoch.
///
/// Defaults (d = 64, 10 epochs, η₀ = 1, B = 32, minCount 1) were measured on a validation fifth
/// of the training sets, word unigrams and bigrams hashed into 2^21 buckets, counts:
/// - fortunes-topic (39 labels): η₀ = 1 beat 0.5 by 1 to 5 points; d = 64 beat d = 16 by about
///   one point (0.40 → 0.41) at four times the size and time; 25 epochs gained under one point.
/// - vader-sentiment (2 labels): every setting tried (d 16 to 64, η₀ 0.5 or 1, 5 to 25 epochs)
///   landed within 0.785 to 0.797.
/// - B = 128 diverges at η₀ = 1 (the summed W step grows with B); B = 8 or 16 learn the same as
///   32 but with more, smaller steps.
/// - minCount 2 was as accurate or better on both sets (test: 0.427 against 0.420, 0.799 against
///   0.798) with models 3.5 to 4 times smaller, but it drops the words seen once that a small
///   data set lives on (30 reference headlines keep 30 of 513 rows and mislabel a new one), so
///   the default stays at fastText's 1; pass 2 for training sets of thousands of documents.
enum EmbeddingTrainer {
    /// Trains a model on `problem`.
    /// - Parameters:
    ///   - problem: Feature rows (counts, as the ``Featurizer`` makes them), labels and class weights.
    ///   - options: The settings.
    ///   - progress: Called after each epoch with its 0-based index and the mean weighted
    ///     cross-entropy of its batches (each measured before its own step).
    /// - Returns: The trained model, with rows for the features kept by `minCount`.
    /// - Throws: ``MLKitError``: `invalidParameter` for a bad setting or when training diverges
    ///   (an epoch's loss is not finite), `invalidDataset` for a problem without documents.
    static func train(_ problem: TrainingProblem, options: EmbeddingTrainingOptions = .init(),
                      progress: ((_ epoch: Int, _ meanLoss: Double) -> Void)? = nil) throws -> EmbeddingModel {
        try options.validate()
        guard problem.matrix.rows > 0 else { throw MLKitError(.invalidDataset, "the training problem has no documents") }
        let set = EmbeddingTrainingSet(problem: problem, minCount: options.minCount)
        let threads = options.threads == 0 ? Parallel.defaultThreadCount : options.threads
        // The products are small (B×d·d×C); BLAS threads would only compete with ours.
        DenseMath.setThreadCount(1)
        var generator = SplitMix64(seed: options.seed)
        let state = EmbeddingTrainingState(set: set, dimension: options.dimension, batchCapacity: options.batchSize,
                                           threads: threads, generator: &generator)
        var order = Array(0..<set.count)
        let total = Double(options.epochs * set.count)
        var processed = 0
        for epoch in 0..<options.epochs {
            generator.shuffle(&order)
            var loss = 0.0
            order.withUnsafeBufferPointer { order in
                var start = 0
                while start < order.count {
                    let end = min(order.count, start + options.batchSize)
                    let rate = options.learningRate * Float(max(0, 1 - Double(processed) / total))
                    loss += state.step(examples: UnsafeBufferPointer(rebasing: order[start..<end]), learningRate: rate)
                    processed += end - start
                    start = end
                }
            }
            guard loss.isFinite else {
                throw MLKitError(.invalidParameter,
                                 "training diverged in epoch \(epoch + 1) (the loss is not finite): "
                                 + "lower the learning rate (\(options.learningRate)) or the batch size (\(options.batchSize))",
                                 at: .init(field: "learningRate"))
            }
            progress?(epoch, loss / Double(set.count))
        }
        return state.model()
    }
}

/// The parameters and scratch space of one training run, in raw memory that the training
/// threads share. Every phase of ``step(examples:learningRate:)`` gives each thread memory no
/// other thread writes, which is what makes the unchecked `Sendable` sound.
final class EmbeddingTrainingState: @unchecked Sendable {
    /// The compacted training documents.
    let set: EmbeddingTrainingSet
    /// d.
    let dimension: Int
    /// C.
    let classes: Int
    /// The largest batch ``step(examples:learningRate:)`` accepts.
    let batchCapacity: Int
    /// The rows of E each scatter thread owns.
    private let ownedRows: [Range<Int32>]
    /// The number of gather threads.
    private let threads: Int
    /// E, `n × d`.
    private let embeddings: UnsafeMutableBufferPointer<Float>
    /// W, `d × C`.
    private let output: UnsafeMutableBufferPointer<Float>
    /// b, `C`.
    private let bias: UnsafeMutableBufferPointer<Float>
    /// H, `B × d`.
    private let hidden: UnsafeMutableBufferPointer<Float>
    /// S, then P, then G, `B × C`.
    private let logits: UnsafeMutableBufferPointer<Float>
    /// ∂L/∂H, `B × d`.
    private let hiddenGradient: UnsafeMutableBufferPointer<Float>
    /// The documents of the current batch, `B`.
    private let batch: UnsafeMutableBufferPointer<Int>

    /// Allocates and initializes the parameters: `E ~ U(−1/d, 1/d)` row after row from
    /// `generator`, W = 0, b = 0.
    init(set: EmbeddingTrainingSet, dimension: Int, batchCapacity: Int, threads: Int,
         generator: inout SplitMix64) {
        self.set = set
        self.dimension = dimension
        self.classes = set.classCount
        self.batchCapacity = batchCapacity
        self.threads = max(1, threads)
        self.ownedRows = set.rowRanges(parts: max(1, threads))
        embeddings = .allocate(capacity: set.featureIDs.count * dimension)
        let scale = 2 / Float(dimension)
        let limit = 1 / Float(dimension)
        for index in embeddings.indices { embeddings[index] = generator.nextFloat() * scale - limit }
        output = .allocate(capacity: dimension * classes)
        output.initialize(repeating: 0)
        bias = .allocate(capacity: classes)
        bias.initialize(repeating: 0)
        hidden = .allocate(capacity: batchCapacity * dimension)
        hidden.initialize(repeating: 0)
        logits = .allocate(capacity: batchCapacity * classes)
        logits.initialize(repeating: 0)
        hiddenGradient = .allocate(capacity: batchCapacity * dimension)
        hiddenGradient.initialize(repeating: 0)
        batch = .allocate(capacity: batchCapacity)
        batch.initialize(repeating: 0)
    }

    deinit {
        for buffer in [embeddings, output, bias, hidden, logits, hiddenGradient] { buffer.deallocate() }
        batch.deallocate()
    }

    /// Runs `body(part)` for `part` in `0..<parts`, on `parts` threads when there are several.
    private func inParallel(_ parts: Int, _ body: @Sendable (Int) -> Void) {
        if parts <= 1 {
            body(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: parts, execute: body)
        }
    }

    /// One gradient step on the documents `examples` (indices into the set) with learning
    /// rate `learningRate`, as ``EmbeddingTrainer`` describes.
    /// - Returns: The batch's weighted cross-entropy before the step.
    func step(examples: UnsafeBufferPointer<Int>, learningRate: Float) -> Double {
        let count = examples.count
        precondition(count <= batchCapacity, "a batch no larger than the capacity")
        guard count > 0 else { return 0 }
        _ = batch.update(fromContentsOf: examples)

        // H[j, :] = Σ_i w_ji E[r_ji, :], documents split over the threads.
        let chunks = Parallel.chunks(of: count, threads: threads)
        inParallel(chunks.count) { part in self.gatherHidden(slots: chunks[part]) }

        let loss = updateDenseLayer(count: count, learningRate: learningRate)

        // E[r, :] −= η Σ w_ji ∂L/∂H[j, :], rows split over the threads, documents in order.
        let owned = ownedRows
        inParallel(owned.count) { part in
            self.scatterGradient(count: count, learningRate: learningRate, owned: owned[part])
        }
        return loss
    }

    /// Gathers `H[j, :] = Σ_i w_ji E[r_ji, :]` for the batch slots `slots`.
    private func gatherHidden(slots: Range<Int>) {
        let dimension = self.dimension
        set.entryStarts.withUnsafeBufferPointer { starts in
            set.rows.withUnsafeBufferPointer { rows in
                set.weights.withUnsafeBufferPointer { weights in
                    for slot in slots {
                        let example = batch[slot]
                        let start = starts[example]
                        EmbeddingKernels.gather(rows: rows.baseAddress! + start, weights: weights.baseAddress! + start,
                                                count: starts[example + 1] - start,
                                                embeddings: embeddings.baseAddress!, dimension: dimension,
                                                into: hidden.baseAddress! + slot * dimension)
                    }
                }
            }
        }
    }

    /// The dense part of a step on the first `count` batch slots, whose H is gathered:
    /// `S = H·W + 1bᵀ`, `P = softmax(S)` by rows, `G = A(P − Y)`, `∂L/∂H = G·Wᵀ` (with W before
    /// the step), then `W −= η HᵀG` and `b −= η Σ_j G[j, :]`.
    /// - Returns: The batch's weighted cross-entropy.
    private func updateDenseLayer(count: Int, learningRate: Float) -> Double {
        let dimension = self.dimension
        let classes = self.classes
        let output = self.output.baseAddress!
        let bias = self.bias.baseAddress!
        let hidden = self.hidden.baseAddress!
        let logits = self.logits.baseAddress!
        for slot in 0..<count { (logits + slot * classes).update(from: bias, count: classes) }
        DenseMath.gemm(m: count, n: classes, k: dimension, a: hidden, lda: dimension, b: output,
                       ldb: classes, beta: 1, c: logits, ldc: classes)
        var loss = 0.0
        for slot in 0..<count {
            let example = batch[slot]
            let label = Int(set.labels[example])
            let weight = set.exampleWeights[example]
            let row = logits + slot * classes
            let labelScore = row[label]
            let logSumExp = EmbeddingKernels.softmax(row, count: classes)
            loss += Double(weight * (logSumExp - labelScore))
            row[label] -= 1
            if weight != 1 { for lane in 0..<classes { row[lane] *= weight } }
        }
        DenseMath.gemm(transposeB: true, m: count, n: dimension, k: classes, a: logits, lda: classes,
                       b: output, ldb: classes, c: hiddenGradient.baseAddress!, ldc: dimension)
        DenseMath.gemm(transposeA: true, m: dimension, n: classes, k: count, alpha: -learningRate,
                       a: hidden, lda: dimension, b: logits, ldb: classes, beta: 1, c: output, ldc: classes)
        let biasRate = -learningRate / Float(count)
        for slot in 0..<count {
            SparseKernels.addScaled(biasRate, logits + slot * classes, to: bias, count: classes)
        }
        return loss
    }

    /// Applies `E[r, :] −= η w_ji ∂L/∂H[j, :]` for the first `count` batch slots, in slot
    /// order, to the rows in `owned` only.
    private func scatterGradient(count: Int, learningRate: Float, owned: Range<Int32>) {
        let dimension = self.dimension
        set.entryStarts.withUnsafeBufferPointer { starts in
            set.rows.withUnsafeBufferPointer { rows in
                set.weights.withUnsafeBufferPointer { weights in
                    for slot in 0..<count {
                        let example = batch[slot]
                        let start = starts[example]
                        EmbeddingKernels.scatter(rows: rows.baseAddress! + start, weights: weights.baseAddress! + start,
                                                 count: starts[example + 1] - start,
                                                 gradient: hiddenGradient.baseAddress! + slot * dimension,
                                                 scale: -learningRate, embeddings: embeddings.baseAddress!,
                                                 dimension: dimension, owned: owned)
                    }
                }
            }
        }
    }

    /// A copy of the current parameters.
    var parameters: (embeddings: [Float], output: [Float], bias: [Float]) {
        (Array(embeddings), Array(output), Array(bias))
    }

    /// The model with the current parameters.
    func model() -> EmbeddingModel {
        let parameters = self.parameters
        return EmbeddingModel(dimension: dimension, classes: classes, buckets: set.buckets, featureIDs: set.featureIDs,
                              embeddings: parameters.embeddings, output: parameters.output, bias: parameters.bias)
    }
}

extension EmbeddingTrainer: CandidateTrainer {
    static let defaultStrength = 1.0
    static let strengthName = "learningRate"

    /// Words and bigrams hashed into 2²⁰ buckets, counted: the embedding classifier keeps rows
    /// only for the features it sees, so it needs no vocabulary.
    static func features(_ choices: FeatureChoices) -> FeaturizerConfiguration {
        FeaturizerConfiguration(tokenizer: choices.tokenizer, maxWordNGram: choices.maxWordNGram, indexing: .hashed(bits: 20))
    }

    /// Trains with the candidate's strength as the learning rate and its iterations as epochs.
    static func train(_ candidate: Candidate, on input: TrainingInput) throws -> ClassifierModel {
        var options = EmbeddingTrainingOptions(learningRate: Float(candidate.strength), seed: input.seed,
                                               threads: input.threads)
        if let iterations = candidate.iterations { options.epochs = iterations }
        return .embedding(try train(input.problem, options: options))
    }
}

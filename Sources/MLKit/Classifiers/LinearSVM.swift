/// A linear support vector machine: L2-regularized, squared hinge loss, one-vs-rest, trained by
/// dual coordinate descent as LIBLINEAR's `-s 1 -B 1` (and scikit-learn's `LinearSVC`).
///
/// For each class `c` it solves ``DualCoordinateDescent``'s problem
/// `min ½(‖w_c‖² + b_c²) + Σᵢ Cᵢ max(0, 1 − yᵢ(w_c·xᵢ + b_c))²` with `yᵢ = +1` for the examples of
/// `c` and `−1` for the others; the bias is the weight of a constant feature 1, so it is
/// regularized, as with LIBLINEAR's `-B 1`. Costs follow LIBLINEAR's `train()`: with more than two
/// classes, `C₊ = C·weight_c` and `C₋ = C`; with two classes a single problem is solved (class 1
/// positive, `C₊ = C·weight₁`, `C₋ = C·weight₀`) and class 0 gets the negated weights.
///
/// The classes are trained side by side, as lanes of one ``DualCoordinateDescent`` run that
/// share the random visiting orders drawn from ``seed`` (which makes each row visit one SIMD pass
/// over a contiguous weight row for all classes), and split into one group of lanes per thread.
/// A class's solution depends only on its own problem and on the seed, never on the thread
/// count. The passes run on the columns that two rows or more use; the weights of a column that
/// one row alone uses follow from that row's dual variables (``DualCoordinateDescent``), and
/// unused features get weight 0.
///
/// Probabilities: one-vs-rest Platt scaling, or with more than two classes a softmax temperature
/// when that labels more of the examples correctly
/// (``ProbabilityCalibration/fitSVMMapping(scores:labels:classes:threads:)``), fitted on the
/// decision values of the validation problem. Without one, it is fitted on the training decision
/// values; those are biased towards large margins (training points sit at or beyond the margin),
/// so the sigmoids come out too steep and the probabilities overconfident.
struct LinearSVM: Sendable {
    /// The cost `C` of margin violations; must be positive.
    var c: Double = 1
    /// The stopping tolerance `ε` on the projected-gradient spread (LIBLINEAR's default 0.1).
    var tolerance: Double = 0.1
    /// The largest number of outer iterations per class.
    var maxIterations = 1000
    /// The seed of the visiting orders.
    var seed: UInt64 = 0
    /// Worker threads (0: all cores).
    var threads = 0
    /// The probability mapping to give the model, when the caller already has one (a refit on
    /// all the data keeps the calibration fitted on held-out examples); `nil` fits one.
    var probability: LinearModel.ProbabilityMapping?
    /// The dual variables to start from (``Fit/dual`` of a nearby problem: another `C`, fewer
    /// features, or the first rows of this one), instead of 0; rows past its end start at 0.
    /// Fewer passes reach the tolerance, and the model is another solution within it.
    var start: [Float]?

    /// Trains a model.
    /// - Parameters:
    ///   - problem: The training set.
    ///   - validation: Held-out examples for the probability mapping (see the type's documentation).
    /// - Throws: ``MLKitError`` with code `invalidParameter` for a non-positive `c` or
    ///   `tolerance`, or a `maxIterations` below 1.
    func train(_ problem: TrainingProblem, validation: TrainingProblem? = nil) throws -> LinearModel {
        try fit(problem, validation: validation).model
    }

    /// A trained model with the solver's account of the run.
    struct Fit: Sendable {
        /// The model.
        let model: LinearModel
        /// The outer iterations of each class's solver (one entry for two classes).
        let iterations: [Int]
        /// The dual variables, row-major: one per row and class, or one per row for two classes.
        let dual: [Float]
    }

    /// Trains a model and reports the iterations of each binary problem.
    /// - Throws: As ``train(_:validation:)``.
    func fit(_ problem: TrainingProblem, validation: TrainingProblem? = nil) throws -> Fit {
        try validate()
        let threads = self.threads == 0 ? Parallel.defaultThreadCount : self.threads
        let solver = DualCoordinateDescent(matrix: problem.matrix, labels: problem.labels,
                                           tolerance: tolerance, maxIterations: maxIterations)
        let classes = problem.classCount
        let (weights, bias, iterations, dual) = solveAll(problem, solver: solver, threads: threads)
        let unscaled = LinearModel(features: problem.matrix.columns, classes: classes, weights: weights, bias: bias,
                                   probability: .softmax(temperature: 1))
        let mapping: LinearModel.ProbabilityMapping
        if let probability {
            mapping = probability
        } else {
            let calibration = validation.flatMap { $0.matrix.rows > 0 ? $0 : nil } ?? problem
            mapping = ProbabilityCalibration.fitSVMMapping(
                scores: unscaled.scores(for: calibration.matrix, threads: threads), labels: calibration.labels,
                classes: classes, threads: threads)
        }
        let model = LinearModel(features: unscaled.features, classes: classes, weights: unscaled.weights, bias: bias,
                                probability: mapping)
        return Fit(model: model, iterations: iterations, dual: dual)
    }

    /// Feature-major weights over the problem's columns, biases, and iterations per binary problem:
    /// one-vs-rest, or one problem and its negation for two classes. The lanes are split into one
    /// contiguous group per thread, which writes its lanes' columns of the results in place; every
    /// group draws the same visiting orders from ``seed``, so a lane's solution does not depend on
    /// the grouping.
    private func solveAll(_ problem: TrainingProblem, solver: DualCoordinateDescent, threads: Int)
        -> (weights: [Float], bias: [Float], iterations: [Int], dual: [Float]) {
        let weights = problem.classWeights, c = self.c, seed = self.seed, start = self.start
        if problem.classCount == 2 {
            let lane = DualCoordinateDescent.Lane(positiveClass: 1, positiveCost: c * Double(weights[1]),
                                                  negativeCost: c * Double(weights[0]))
            let solution = solver.solve(lanes: [lane], seed: seed, start: start)
            var both = [Float](repeating: 0, count: 2 * solution.weights.count)
            for (feature, weight) in solution.weights.enumerated() {
                both[2 * feature] = -weight
                both[2 * feature + 1] = weight
            }
            return (both, [-solution.bias[0], solution.bias[0]], solution.iterations, solution.alpha)
        }
        let lanes = (0..<problem.classCount).map { lane in
            DualCoordinateDescent.Lane(positiveClass: Int32(lane), positiveCost: c * Double(weights[lane]), negativeCost: c)
        }
        // Each group writes its lanes' columns of the merged weights and dual variables.
        var runs: [(bias: [Float], iterations: [Int])] = []
        let (merged, dual) = [Float].filled(solver.training.columns * lanes.count, solver.matrix.rows * lanes.count) {
            let weights = SharedPointer($0), alpha = SharedPointer($1)
            runs = Parallel.map(lanes.count, threads: threads) { group in
                solver.solve(lanes: Array(lanes[group]), seed: seed, start: start,
                             into: DualCoordinateDescent.Destination(weights: weights.base, alpha: alpha.base,
                                                                     width: lanes.count, offset: group.lowerBound))
            }
        }
        return (merged, runs.flatMap(\.bias), runs.flatMap(\.iterations), dual)
    }

    /// Checks the settings.
    private func validate() throws {
        let fail = MLKitError.invalidParameter
        guard c > 0, c.isFinite else { throw fail("c", "must be positive, not \(c)") }
        guard tolerance > 0 else { throw fail("tolerance", "must be positive, not \(tolerance)") }
        guard maxIterations >= 1 else { throw fail("maxIterations", "must be at least 1, not \(maxIterations)") }
        guard threads >= 0 else { throw fail("threads", "must not be negative, not \(threads)") }
    }
}

extension LinearSVM: CandidateTrainer {
    static let defaultStrength = 0.5
    static let strengthName = "C"

    /// TF-IDF of words and bigrams, of the parts of joined words and of runs of punctuation,
    /// sublinear and L2-normalized (``TrainingPlan/features(for:)`` says why).
    static func features(_ choices: FeatureChoices) -> FeaturizerConfiguration {
        FeaturizerConfiguration(tokenizer: choices.tokenizer, maxWordNGram: choices.maxWordNGram, wordParts: true,
                                punctuation: true, indexing: choices.vocabulary,
                                weighting: .tfidf, sublinearTF: true, l2Normalize: true)
    }

    /// The dual variables of an SVM trained on a problem's rows, which a nearby problem starts
    /// from (``start``).
    struct DualStart {
        /// Row-major, as ``Fit/dual``.
        let values: [Float]
    }

    /// Trains from the dual variables ``startingDual(for:in:)`` finds, and records the
    /// model's own for the candidates after it and the refit.
    static func train(_ candidate: Candidate, on input: TrainingInput) throws -> ClassifierModel {
        var trainer = LinearSVM(c: candidate.strength, seed: input.seed, threads: input.threads)
        if let iterations = candidate.iterations { trainer.maxIterations = iterations }
        trainer.probability = input.calibration
        trainer.start = startingDual(for: candidate, in: input)
        let fit = try trainer.fit(input.problem, validation: input.validation)
        if !input.isRefit { input.warmStarts.record(DualStart(values: fit.dual), for: candidate) }
        return .linear(fit.model)
    }

    /// Where `candidate` starts: in the refit, its own dual variables on the training split,
    /// which comes first in the refit's rows; else those of an SVM trained before it on the same
    /// rows (``startingPoint(for:among:)``), scaled by the ratio of their `C`
    /// (``dualStart(_:from:to:)``); `nil` for the first.
    static func startingDual(for candidate: Candidate, in input: TrainingInput) -> [Float]? {
        if input.isRefit { return input.warmStarts.take(DualStart.self, of: candidate)?.values }
        return startingPoint(for: candidate, among: input.warmStarts).map { source in
            dualStart(source.state.values, from: source.candidate, to: candidate)
        }
    }

    /// The SVM trained before `candidate` on the same rows whose dual variables it starts from:
    /// the same SVM with the full vocabulary when `candidate` prunes it (same rows, fewer
    /// columns), else the last SVM trained (same rows and columns, another `C`); `nil` for the
    /// first.
    static func startingPoint(for candidate: Candidate, among warmStarts: WarmStarts)
        -> (candidate: Candidate, state: DualStart)? {
        let full = Candidate(algorithm: candidate.algorithm, features: candidate.features.unpruned,
                             strength: candidate.strength, iterations: candidate.iterations)
        if let state = warmStarts.state(DualStart.self, of: full) { return (full, state) }
        return warmStarts.latest(DualStart.self)
    }

    /// The dual variables of `source` as a start for `target`, scaled by the ratio of their
    /// `C`: at the optimum `αᵢ = 2Cᵢ max(0, 1 − yᵢ f(xᵢ))`, so where the margins change little
    /// the dual variables grow with `C`. (Unscaled, training fortunes-topic took 1.07× as
    /// long.)
    static func dualStart(_ dual: [Float], from source: Candidate, to target: Candidate) -> [Float] {
        let scale = Float(target.strength / source.strength)
        return scale == 1 ? dual : dual.map { $0 * scale }
    }
}

/// Multinomial logistic regression ("maximum entropy"), L2-regularized, trained by a
/// trust-region Newton method.
///
/// It minimizes, over feature-major weights `W` and biases `b`,
///
///     f(W, b) = ½‖W‖²_F + C Σᵢ w_{yᵢ} · CE(softmax(xᵢ W + b), yᵢ)
///
/// where `w_c` is the class weight and the bias is not regularized: scikit-learn's
/// `LogisticRegression(C=C, solver="lbfgs")` objective, whose value scikit-learn reports divided
/// by `C Σᵢ w_{yᵢ}`. With two classes this symmetric softmax equals scikit-learn's binomial model
/// at `C_binomial = 2C` (the optimum splits the weight vector as `±w/2`).
///
/// The solver is ``TrustRegionNewton`` (LIBLINEAR's `-s 0` solver, here for the multinomial
/// loss) from zero or from a warm start, stopping when `‖∇f‖₂ ≤ tolerance · ‖∇f(0)‖₂` or
/// after ``maxIterations`` Newton iterations. It keeps four and a half vectors' worth of
/// `features × classes` floats (four, and the preconditioner in bfloat16), where L-BFGS with
/// memory `m` keeps `2m + 6`; each conjugate-gradient step is one Hessian-vector product, a pass
/// over the data as costly as a gradient. The loss, gradient and
/// Hessian products (``SoftmaxLoss``) are computed on the training matrix's used columns only
/// (``ColumnCompaction``); unused features get weight 0. Results are identical for every thread
/// count. Probabilities are `softmax(scores)`, temperature 1.
struct LogisticRegression: Sendable {
    /// The inverse regularization strength `C` (scikit-learn's `C`); must be positive.
    var c: Double = 1
    /// The relative gradient-norm tolerance.
    var tolerance: Double = 1e-4
    /// The largest number of Newton iterations.
    var maxIterations = 100
    /// Worker threads (0: all cores).
    var threads = 0

    /// A trained model with the optimizer's account of the run.
    struct Fit: Sendable {
        /// The model.
        let model: LinearModel
        /// How the optimization went: the objective `f(W, b)` at the returned weights, the
        /// iterations, the gradient norms, and why it stopped.
        let optimization: TrustRegionNewton.Summary
    }

    /// Weights to start from: a trained model, and which of its columns each of the problem's
    /// columns continues. A refit on all the data starts from the model trained on the training
    /// split, whose vocabulary has fewer features.
    ///
    /// A class, so that the model is handed over once: the solver takes it out of the start
    /// (``take()``) when it writes its starting point, before allocating its working vectors,
    /// and the model is freed then if nothing else holds it.
    final class WarmStart: @unchecked Sendable {
        // Unchecked: `model` changes only in `take()`, which one thread calls once.
        private var model: LinearModel?
        /// For each column of the problem, the model's column with the same feature, or −1 for a
        /// feature the model does not have (it starts at 0); `nil` when the problem has the
        /// model's own columns.
        let sourceColumns: [Int32]?
        /// The model's number of classes.
        let classes: Int
        /// The number of the problem's columns that the start fits.
        let columns: Int

        /// A start from `model`, whose columns are the problem's (`sourceColumns` `nil`) or mapped
        /// by `sourceColumns`.
        init(_ model: LinearModel, sourceColumns: [Int32]? = nil) {
            precondition(sourceColumns?.allSatisfy { $0 < model.features } ?? true)
            self.model = model
            self.sourceColumns = sourceColumns
            classes = model.classes
            columns = sourceColumns?.count ?? model.features
        }

        /// The model, the first time; `nil` after.
        func take() -> LinearModel? {
            defer { model = nil }
            return model
        }
    }

    /// Trains a model.
    /// - Parameters:
    ///   - problem: The training set.
    ///   - initial: Weights to start from (a model with the same features and classes).
    /// - Throws: ``MLKitError`` with code `invalidParameter` for a non-positive `c` or
    ///   `tolerance`, a negative `maxIterations`, or a warm start of another shape.
    func train(_ problem: TrainingProblem, initial: LinearModel? = nil) throws -> LinearModel {
        try fit(problem, initial: initial).model
    }

    /// Trains a model and reports the optimization.
    /// - Throws: As ``train(_:initial:)``.
    func fit(_ problem: TrainingProblem, initial: LinearModel? = nil) throws -> Fit {
        try fit(problem, start: initial.map { WarmStart($0) })
    }

    /// Trains a model from a warm start, if any, and reports the optimization. The start's model
    /// is taken (``WarmStart/take()``) and freed before the solver's vectors are allocated.
    /// - Throws: As ``train(_:initial:)``.
    func fit(_ problem: TrainingProblem, start: WarmStart?) throws -> Fit {
        try validate(problem: problem, start: start)
        let threads = self.threads == 0 ? Parallel.defaultThreadCount : self.threads
        let compaction = ColumnCompaction(matrix: problem.matrix)
        let compact = TrainingProblem(matrix: compaction.compact(problem.matrix), labels: problem.labels,
                                      classCount: problem.classCount, classWeights: problem.classWeights)
        let loss = SoftmaxLoss(problem: compact, c: c, threads: threads)
        let classes = problem.classCount
        let result = TrustRegionNewton(tolerance: tolerance, maxIterations: maxIterations, threads: threads)
            .minimize(loss, count: (compaction.compactColumns + 1) * classes) { point in
                if let start, let model = start.take() {
                    Self.writeStartingPoint(model, columns: start.sourceColumns, compaction: compaction, into: point)
                }
            }
        let weightCount = compaction.compactColumns * classes
        let model = LinearModel(features: problem.matrix.columns, classes: classes,
                                weights: compaction.expand(Array(result.solution[..<weightCount]), classes: classes),
                                bias: Array(result.solution[weightCount...]), probability: .softmax(temperature: 1))
        return Fit(model: model, optimization: result.summary)
    }

    /// Writes the compact parameter vector of a warm start into the solver's `point` (zeros):
    /// the weight row that each used column continues (``WarmStart/sourceColumns``), then the
    /// biases.
    private static func writeStartingPoint(_ initial: LinearModel, columns sourceColumns: [Int32]?,
                                           compaction: ColumnCompaction, into point: UnsafeMutableBufferPointer<Float>) {
        let classes = initial.classes
        var offset = 0
        initial.weights.withUnsafeBufferPointer { weights in
            for column in compaction.usedColumns {
                let source = Int(sourceColumns?[Int(column)] ?? column)
                if source >= 0 {
                    let row = weights[(source * classes)..<((source + 1) * classes)]
                    _ = UnsafeMutableBufferPointer(rebasing: point[offset..<(offset + classes)]).update(fromContentsOf: row)
                }
                offset += classes
            }
        }
        _ = UnsafeMutableBufferPointer(rebasing: point[offset..<(offset + classes)]).update(fromContentsOf: initial.bias)
    }

    /// Checks the settings and the shape of the warm start.
    private func validate(problem: TrainingProblem, start: WarmStart?) throws {
        let fail = MLKitError.invalidParameter
        guard c > 0, c.isFinite else { throw fail("c", "must be positive, not \(c)") }
        guard tolerance > 0 else { throw fail("tolerance", "must be positive, not \(tolerance)") }
        guard maxIterations >= 0 else { throw fail("maxIterations", "must not be negative, not \(maxIterations)") }
        guard threads >= 0 else { throw fail("threads", "must not be negative, not \(threads)") }
        if let start, start.columns != problem.matrix.columns || start.classes != problem.classCount {
            throw fail("initial", "the warm start has \(start.columns) features and \(start.classes) classes; "
                       + "the problem has \(problem.matrix.columns) and \(problem.classCount)")
        }
    }
}

extension LogisticRegression: CandidateTrainer {
    static let defaultStrength = 10.0
    static let strengthName = "C"

    /// The features of ``LinearSVM``.
    static func features(_ choices: FeatureChoices) -> FeaturizerConfiguration {
        LinearSVM.features(choices)
    }

    /// A model trained on the training split and the vocabulary of its columns, which the refit
    /// starts from: each feature of the refit's vocabulary starts from its weights there, a
    /// feature only the held-out texts have from 0. On debian-sections the refit then took 17 s
    /// instead of 34 s, with the same test accuracy.
    struct ModelStart {
        let model: LinearModel
        let vocabulary: Vocabulary
    }

    /// Trains, in the refit from the model the same candidate left on the training split, and
    /// records the model for the refit.
    static func train(_ candidate: Candidate, on input: TrainingInput) throws -> ClassifierModel {
        var trainer = LogisticRegression(c: candidate.strength, threads: input.threads)
        if let iterations = candidate.iterations { trainer.maxIterations = iterations }
        // Taken out of the warm starts: the start holds the only reference to the model, which
        // the solver frees once started.
        let start = input.isRefit
            ? input.warmStarts.take(ModelStart.self, of: candidate).flatMap { source in
                input.vocabulary.map { WarmStart(source.model, sourceColumns: $0.columns(in: source.vocabulary)) }
            }
            : nil
        let model = try trainer.fit(input.problem, start: start).model
        if !input.isRefit, let vocabulary = input.vocabulary {
            input.warmStarts.record(ModelStart(model: model, vocabulary: vocabulary), for: candidate)
        }
        return .linear(model)
    }
}

/// One algorithm that ``TrainingPlan`` trains: the features it trains on, its default strength
/// and that strength's name, and how it fits a model to a featurized problem.
///
/// Adding a classifier takes one file, holding the classifier and its conformance; one case of
/// ``TextClassifierParameters/Algorithm``, which ``TextClassifierParameters/Algorithm/trainer``
/// maps to the type (the compiler asks for it); and, for `auto` to try it, one entry in
/// ``TrainingPlan/candidateGrid``. `docs/architecture.md` walks through it.
protocol CandidateTrainer {
    /// The strength when the parameters give none: `C`, the smoothing `α`, or a learning rate.
    static var defaultStrength: Double { get }
    /// The strength's name in a model's settings (``TrainingSummary/settings``): `C`, `alpha`,
    /// `learningRate`.
    static var strengthName: String { get }
    /// The features the algorithm trains on, from what the parameters decide for every one.
    static func features(_ choices: FeatureChoices) -> FeaturizerConfiguration
    /// Trains a model of `candidate` on `input`.
    /// - Throws: ``MLKitError`` for a setting the trainer cannot use.
    static func train(_ candidate: Candidate, on input: TrainingInput) throws -> ClassifierModel
}

/// What the parameters decide about every algorithm's features.
struct FeatureChoices {
    /// The tokenizer for the texts' language.
    let tokenizer: Tokenizer
    /// The longest word n-gram.
    let maxWordNGram: Int
    /// A vocabulary of the features seen often enough.
    let vocabulary: FeaturizerConfiguration.Indexing
}

extension TextClassifierParameters.Algorithm {
    /// The type that trains this algorithm. `automatic`, which chooses among the others, maps to
    /// the one it trains when it has no validation data to choose with, the SVM.
    var trainer: any CandidateTrainer.Type {
        switch self {
        case .automatic, .linearSVM: return LinearSVM.self
        case .naiveBayes: return MultinomialNaiveBayes.self
        case .complementNaiveBayes: return ComplementNaiveBayes.self
        case .maxEnt: return LogisticRegression.self
        case .embedding: return EmbeddingTrainer.self
        }
    }
}

/// What a trainer gets for one candidate: the featurized problem, and what the plan knows
/// around it. The candidates trained on the same features share one input, so that what one
/// computes from the problem serves the others (``shared(_:)``).
final class TrainingInput {
    /// The featurized training examples.
    let problem: TrainingProblem
    /// Held-out examples, featurized the same way, to fit probabilities on; `nil` in the refit.
    let validation: TrainingProblem?
    /// The vocabulary of the problem's columns, with vocabulary indexing.
    let vocabulary: Vocabulary?
    /// In the refit, the probability mapping fitted on held-out data that the model will get, so
    /// that the trainer need not fit one.
    let calibration: LinearModel.ProbabilityMapping?
    /// Whether this is the refit of the chosen candidate on all the data, whose first rows are
    /// the training split it was evaluated on.
    let isRefit: Bool
    /// The seed of every random choice.
    let seed: UInt64
    /// Worker threads (at least 1).
    let threads: Int
    /// The plan's warm starts: where a trainer records what a later candidate, or the refit, may
    /// start from, and finds what an earlier one left.
    let warmStarts: WarmStarts
    /// Values computed from ``problem``, by type.
    private var sharedValues: [ObjectIdentifier: Any] = [:]

    init(problem: TrainingProblem, validation: TrainingProblem?, vocabulary: Vocabulary?,
         calibration: LinearModel.ProbabilityMapping? = nil, isRefit: Bool, seed: UInt64, threads: Int,
         warmStarts: WarmStarts) {
        self.problem = problem
        self.validation = validation
        self.vocabulary = vocabulary
        self.calibration = calibration
        self.isRefit = isRefit
        self.seed = seed
        self.threads = threads
        self.warmStarts = warmStarts
    }

    /// The value of type `Value` that `make` computes from ``problem``, computed once for every
    /// candidate trained on this input: naive Bayes's class counts, which both naive Bayes
    /// classifiers and every smoothing share.
    func shared<Value>(_ make: () throws -> Value) rethrows -> Value {
        let key = ObjectIdentifier(Value.self)
        if let value = sharedValues[key] as? Value { return value }
        let value = try make()
        sharedValues[key] = value
        return value
    }
}

/// What trained candidates leave for others to start from, owned by one run of
/// ``TrainingPlan``: an SVM's dual variables, a maximum entropy model. Each state is recorded
/// under its candidate, in training order; the candidates trained after it may start from it,
/// and so does the refit of the one chosen. Once the plan has chosen, it drops the others'.
final class WarmStarts {
    private var entries: [(candidate: Candidate, state: Any)] = []

    /// Records what `candidate` leaves to start from.
    func record(_ state: Any, for candidate: Candidate) {
        entries.append((candidate, state))
    }

    /// The state of type `State` that `candidate` left, if any.
    func state<State>(_: State.Type, of candidate: Candidate) -> State? {
        entries.lazy.compactMap { $0.candidate == candidate ? $0.state as? State : nil }.first
    }

    /// The last state of type `State` recorded, with its candidate.
    func latest<State>(_: State.Type) -> (candidate: Candidate, state: State)? {
        for entry in entries.reversed() {
            if let state = entry.state as? State { return (entry.candidate, state) }
        }
        return nil
    }

    /// The state of type `State` that `candidate` left, taken out, so that the caller holds its
    /// only reference.
    func take<State>(_: State.Type, of candidate: Candidate) -> State? {
        guard let position = entries.firstIndex(where: { $0.candidate == candidate && $0.state is State })
        else { return nil }
        return entries.remove(at: position).state as? State
    }

    /// Drops every state but `candidate`'s.
    func keep(only candidate: Candidate?) {
        entries.removeAll { $0.candidate != candidate }
    }
}

/// How ``TextClassifier`` trains, named after Create ML's `MLTextClassifier.ModelParameters`.
public struct TextClassifierParameters: Sendable {
    /// The learning algorithm.
    public enum Algorithm: String, Sendable, Hashable, CaseIterable, Codable {
        /// Try the algorithms and their main settings on the validation data, keep the best,
        /// and refit it on all the data. The default.
        case automatic = "auto"
        /// Multinomial naive Bayes on word and bigram counts.
        case naiveBayes = "nb"
        /// Complement naive Bayes (Rennie et al., 2003) on word and bigram counts.
        case complementNaiveBayes = "cnb"
        /// Maximum entropy: multinomial logistic regression with L2, on TF-IDF of words and
        /// bigrams (Create ML's default algorithm).
        case maxEnt = "maxent"
        /// A linear support vector machine (L2-regularized, squared hinge, one-vs-rest) with
        /// probabilities calibrated on the validation data.
        case linearSVM = "svm"
        /// A fastText-style classifier: averaged hashed word and bigram embeddings and a
        /// softmax layer, trained by mini-batch SGD.
        case embedding
    }

    /// Where validation examples come from.
    public enum Validation: Sendable {
        /// A stratified, seeded hold-out of this fraction of the training data (default 0.1).
        case split(fraction: Double)
        /// A separate dataset.
        case dataset(TextDataset)
        /// No validation: `automatic` then uses default settings, and SVM probabilities are
        /// calibrated on the training data.
        case none
    }

    /// How much each class's examples weigh in training.
    public enum ClassWeights: Sendable, Hashable {
        /// Every example weighs 1.
        case uniform
        /// Weights `n / (classes × n_class)`, so every class counts as much in total.
        case balanced
        /// A weight per label; labels not listed weigh 1.
        case explicit([String: Double])
    }

    /// The algorithm (default: ``Algorithm/automatic``).
    public var algorithm: Algorithm
    /// The validation data (default: a 10% stratified hold-out).
    public var validation: Validation
    /// The language of the texts, as a BCP 47 code (`en`, `zh`, `ja`, `th`). Chinese, Japanese
    /// and Thai select dictionary segmentation when ICU is available.
    public var language: String?
    /// The largest word n-gram (default: chosen by the algorithm, usually 2).
    public var maxWordNGram: Int?
    /// Keep only the features that occur at least this many times in the training texts, as
    /// fastText's `-minCount` does (default `nil`: every feature, and ``Algorithm/automatic``
    /// also tries 2 on validation). A larger count gives a smaller model that predicts faster,
    /// and usually a less accurate one. Not for ``Algorithm/embedding``, which hashes its features.
    public var minimumFeatureCount: Int?
    /// Class weights (default: uniform).
    public var classWeights: ClassWeights
    /// The largest number of iterations (Newton iterations of maxent, SVM passes or embedding epochs).
    public var maxIterations: Int?
    /// The regularization: `C` for maximum entropy and SVM, the smoothing `α` for naive Bayes.
    public var regularization: Double?
    /// The seed of every random choice; training is deterministic for a seed and thread count.
    public var seed: UInt64
    /// Worker threads (0: all cores).
    public var threads: Int
    /// The most time ``Algorithm/automatic`` spends trying candidates, in seconds.
    public var timeBudget: Double
    /// Called as training moves on, with a short description of the step and the fraction of
    /// the work done (0...1). The CLI draws its progress bar from it.
    public var progress: (@Sendable (_ step: String, _ fraction: Double) -> Void)?

    /// Creates parameters; every argument has a default.
    /// - Parameters:
    ///   - algorithm: The algorithm.
    ///   - validation: The validation data.
    ///   - language: The texts' language.
    ///   - maxWordNGram: The largest word n-gram.
    ///   - minimumFeatureCount: The fewest occurrences a feature needs to be kept.
    ///   - classWeights: Class weights.
    ///   - maxIterations: The iteration limit.
    ///   - regularization: `C` or `α`.
    ///   - seed: The seed.
    ///   - threads: Worker threads (0: all cores).
    ///   - timeBudget: Seconds for ``Algorithm/automatic``.
    public init(algorithm: Algorithm = .automatic, validation: Validation = .split(fraction: 0.1),
                language: String? = nil, maxWordNGram: Int? = nil, minimumFeatureCount: Int? = nil,
                classWeights: ClassWeights = .uniform,
                maxIterations: Int? = nil, regularization: Double? = nil, seed: UInt64 = 42, threads: Int = 0,
                timeBudget: Double = 30) {
        self.algorithm = algorithm
        self.validation = validation
        self.language = language
        self.maxWordNGram = maxWordNGram
        self.minimumFeatureCount = minimumFeatureCount
        self.classWeights = classWeights
        self.maxIterations = maxIterations
        self.regularization = regularization
        self.seed = seed
        self.threads = threads
        self.timeBudget = timeBudget
        self.progress = nil
    }
}

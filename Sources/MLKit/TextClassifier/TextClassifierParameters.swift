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

    /// Checks every setting that does not depend on the training data, as LIBLINEAR's
    /// `check_parameter` does: ``TextClassifier/init(trainingData:parameters:)`` calls it before
    /// it reads the data, and a caller may call it earlier, before loading the data at all.
    /// (Training then checks that the labels of ``classWeights`` are in the data.)
    /// - Throws: ``MLKitError`` with code `invalidParameter`, its location's field naming the
    ///   property at fault (`maxWordNGram`, `validation`, …), so that a caller can name the option
    ///   its user typed instead.
    public func validate() throws {
        let fail = MLKitError.invalidParameter
        if case .split(let fraction) = validation, !(fraction > 0 && fraction < 1) {
            throw fail("validation", "the validation fraction must lie strictly between 0 and 1, not \(fraction)")
        }
        if let ngrams = maxWordNGram, !(1...5).contains(ngrams) {
            throw fail("maxWordNGram", "must be 1 to 5, not \(ngrams)")
        }
        if let count = minimumFeatureCount {
            guard count >= 1 else { throw fail("minimumFeatureCount", "must be at least 1, not \(count)") }
            guard algorithm != .embedding else {
                throw fail("minimumFeatureCount", "applies to a vocabulary; the embedding classifier hashes its features")
            }
        }
        if let strength = regularization, !(strength > 0) {
            throw fail("regularization", "must be positive, not \(strength)")
        }
        if let iterations = maxIterations, iterations < 1 {
            throw fail("maxIterations", "must be at least 1, not \(iterations)")
        }
        if threads < 0 { throw fail("threads", "must be 0 (all cores) or more, not \(threads)") }
        if !(timeBudget >= 0) { throw fail("timeBudget", "must be 0 seconds or more, not \(timeBudget)") }
        if case .explicit(let weights) = classWeights {
            for (label, weight) in weights.sorted(by: { $0.key < $1.key }) where !(weight > 0) {
                throw fail("classWeights", "the weight of \"\(label)\" must be positive")
            }
        }
    }

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

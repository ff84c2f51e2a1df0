public import Foundation

/// How ``WordTagger`` trains, named after Create ML's `MLWordTagger.ModelParameters`.
public struct WordTaggerParameters: Sendable {
    /// The learning algorithm.
    public enum Algorithm: String, Sendable, Hashable, CaseIterable, Codable {
        /// Try the CRF with two regularizations and the perceptron on the validation data, keep
        /// the best, and refit it on all the data. The default.
        case automatic = "auto"
        /// A first-order linear-chain conditional random field trained to convergence by L-BFGS
        /// with L2 regularization (Create ML's `crf` algorithm).
        case crf
        /// An averaged structured perceptron: faster to train, usually a little less accurate.
        case perceptron
    }

    /// Where validation sentences come from.
    public enum Validation: Sendable {
        /// A seeded random hold-out of this fraction of the sentences (default 0.1).
        case split(fraction: Double)
        /// Separate sentences.
        case dataset([TaggedTokens])
        /// No validation: ``Algorithm/automatic`` then trains the CRF with its default settings.
        case none
    }

    /// The algorithm (default: ``Algorithm/automatic``).
    public var algorithm: Algorithm
    /// The validation data (default: a 10% hold-out).
    public var validation: Validation
    /// The CRF's L2 coefficient c₂ (CRFsuite's `c2`): the objective is the negative
    /// log-likelihood plus c₂‖θ‖². Default: chosen by ``Algorithm/automatic`` on the validation
    /// data, else 1.
    public var regularization: Double?
    /// The most L-BFGS iterations of the CRF (default 100), or the perceptron's epochs
    /// (default 10).
    public var maxIterations: Int?
    /// The CRF stops when its objective fell by less than this fraction over the last 10
    /// iterations (default 10⁻⁴).
    public var tolerance: Double
    /// The language of the text, as a BCP 47 code: `zh`, `ja` and `th` make ``WordTagger/tags(for:tokenizer:)``
    /// find words with ICU's dictionaries, unless the training tokens are single characters.
    public var language: String?
    /// The seed of every random choice; training is deterministic for a seed and thread count.
    public var seed: UInt64
    /// Worker threads (0: all cores).
    public var threads: Int
    /// Called as training moves on, with a short description of the step and the fraction of
    /// the work done (0...1).
    public var progress: (@Sendable (_ step: String, _ fraction: Double) -> Void)?

    /// Creates parameters; every argument has a default.
    /// - Parameters:
    ///   - algorithm: The algorithm.
    ///   - validation: The validation data.
    ///   - regularization: The CRF's c₂.
    ///   - maxIterations: L-BFGS iterations or perceptron epochs.
    ///   - tolerance: The CRF's convergence tolerance.
    ///   - language: The text's language.
    ///   - seed: The seed.
    ///   - threads: Worker threads (0: all cores).
    public init(algorithm: Algorithm = .automatic, validation: Validation = .split(fraction: 0.1),
                regularization: Double? = nil, maxIterations: Int? = nil, tolerance: Double = 1e-4,
                language: String? = nil, seed: UInt64 = 42, threads: Int = 0) {
        self.algorithm = algorithm
        self.validation = validation
        self.regularization = regularization
        self.maxIterations = maxIterations
        self.tolerance = tolerance
        self.language = language
        self.seed = seed
        self.threads = threads
        self.progress = nil
    }

    /// Checks that the settings can be used.
    /// - Throws: ``MLKitError`` with code `invalidParameter`, naming the field.
    func validate() throws {
        if let regularization, !(regularization >= 0 && regularization.isFinite) {
            throw MLKitError.invalidParameter("regularization", "must be a finite number ≥ 0, not \(regularization)")
        }
        if let maxIterations, maxIterations < 1 {
            throw MLKitError.invalidParameter("maxIterations", "must be at least 1, not \(maxIterations)")
        }
        if !(tolerance >= 0 && tolerance.isFinite) {
            throw MLKitError.invalidParameter("tolerance", "must be a finite number ≥ 0, not \(tolerance)")
        }
        if case .split(let fraction) = validation, !(fraction > 0 && fraction < 1) {
            throw MLKitError.invalidParameter("validation", "the split must lie strictly between 0 and 1, not \(fraction)")
        }
    }
}

/// What training a word tagger did: the algorithm and settings chosen, why, and how long it took.
public struct WordTaggerTrainingSummary: Sendable, Hashable, Codable {
    /// The algorithm.
    public var algorithm: WordTaggerParameters.Algorithm
    /// The settings, as text (`c2`, `iterations`, `epochs`).
    public var settings: [String: String]
    /// Why these were chosen (for ``WordTaggerParameters/Algorithm/automatic``, the candidates
    /// tried with their validation scores).
    public var reason: String
    /// The number of training sentences.
    public var examples: Int
    /// The number of training tokens.
    public var tokens: Int
    /// Wall-clock seconds.
    public var seconds: Double
    /// When training finished.
    public var date: Date
}

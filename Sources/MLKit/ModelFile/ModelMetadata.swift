public import Foundation

/// What a model file says about its model, beside the weights: Create ML's metadata fields,
/// plus what mlkit records about training.
public struct ModelMetadata: Sendable, Hashable, Codable {
    /// Who made the model.
    public var author: String?
    /// A one-line description.
    public var shortDescription: String?
    /// The model's licence.
    public var license: String?
    /// The model's own version string.
    public var version: String?
    /// Further key/value pairs of the author's choosing.
    public var additional: [String: String]

    /// Creates metadata; every field is optional.
    /// - Parameters:
    ///   - author: The author.
    ///   - shortDescription: A one-line description.
    ///   - license: The licence.
    ///   - version: The model's version.
    ///   - additional: Further key/value pairs.
    public init(author: String? = nil, shortDescription: String? = nil, license: String? = nil,
                version: String? = nil, additional: [String: String] = [:]) {
        self.author = author
        self.shortDescription = shortDescription
        self.license = license
        self.version = version
        self.additional = additional
    }
}

/// What training did: the algorithm and settings chosen, why, and how long it took.
public struct TrainingSummary: Sendable, Hashable, Codable {
    /// The algorithm.
    public var algorithm: TextClassifierParameters.Algorithm
    /// The settings, as text (`C`, `alpha`, features).
    public var settings: [String: String]
    /// Why these were chosen, in one sentence: for ``TextClassifierParameters/Algorithm/automatic``
    /// the rule that picked the candidate among ``candidates``.
    public var reason: String
    /// The number of training examples.
    public var examples: Int
    /// Wall-clock seconds.
    public var seconds: Double
    /// When training finished.
    public var date: Date
    /// The candidates that ``TextClassifierParameters/Algorithm/automatic`` compared on the
    /// validation data, in the order they were tried (its order of preference, then the pruned
    /// vocabulary); `nil` when no choice was made, and in files written before mlkit recorded
    /// them.
    public var candidates: [Candidate]?

    /// One candidate that training tried, with its scores on the validation data.
    public struct Candidate: Sendable, Hashable, Codable {
        /// The algorithm.
        public var algorithm: TextClassifierParameters.Algorithm
        /// The settings, as text, as in ``TrainingSummary/settings``.
        public var settings: [String: String]
        /// The fraction of the validation examples labelled right.
        public var accuracy: Double
        /// The mean of the per-class F1 scores on the validation examples.
        public var macroF1: Double
        /// Wall-clock seconds to featurize and train it.
        public var seconds: Double
        /// Whether it is the candidate chosen (before the refit on all the data).
        public var chosen: Bool
    }
}

import Foundation

/// A trained word tagger: give it the tokens of a sentence, get a label for each, such as
/// COMPANY, PRODUCT or NONE, or a part of speech, or the B/M/E/S tags that segment Chinese
/// text into words.
///
/// The names follow Create ML's `MLWordTagger` and NaturalLanguage's `NLTagger`. The model is
/// a first-order linear-chain model over the features of each token and its neighbours
/// (``TokenFeatures``), trained as a CRF or an averaged perceptron; labels come from Viterbi
/// decoding, their probabilities from forward-backward. A tagger is an immutable value and
/// `Sendable`: load it once and call it from as many threads as you like.
///
/// ```swift
/// let tagger = try WordTagger(contentsOf: URL(fileURLWithPath: "tagger.mlkit"))
/// tagger.predictedLabels(for: ["Apple", "announced", "iOS", "14"])  // ["COMPANY", "NONE", "OS", "NONE"]
/// for tag in tagger.tags(for: "Google announced Android 11") { print(tag.token, tag.label) }
/// ```
public struct WordTagger: Sendable {
    /// The tagger's parts, behind one immutable reference: copying a tagger costs one retain.
    final class Storage: Sendable {
        let labels: [String]
        let attributes: Vocabulary
        let model: LinearChainModel
        let tokenizer: Tokenizer
        let metadata: ModelMetadata
        let trainingSummary: WordTaggerTrainingSummary?
        let trainingMetrics: TaggingMetrics?
        let validationMetrics: TaggingMetrics?
        let formatVersion: Int?

        init(labels: [String], attributes: Vocabulary, model: LinearChainModel, tokenizer: Tokenizer,
             metadata: ModelMetadata, trainingSummary: WordTaggerTrainingSummary?, trainingMetrics: TaggingMetrics?,
             validationMetrics: TaggingMetrics?, formatVersion: Int?) {
            self.labels = labels
            self.attributes = attributes
            self.model = model
            self.tokenizer = tokenizer
            self.metadata = metadata
            self.trainingSummary = trainingSummary
            self.trainingMetrics = trainingMetrics
            self.validationMetrics = validationMetrics
            self.formatVersion = formatVersion
        }
    }

    let storage: Storage

    /// The labels, sorted; metrics use this order.
    public var labels: [String] { storage.labels }
    /// The author, licence, version and description.
    public var metadata: ModelMetadata { storage.metadata }
    /// What training chose and why.
    public var trainingSummary: WordTaggerTrainingSummary? { storage.trainingSummary }
    /// Metrics on the training sentences.
    public var trainingMetrics: TaggingMetrics? { storage.trainingMetrics }
    /// Metrics on the held-out validation sentences, measured before the final refit.
    public var validationMetrics: TaggingMetrics? { storage.validationMetrics }
    /// The model file format version this tagger was read from (`nil` if trained here).
    public var formatVersion: Int? { storage.formatVersion }
    /// The tokenizer that ``tags(for:tokenizer:)`` splits text with unless given another: words
    /// as the training tokens were (case kept), or single characters when every training token
    /// was one character.
    public var tokenizer: Tokenizer { storage.tokenizer }
    /// The number of distinct attributes (feature keys) the model has weights for.
    public var attributeCount: Int { storage.attributes.count }
    /// The number of weights: one per (attribute, label) pair seen in training, plus the
    /// transition, start and end weights.
    public var weightCount: Int {
        let labels = storage.model.labelCount
        return storage.model.features.pairCount + labels * labels + 2 * labels
    }

    init(labels: [String], attributes: Vocabulary, model: LinearChainModel, tokenizer: Tokenizer, metadata: ModelMetadata,
         trainingSummary: WordTaggerTrainingSummary?, trainingMetrics: TaggingMetrics?, validationMetrics: TaggingMetrics?,
         formatVersion: Int?) {
        storage = Storage(labels: labels, attributes: attributes, model: model, tokenizer: tokenizer, metadata: metadata,
                          trainingSummary: trainingSummary, trainingMetrics: trainingMetrics,
                          validationMetrics: validationMetrics, formatVersion: formatVersion)
    }

    // MARK: Prediction

    /// The most likely label of each token, as `MLWordTagger.prediction(from:)` gives: the
    /// labels that together score highest (Viterbi decoding).
    /// - Parameter tokens: The tokens of one sentence, as the training data split them.
    /// - Returns: One label per token.
    /// - Complexity: O(n·L²) for n tokens and L labels.
    public func predictedLabels(for tokens: [String]) -> [String] {
        guard !tokens.isEmpty else { return [] }
        let labels = storage.labels
        return withTokens(tokens) { bytes, ranges in
            withBestPath(bytes, ranges) { path in path.map { labels[Int($0)] } }
        }
    }

    /// The most likely labels of many sentences, computed on all cores.
    /// - Parameters:
    ///   - sentences: The tokens of each sentence.
    ///   - threads: Worker threads (0: all cores).
    /// - Returns: One array of labels per sentence, in order.
    public func predictedLabels(for sentences: [[String]], threads: Int = 0) -> [[String]] {
        let tagger = self
        return Parallel.balancedMap(sentences.count, threads: threads) { rows in
            rows.map { tagger.predictedLabels(for: sentences[$0]) }
        }.flatMap { $0 }
    }

    /// The most likely labels of each token with their marginal probabilities (forward-backward):
    /// the probability, over all labelings of the sentence, that the token has that label.
    /// - Parameters:
    ///   - tokens: The tokens of one sentence.
    ///   - maximumCount: How many labels to return at most for each token.
    /// - Returns: For each token, up to `maximumCount` labels with their probabilities.
    public func predictedLabelHypotheses(for tokens: [String], maximumCount: Int) -> [[String: Double]] {
        rankedLabels(for: tokens, maximumCount: maximumCount).map { ranking in
            Dictionary(ranking.map { ($0.label, $0.probability) }) { first, _ in first }
        }
    }

    /// The labels of each token ranked by marginal probability, most likely first.
    /// - Parameters:
    ///   - tokens: The tokens of one sentence.
    ///   - maximumCount: How many labels to return at most for each token.
    /// - Returns: For each token, pairs of label and probability in decreasing probability.
    public func rankedLabels(for tokens: [String], maximumCount: Int) -> [[(label: String, probability: Double)]] {
        guard !tokens.isEmpty else { return [] }
        return withTokens(tokens) { bytes, ranges in rankedLabels(bytes, ranges, maximumCount: maximumCount) }
    }

    /// Tokenizes `text` and labels each token, as `NLTagger` does with a custom model.
    /// - Parameters:
    ///   - text: The text.
    ///   - tokenizer: The tokenizer to split the text with (default: ``tokenizer``). Its
    ///     normalization is ignored: the tagger sees the tokens as they stand in the text.
    /// - Returns: Each token, its range in `text` and its label, in order.
    public func tags(for text: String, tokenizer: Tokenizer? = nil) -> [TaggedToken] {
        let tokenizer = tokenizer ?? storage.tokenizer
        let labels = storage.labels
        return Tokenizer.withUTF8(text) { bytes in
            var ranges: [Range<Int>] = []
            tokenizer.enumerateTokens(inUTF8: bytes) { ranges.append($0.range) }
            guard !ranges.isEmpty else { return [] }
            let utf8 = text.utf8
            return withBestPath(bytes, ranges) { path in
                zip(ranges, path).map { range, label in
                    let lower = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
                    let upper = utf8.index(lower, offsetBy: range.count)
                    return TaggedToken(token: bytes.string(range), range: lower..<upper, label: labels[Int(label)])
                }
            }
        }
    }

    /// Tokenizes and labels many texts, on all cores: ``tags(for:tokenizer:)`` for each.
    /// - Parameters:
    ///   - texts: The texts.
    ///   - tokenizer: The tokenizer (default: ``tokenizer``).
    ///   - threads: Worker threads (0: all cores).
    /// - Returns: Each text's tagged tokens, in order.
    public func tags(for texts: [String], tokenizer: Tokenizer? = nil, threads: Int = 0) -> [[TaggedToken]] {
        let tagger = self
        return Parallel.balancedMap(texts.count, threads: threads) { rows in
            rows.map { tagger.tags(for: texts[$0], tokenizer: tokenizer) }
        }.flatMap { $0 }
    }

    /// Measures the tagger on labelled sentences.
    /// - Parameters:
    ///   - data: Sentences with their true labels. Labels the tagger does not know count as
    ///     errors.
    ///   - threads: Worker threads (0: all cores).
    /// - Returns: Token accuracy, per-label and entity metrics, and the confusion matrix, over
    ///   the tagger's labels and any others the data has (sorted).
    public func evaluation(on data: [TaggedTokens], threads: Int = 0) -> TaggingMetrics {
        let predicted = predictedLabels(for: data.map(\.tokens), threads: threads)
        let labels = Array(Set(storage.labels).union(data.lazy.flatMap(\.labels))).sorted()
        let index = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, $0) })
        return TaggingMetrics(labels: labels, actual: data.map { $0.labels.map { index[$0]! } },
                              predicted: predicted.map { $0.map { index[$0]! } })
    }

    // MARK: Internals

    /// Copies the tokens' bytes into this thread's buffer and calls `body` with it and each
    /// token's range.
    func withTokens<R>(_ tokens: [String], _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) -> R) -> R {
        let workspace = PredictionWorkspace.current.tagging
        workspace.tokenBytes.removeAll(keepingCapacity: true)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(tokens.count)
        for token in tokens {
            let start = workspace.tokenBytes.count
            workspace.tokenBytes.append(contentsOf: token.utf8)
            ranges.append(start..<workspace.tokenBytes.count)
        }
        return workspace.tokenBytes.withUnsafeBufferPointer { body($0, ranges) }
    }

    /// Scores the tokens and calls `body` with the Viterbi path.
    func withBestPath<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>], _ body: (UnsafeBufferPointer<Int32>) -> R) -> R {
        let workspace = PredictionWorkspace.current.tagging
        return storage.model.withViews { views in
            workspace.withStateScores(bytes, ranges, attributes: storage.attributes, model: views) { scores in
                workspace.withPath(count: ranges.count) { path in
                    Viterbi.decode(scores: scores, length: ranges.count, model: views, workspace: &workspace.viterbi,
                                   path: path.baseAddress!)
                    return body(UnsafeBufferPointer(path))
                }
            }
        }
    }

    /// The marginal probabilities of each token's labels, ranked.
    func rankedLabels(_ bytes: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>],
                      maximumCount: Int) -> [[(label: String, probability: Double)]] {
        let workspace = PredictionWorkspace.current.tagging
        let labels = storage.labels
        return storage.model.withViews { views in
            workspace.withStateScores(bytes, ranges, attributes: storage.attributes, model: views) { scores in
                let potentials = ForwardBackward.Potentials(views)
                _ = workspace.forwardBackward.run(scores: scores, length: ranges.count, potentials: potentials)
                return (0..<ranges.count).map { t in
                    let row = UnsafeMutableBufferPointer(start: scores + t * labels.count, count: labels.count)
                    return TextClassifier.ranking(row, maximumCount).map { (labels[$0], Double(row[$0])) }
                }
            }
        }
    }
}

/// A token of a text and the label a ``WordTagger`` gave it.
public struct TaggedToken: Sendable, Hashable {
    /// The token, as it stands in the text.
    public var token: String
    /// Where the token is in the text.
    public var range: Range<String.Index>
    /// Its label.
    public var label: String

    /// Creates a tagged token.
    /// - Parameters:
    ///   - token: The token.
    ///   - range: Where it is in the text.
    ///   - label: Its label.
    public init(token: String, range: Range<String.Index>, label: String) {
        self.token = token
        self.range = range
        self.label = label
    }
}

/// A thread's buffers for tagging, kept in its ``PredictionWorkspace``.
final class TaggingWorkspace {
    /// The bytes of the tokens of a sentence given as strings.
    var tokenBytes: [UInt8] = []
    var features = TokenFeatures.Scratch()
    var viterbi = Viterbi.Workspace()
    var forwardBackward = ForwardBackward()
    private var scores: [Float] = []
    private var path: [Int32] = []
    private var hashes: [UInt64] = []
    private var owners: [Int32] = []

    /// Calls `body` with the state scores (`tokens × L`) of the tokens `ranges` of `bytes`.
    func withStateScores<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>], attributes: Vocabulary,
                            model: LinearChainModel.Views, _ body: (UnsafeMutablePointer<Float>) -> R) -> R {
        let labels = model.labelCount
        if scores.count < ranges.count * labels { scores = [Float](repeating: 0, count: ranges.count * labels) }
        hashes.removeAll(keepingCapacity: true)
        owners.removeAll(keepingCapacity: true)
        TokenFeatures.forEachAttribute(of: bytes, tokens: ranges, scratch: &features) { token, hash in
            hashes.append(hash)
            owners.append(Int32(token))
        }
        return scores.withUnsafeMutableBufferPointer { scores in
            let output = scores.baseAddress!
            output.initialize(repeating: 0, count: ranges.count * labels)
            attributes.withLookup { lookup in
                // The lookups are independent: fetch every slot first, so their misses overlap.
                for hash in hashes { lookup.prefetch(hash: hash) }
                for (hash, owner) in zip(hashes, owners) {
                    guard let attribute = lookup.index(ofHash: hash) else { continue }
                    let row = output + Int(owner) * labels
                    for pair in Int(model.rowStarts[attribute])..<Int(model.rowStarts[attribute + 1]) {
                        row[Int(model.pairLabels[pair])] += model.pairWeights[pair]
                    }
                }
            }
            return body(output)
        }
    }

    /// Calls `body` with room for a path of `count` labels.
    func withPath<R>(count: Int, _ body: (UnsafeMutableBufferPointer<Int32>) -> R) -> R {
        if path.count < count { path = [Int32](repeating: 0, count: count) }
        return path.withUnsafeMutableBufferPointer { body(UnsafeMutableBufferPointer(rebasing: $0[0..<count])) }
    }
}

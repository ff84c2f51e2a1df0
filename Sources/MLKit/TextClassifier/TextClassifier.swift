import Foundation

/// A trained text classifier: give it a text, get a label and the probability of each label.
///
/// The names follow Create ML's `MLTextClassifier` and NaturalLanguage's `NLModel`.
/// A classifier is an immutable value and `Sendable`: load it once and call it from as many
/// threads as you like. After a thread's first prediction, a prediction allocates nothing but
/// its result. A classifier always has at least one label (training needs two, and the loader
/// refuses a file without any), so every prediction gives one.
///
/// ```swift
/// let classifier = try TextClassifier(contentsOf: URL(fileURLWithPath: "sentiment.mlkit"))
/// classifier.predictedLabel(for: "I love rainbows")                       // "positive"
/// classifier.predictedLabelHypotheses(for: "I love rainbows", maximumCount: 2)
/// ```
public struct TextClassifier: Sendable {
    /// The classifier's parts, behind one immutable reference: copying a classifier (into a
    /// closure, a task, another thread) costs one retain, whatever the model's size.
    final class Storage: Sendable {
        let labels: [String]
        let metadata: ModelMetadata
        let trainingSummary: TrainingSummary?
        let trainingMetrics: ClassificationMetrics?
        let validationMetrics: ClassificationMetrics?
        let formatVersion: Int?
        let featurizer: Featurizer
        let model: ClassifierModel

        init(labels: [String], featurizer: Featurizer, model: ClassifierModel, metadata: ModelMetadata,
             trainingSummary: TrainingSummary?, trainingMetrics: ClassificationMetrics?,
             validationMetrics: ClassificationMetrics?, formatVersion: Int?) {
            self.labels = labels
            self.featurizer = featurizer
            self.model = model
            self.metadata = metadata
            self.trainingSummary = trainingSummary
            self.trainingMetrics = trainingMetrics
            self.validationMetrics = validationMetrics
            self.formatVersion = formatVersion
        }
    }

    let storage: Storage

    /// The labels, sorted; probabilities and metrics use this order.
    public var labels: [String] { storage.labels }
    /// The author, licence, version and description.
    public var metadata: ModelMetadata { storage.metadata }
    /// What training chose and why.
    public var trainingSummary: TrainingSummary? { storage.trainingSummary }
    /// Metrics on the training data.
    public var trainingMetrics: ClassificationMetrics? { storage.trainingMetrics }
    /// Metrics on the held-out validation data, measured before the final refit.
    public var validationMetrics: ClassificationMetrics? { storage.validationMetrics }
    /// The model file format version this classifier was read from (`nil` if trained here).
    public var formatVersion: Int? { storage.formatVersion }

    var featurizer: Featurizer { storage.featurizer }
    var model: ClassifierModel { storage.model }

    init(labels: [String], featurizer: Featurizer, model: ClassifierModel, metadata: ModelMetadata,
         trainingSummary: TrainingSummary?, trainingMetrics: ClassificationMetrics?,
         validationMetrics: ClassificationMetrics?, formatVersion: Int?) {
        storage = Storage(labels: labels, featurizer: featurizer, model: model, metadata: metadata,
                          trainingSummary: trainingSummary, trainingMetrics: trainingMetrics,
                          validationMetrics: validationMetrics, formatVersion: formatVersion)
    }

    /// The number of features in the learned vocabulary (0 when features are hashed).
    public var vocabularySize: Int { featurizer.vocabulary?.count ?? 0 }

    /// The featurizer's configuration: tokenizer, normalization, n-grams, hashing.
    public var featurizerConfiguration: FeaturizerConfiguration { featurizer.configuration }


    // MARK: Prediction

    /// The most likely label of `text`.
    /// - Parameter text: The text.
    /// - Returns: A label; the first of the most likely when several tie.
    public func predictedLabel(for text: String) -> String {
        let labels = self.labels
        return withClassValues(.order, for: text) { labels[Self.argmax($0)] }
    }

    /// The most likely labels of `text` with their probabilities.
    /// - Parameters:
    ///   - text: The text.
    ///   - maximumCount: How many labels to return at most.
    /// - Returns: Up to `maximumCount` labels, the most likely ones, with probabilities in [0, 1].
    public func predictedLabelHypotheses(for text: String, maximumCount: Int) -> [String: Double] {
        withClassValues(.probabilities, for: text) { hypotheses(from: $0, maximumCount: maximumCount) }
    }

    /// The ranked labels of `text`, most likely first, with their probabilities.
    /// - Parameters:
    ///   - text: The text.
    ///   - maximumCount: How many labels to return at most.
    /// - Returns: Pairs of label and probability, in decreasing probability.
    public func rankedLabels(for text: String, maximumCount: Int) -> [(label: String, probability: Double)] {
        withClassValues(.probabilities, for: text) { rankedLabels(from: $0, maximumCount: maximumCount) }
    }

    /// The most likely label of each text, computed on all cores: ``predictedLabel(for:)`` for
    /// many texts.
    /// - Parameters:
    ///   - texts: The texts.
    ///   - threads: Worker threads (0: all cores).
    /// - Returns: One label per text, in order.
    public func predictions(for texts: [String], threads: Int = 0) -> [String] {
        let labels = self.labels
        return mapClassValues(.order, count: texts.count, threads: threads, text: { texts[$0] }) { _, values in
            labels[Self.argmax(values)]
        }
    }

    /// The ranked labels of each text, most likely first, with their probabilities, computed on
    /// all cores: ``rankedLabels(for:maximumCount:)`` for many texts.
    /// - Parameters:
    ///   - texts: The texts.
    ///   - maximumCount: How many labels to return at most for each text.
    ///   - threads: Worker threads (0: all cores).
    /// - Returns: One ranking per text, in order.
    public func rankedLabels(for texts: [String], maximumCount: Int,
                             threads: Int = 0) -> [[(label: String, probability: Double)]] {
        let classifier = self
        return mapClassValues(.probabilities, count: texts.count, threads: threads, text: { texts[$0] }) {
            classifier.rankedLabels(from: $1, maximumCount: maximumCount)
        }
    }

    /// The most likely label for word counts, for callers that bring their own tokenizer, as
    /// the reference `SentimentPolarity` model is used.
    /// - Parameter wordCounts: Each word with its count; words are normalized as the model's
    ///   tokenizer normalizes them. Only word features are used (no n-grams).
    /// - Returns: A label; the first of the most likely when several tie.
    public func predictedLabel(forWordCounts wordCounts: [String: Double]) -> String {
        labels[Self.argmax(probabilities(forWordCounts: wordCounts))]
    }

    /// The probability of each label for word counts (see ``predictedLabel(forWordCounts:)``).
    /// - Parameter wordCounts: Each word with its count.
    /// - Returns: Each label with its probability.
    public func predictedLabelHypotheses(forWordCounts wordCounts: [String: Double]) -> [String: Double] {
        let probabilities = self.probabilities(forWordCounts: wordCounts)
        return Dictionary(uniqueKeysWithValues: zip(labels, probabilities.map(Double.init)))
    }

    // MARK: Internals

    /// Featurizes `text`, scores it, and passes its class values to `body`, using this
    /// thread's reusable workspace.
    func withClassValues<R>(_ kind: ClassValues, for text: String, _ body: (UnsafeMutableBufferPointer<Float>) -> R) -> R {
        var result: R?
        forEachClassValues(kind, rows: 0..<1, text: { _ in text }) { _, values in result = body(values) }
        return result!
    }

    /// Pairs of label and probability for the `maximumCount` largest of `probabilities`, largest
    /// first.
    private func rankedLabels(from probabilities: UnsafeMutableBufferPointer<Float>,
                              maximumCount: Int) -> [(label: String, probability: Double)] {
        Self.ranking(probabilities, maximumCount).map { (labels[$0], Double(probabilities[$0])) }
    }

    /// `transform` of the row and the class values of each of `count` texts, in order, computed
    /// on all cores: the batch form of ``withClassValues(_:for:_:)``. Rows are split into many
    /// small chunks that the threads claim as they go (``Parallel/balancedMap(_:threads:_:)``).
    /// - Parameters:
    ///   - text: The text of a row.
    ///   - threads: Worker threads (0: all cores).
    func mapClassValues<T: Sendable>(_ kind: ClassValues, count: Int, threads: Int, text: @Sendable (Int) -> String,
                                     _ transform: @Sendable (Int, UnsafeMutableBufferPointer<Float>) -> T) -> [T] {
        let classifier = self
        return Parallel.balancedMap(count, threads: threads) { rows in
            var results: [T] = []
            results.reserveCapacity(rows.count)
            classifier.forEachClassValues(kind, rows: rows, text: text) { row, values in
                results.append(transform(row, values))
            }
            return results
        }.flatMap { $0 }
    }

    /// Predicts the texts of `rows` one after another on this thread, passing each one's class
    /// values to `body`: featurize, then score, then map the scores to `kind`. The workspace,
    /// the featurizer and the scorer are fetched once rather than per text: each fetch would
    /// retain and release references that every thread shares.
    /// - Parameters:
    ///   - kind: Probabilities, or only their order (enough for a label or a ranking).
    ///   - text: The text of a row.
    func forEachClassValues(_ kind: ClassValues, rows: Range<Int>, text: (Int) -> String,
                            _ body: (Int, UnsafeMutableBufferPointer<Float>) -> Void) {
        let workspace = PredictionWorkspace.current
        let featurizer = storage.featurizer, model = storage.model
        let features = workspace.features
        model.withScorer { scorer in
            featurizer.withTables { tables in
                workspace.withScores(count: storage.labels.count) { scores in
                    for row in rows {
                        Tokenizer.withUTF8(text(row)) {
                            featurizer.features(of: $0, into: &features.pointee, ascending: false, tables: tables,
                                                lookahead: scorer)
                        }
                        scorer.score(features, into: scores)
                        model.map(kind, scores: scores)
                        body(row, scores)
                    }
                }
            }
        }
    }

    /// Probabilities for word counts: each word's feature index gets its count, then the
    /// featurizer's weighting applies.
    func probabilities(forWordCounts wordCounts: [String: Double]) -> [Float] {
        let normalization = featurizer.configuration.tokenizer.normalization
        var indices: [Int32: Float] = [:]
        for (word, count) in wordCounts where count > 0 {
            var normalized: [UInt8] = []
            Tokenizer.withUTF8(word) { bytes in normalization.forEachNormalizedByte(of: bytes) { normalized.append($0) } }
            if let index = featurizer.index(ofKey: String(decoding: normalized, as: UTF8.self)) {
                indices[Int32(index), default: 0] += Float(count)
            }
        }
        var buffer = FeatureBuffer()
        buffer.setCounts(indices.sorted { $0.key < $1.key })
        featurizer.applyWeighting(to: &buffer)
        var probabilities = [Float](repeating: 0, count: labels.count)
        let model = self.model
        probabilities.withUnsafeMutableBufferPointer { output in
            model.withScorer { scorer in withUnsafeMutablePointer(to: &buffer) { scorer.score($0, into: output) } }
            model.map(.probabilities, scores: output)
        }
        return probabilities
    }

    func hypotheses(from probabilities: UnsafeMutableBufferPointer<Float>, maximumCount: Int) -> [String: Double] {
        var result: [String: Double] = [:]
        for index in Self.ranking(probabilities, maximumCount) { result[labels[index]] = Double(probabilities[index]) }
        return result
    }

    /// The index of the largest of `values` (the first on ties), relative to their start; the
    /// start for no values.
    static func argmax<C: Collection<Float>>(_ values: C) -> Int where C.Index == Int {
        var best = values.startIndex
        for index in values.indices where values[index] > values[best] { best = index }
        return best - values.startIndex
    }

    /// Indices of the `maximumCount` largest values, largest first (ties: lower index first).
    static func ranking(_ values: UnsafeMutableBufferPointer<Float>, _ maximumCount: Int) -> [Int] {
        // A partial insertion sort: the best `maximumCount` so far, in order. Ties keep the
        // lower index first, as a stable sort would.
        let kept = min(max(0, maximumCount), values.count)
        var best: [Int] = []
        best.reserveCapacity(kept)
        guard kept > 0 else { return best }
        for index in values.indices {
            let value = values[index]
            if best.count == kept {
                guard value > values[best[kept - 1]] else { continue }
                best.removeLast()
            }
            var position = best.count
            while position > 0 && value > values[best[position - 1]] { position -= 1 }
            best.insert(index, at: position)
        }
        return best
    }
}

/// The trained weights behind a ``TextClassifier``.
enum ClassifierModel: Sendable {
    /// A linear model: naive Bayes, maximum entropy or SVM.
    case linear(LinearModel)
    /// A fastText-style model: averaged embeddings and a softmax layer.
    case embedding(EmbeddingModel)

    /// Advises the kernel to back the model's large arrays with 2 MiB pages, in place
    /// (``Swift/Array/adviseLargePages()``): for a model trained in this process, whose trainers
    /// filled them without that advice. A model read from a file uses the file's bytes in place
    /// (``FlatArray``), which this leaves as they are.
    func adviseLargePages() {
        switch self {
        case .linear(let model): model.weights.adviseLargePages()
        case .embedding(let model): model.embeddings.adviseLargePages()
        }
    }

    /// The probability mapping of a linear model, to carry over a calibration.
    var calibration: LinearModel.ProbabilityMapping? {
        if case .linear(let model) = self { return model.probability }
        return nil
    }

    /// The `maximumCount` most likely classes of every row of `matrix`, featurized texts, most
    /// likely first; on `threads` threads (0: all cores), with the same result on any count.
    func rankings(for matrix: SparseMatrix, maximumCount: Int, classes: Int, threads: Int) -> [[Int]] {
        let model = self
        return Parallel.balancedMap(matrix.rows, threads: threads) { rows in
            var rankings: [[Int]] = []
            rankings.reserveCapacity(rows.count)
            withUnsafeTemporaryAllocation(of: Float.self, capacity: classes) { output in
                matrix.forEachRow(in: rows) { _, indices, values in
                    model.scores(indices: indices, values: values, into: output)
                    model.map(.order, scores: output)
                    rankings.append(TextClassifier.ranking(output, maximumCount))
                }
            }
            return rankings
        }.flatMap { $0 }
    }

    /// Writes the raw scores of one sparse row of features into `output`, fetching a large
    /// linear model's rows first.
    func scores(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                into output: UnsafeMutableBufferPointer<Float>) {
        switch self {
        case .linear(let model): model.scores(indices: indices, values: values, into: output)
        case .embedding(let model): model.scores(indices: indices, values: values, into: output)
        }
    }

    /// Calls `body` with a ``Scorer`` of this model, valid only inside it.
    func withScorer<R>(_ body: (Scorer) -> R) -> R {
        guard case .linear(let model) = self else { return body(Scorer(model: self, rows: nil)) }
        return model.withWeightRows { body(Scorer(model: self, rows: $0)) }
    }

    /// Scores featurized texts: prediction's second step, after featurizing and before the scores
    /// are mapped (``map(_:scores:)``).
    ///
    /// It is also the featurizer's ``FeatureLookahead``: the rows of a linear model large enough
    /// for it (``LinearModel/prefetchThreshold``) are fetched as featurizing finds each feature,
    /// so that their cache misses overlap with the rest of the featurizing. On fortunes-topic and
    /// debian-sections that took 0.88–0.94× the time of fetching them all when scoring.
    struct Scorer: FeatureLookahead {
        /// The model.
        let model: ClassifierModel
        /// A large linear model's weight rows, fetched as features are found; `nil` otherwise.
        let rows: WeightRows?

        /// Starts fetching the weight row of feature `index`, if worth it.
        @inline(__always)
        func found(_ index: Int) { rows?.prefetch(index) }

        /// Writes the raw scores of one featurized text into `output`. The buffer is read in
        /// place, behind a pointer: passing it by value would copy its six arrays' references for
        /// every text.
        func score(_ features: UnsafeMutablePointer<FeatureBuffer>, into output: UnsafeMutableBufferPointer<Float>) {
            features.pointee.indices.withUnsafeBufferPointer { indices in
                features.pointee.values.withUnsafeBufferPointer { values in
                    let count = features.pointee.count
                    let indices = UnsafeBufferPointer(rebasing: indices[0..<count])
                    let values = UnsafeBufferPointer(rebasing: values[0..<count])
                    switch model {
                    case .linear(let linear):
                        linear.scores(indices: indices, values: values, into: output, prefetching: rows == nil)
                    case .embedding(let embedding):
                        embedding.scores(indices: indices, values: values, into: output)
                    }
                }
            }
        }
    }

    /// Turns raw scores, in place, into the class values of `kind`.
    func map(_ kind: ClassValues, scores: UnsafeMutableBufferPointer<Float>) {
        switch (self, kind) {
        case (_, .scores): break
        case (.linear(let model), .probabilities): model.probabilities(fromScores: scores)
        case (.linear(let model), .order): model.order(fromScores: scores)
        case (.embedding(let model), .probabilities): model.probabilities(fromScores: scores)
        // Softmax keeps the order of the scores.
        case (.embedding, .order): break
        }
    }
}

/// What a prediction writes for each class.
enum ClassValues {
    /// The probabilities, which sum to 1.
    case probabilities
    /// Values in the order of the probabilities, without their exponentials and normalization:
    /// enough to pick the label or rank the classes, and cheaper.
    case order
    /// The model's raw scores, which ``ClassifierModel/map(_:scores:)`` turns into either of the
    /// others.
    case scores
}

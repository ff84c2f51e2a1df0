import Foundation
public import MLKit

/// How a text becomes a text classifier's input.
enum TextInput: Sendable {
    /// Lowercased word counts (`[String: Double]`), as the reference chapter's app builds them.
    case wordCounts(input: String)
    /// The feature keys of an mlkit model exported to Core ML, with their term frequencies, as
    /// its metadata's featurizer configuration says.
    case features(input: String, FeaturizerConfiguration)
    /// The same, hashed into buckets (`[Int64: Double]`).
    case hashedFeatures(input: String, FeaturizerConfiguration)

    /// The user-defined metadata key under which an exported model keeps its featurizer's
    /// configuration, as JSON.
    static let featurizerKey = "mlkit.featurizer"

    /// The text input of a classifier whose only input is a dictionary, or `nil`.
    /// - Throws: ``CoreMLError`` (`invalidModel`) when the metadata holds a featurizer
    ///   configuration that does not decode, or whose settings mlkit's featurizer refuses: its
    ///   features could not be built, and word counts in their place would answer wrongly.
    init?(info: CoreMLModelInfo, plan: Plan, hasClassifier: Bool) throws {
        guard hasClassifier, plan.inputs.count == 1, let input = plan.inputs.first else { return nil }
        let configuration = try info.metadata.additional[Self.featurizerKey].map(Self.configuration)
        switch (input.kind, configuration) {
        case (.stringDictionary, let configuration?): self = .features(input: input.name, configuration)
        case (.stringDictionary, nil): self = .wordCounts(input: input.name)
        case (.int64Dictionary, let configuration?):
            guard case .hashed = configuration.indexing else { return nil }
            self = .hashedFeatures(input: input.name, configuration)
        default: return nil
        }
    }

    /// The featurizer configuration that an exported model's metadata holds, checked as an
    /// mlkit model file's is.
    private static func configuration(_ json: String) throws -> FeaturizerConfiguration {
        let configuration: FeaturizerConfiguration
        do {
            configuration = try JSONDecoder().decode(FeaturizerConfiguration.self, from: Data(json.utf8))
        } catch {
            throw CoreMLError(.invalidModel, "metadata \(featurizerKey): not a featurizer configuration (\(error))")
        }
        do {
            try configuration.validate()
        } catch let error as MLKitError {
            throw CoreMLError(.invalidModel, "metadata \(featurizerKey): \(error.location?.field ?? "setting"): \(error.reason)")
        }
        return configuration
    }

    /// The input's name.
    var name: String {
        switch self {
        case .wordCounts(let input), .features(let input, _), .hashedFeatures(let input, _): return input
        }
    }

    /// The input for `text`.
    func value(for text: String) -> Value {
        switch self {
        case .wordCounts:
            var counts: [String: Double] = [:]
            for token in Self.tokenizer.tokens(for: text) { counts[token, default: 0] += 1 }
            return .stringDictionary(counts)
        case .features(_, let configuration): return .stringDictionary(configuration.termFrequencies(for: text))
        case .hashedFeatures(_, let configuration): return .int64Dictionary(configuration.hashedTermFrequencies(for: text))
        }
    }

    /// Words, lowercased: the tokens of the reference chapter's word counts.
    static let tokenizer = Tokenizer()
}

/// A classifier whose only input is a dictionary (`[String: Double]` word counts, as the
/// reference chapter's `SentimentPolarity` takes) also serves as a text classifier, with the
/// names of mlkit's ``MLKit/TextClassifier``.
///
/// A text becomes lowercased word counts, or, for a model that mlkit exported (whose metadata
/// holds its featurizer's configuration under `mlkit.featurizer`), the feature keys and term
/// frequencies that mlkit's featurizer gives (``MLKit/FeaturizerConfiguration/termFrequencies(for:)``).
extension CoreMLModel {
    /// Whether the model serves as a text classifier: a classifier whose only input is a
    /// dictionary with string keys, or with int64 keys for a hashed model that mlkit exported.
    public var isTextClassifier: Bool { text != nil }

    /// The input the model takes for `text`: word counts, or an exported model's features.
    /// - Throws: ``CoreMLError`` (`invalidInput`) when the model is not a text classifier.
    public func input(for text: String) throws -> [String: CoreMLFeatureValue] {
        let input = try textInput()
        return [input.name: input.value(for: text).featureValue]
    }

    /// The most likely label of `text`.
    /// - Throws: ``CoreMLError`` (`invalidInput`) when the model is not a text classifier.
    public func predictedLabel(for text: String) throws -> String {
        let labels = labelNames
        return try withProbabilities(text: text) { labels[GLMClassifierStage.argmax($0)] }
    }

    /// The most likely labels of `text` with their probabilities.
    /// - Parameters:
    ///   - text: The text.
    ///   - maximumCount: How many labels to return at most.
    /// - Throws: ``CoreMLError`` (`invalidInput`) when the model is not a text classifier.
    public func predictedLabelHypotheses(for text: String, maximumCount: Int) throws -> [String: Double] {
        try withProbabilities(text: text) { hypotheses($0, maximumCount) }
    }

    /// The labels of `text`, most likely first, with their probabilities.
    /// - Throws: ``CoreMLError`` (`invalidInput`) when the model is not a text classifier.
    public func rankedLabels(for text: String, maximumCount: Int) throws -> [(label: String, probability: Double)] {
        try withProbabilities(text: text) { ranked($0, maximumCount) }
    }

    /// ``rankedLabels(for:maximumCount:)`` for many texts, on all cores.
    /// - Parameters:
    ///   - texts: The texts.
    ///   - maximumCount: How many labels to return at most for each text.
    ///   - threads: Worker threads (0: all cores).
    /// - Returns: One ranking per text, in order.
    /// - Throws: ``CoreMLError`` (`invalidInput`) when the model is not a text classifier.
    public func rankedLabels(for texts: [String], maximumCount: Int,
                             threads: Int = 0) throws -> [[(label: String, probability: Double)]] {
        _ = try textInput()
        let model = self
        return try BatchMap.map(texts.count, threads: threads) { index in
            try model.rankedLabels(for: texts[index], maximumCount: maximumCount)
        }
    }

    /// The most likely label for word counts the caller made, as the reference chapter's app
    /// makes them with NLTokenizer.
    /// - Parameter wordCounts: Each word (or, for an exported mlkit model, each feature key)
    ///   with its count.
    /// - Throws: ``CoreMLError`` (`invalidInput`) when the model's only input is not a
    ///   dictionary with string keys.
    public func predictedLabel(forWordCounts wordCounts: [String: Double]) throws -> String {
        let labels = labelNames
        return try withProbabilities(wordCounts: wordCounts) { labels[GLMClassifierStage.argmax($0)] }
    }

    /// The most likely labels for word counts, with their probabilities.
    /// - Throws: As ``predictedLabel(forWordCounts:)``.
    public func predictedLabelHypotheses(forWordCounts wordCounts: [String: Double],
                                         maximumCount: Int) throws -> [String: Double] {
        try withProbabilities(wordCounts: wordCounts) { hypotheses($0, maximumCount) }
    }

    /// Metrics of the model on labelled texts, as ``MLKit/TextClassifier/evaluation(on:threads:)``
    /// gives them: accuracy, per-class metrics, the confusion matrix, top-k accuracy and the
    /// log-loss. Labels the model does not know count as errors.
    /// - Parameters:
    ///   - dataset: Labelled texts.
    ///   - threads: Worker threads (0: one per core).
    /// - Throws: ``CoreMLError`` (`invalidInput`) when the model is not a text classifier.
    public func evaluation(on dataset: TextDataset, threads: Int = 0) throws -> ClassificationMetrics {
        let labels = labelNames
        let extra = dataset.labels.filter { !labels.contains($0) }
        let allLabels = labels + extra
        let index = Dictionary(allLabels.enumerated().map { ($1, $0) }) { first, _ in first }
        let examples = dataset.examples
        let actual = examples.map { index[$0.label]! }
        _ = try textInput()
        let model = self
        let scored = try BatchMap.map(examples.count, threads: threads) { row in
            try model.withProbabilities(text: examples[row].text) { probabilities in
                let truth = actual[row]
                return (model.ranking(probabilities, 5), -log(max(truth < labels.count ? probabilities[truth] : 0, 1e-15)))
            }
        }
        let logLoss = examples.isEmpty ? nil : scored.reduce(0) { $0 + $1.1 } / Double(examples.count)
        return ClassificationMetrics(labels: allLabels, actual: actual, ranked: scored.map(\.0), logLoss: logLoss)
    }

    // MARK: Internals

    private var labelNames: [String] { classifier?.stage.labels.names ?? [] }

    private func textInput() throws -> TextInput {
        guard let text else { throw notATextClassifier }
        return text
    }

    /// The error for a text on a model that does not take texts.
    private var notATextClassifier: CoreMLError {
        CoreMLError(.invalidInput, "the model is not a text classifier: that takes a classifier whose only input is a "
                    + "dictionary of word counts ([String: Double]); this one is a \(info.modelType) with inputs "
                    + info.inputs.map { "'\($0.name)' (\($0.type))" }.joined(separator: ", "))
    }

    /// Calls `body` with the probability of each label for `text`: through the sparse path when
    /// the model has one, else through the stages.
    func withProbabilities<R>(text: String, _ body: (UnsafeBufferPointer<Double>) -> R) throws -> R {
        let storage = self.storage
        guard let input = storage.text else { throw notATextClassifier }
        if let sparsePath = storage.sparsePath {
            switch input {
            case .wordCounts: return sparsePath.withProbabilities(text: text, tokenizer: TextInput.tokenizer, body)
            case .features(_, let configuration):
                return sparsePath.withProbabilities(counts: configuration.termFrequencies(for: text), body)
            case .hashedFeatures: break
            }
        }
        return try probabilities(input.value(for: text)).withUnsafeBufferPointer(body)
    }

    /// Calls `body` with the probability of each label for word counts.
    func withProbabilities<R>(wordCounts: [String: Double], _ body: (UnsafeBufferPointer<Double>) -> R) throws -> R {
        switch try textInput() {
        case .wordCounts, .features:
            if let sparsePath { return sparsePath.withProbabilities(counts: wordCounts, body) }
            return try probabilities(.stringDictionary(wordCounts)).withUnsafeBufferPointer(body)
        case .hashedFeatures:
            throw CoreMLError(.invalidInput, "the model hashes its features: it takes int64 buckets, not words")
        }
    }

    /// The probability of each label for the text input `value`: the stages up to the
    /// classifier's, then its probabilities, without building the output dictionaries.
    func probabilities(_ value: Value) throws -> [Double] {
        guard text != nil, let classifier else { throw CoreMLError(.invalidInput, "the model is not a text classifier") }
        var slots = [Value?](repeating: nil, count: plan.slotCount)
        slots[plan.inputs[0].slot] = value
        try plan.run(&slots, through: classifier.step)
        let step = plan.steps[classifier.step]
        do {
            return try classifier.stage.probabilities(try required(slots[step.inputs[0]]))
        } catch let failure as StepFailure {
            throw CoreMLError(failure.code, "\(step.stage): \(failure.reason)")
        }
    }

    /// Indices of the `count` largest probabilities, largest first (the first of equals first).
    func ranking(_ probabilities: UnsafeBufferPointer<Double>, _ count: Int) -> [Int] {
        let kept = min(max(0, count), probabilities.count)
        var best: [Int] = []
        best.reserveCapacity(kept)
        guard kept > 0 else { return best }
        for index in probabilities.indices {
            let value = probabilities[index]
            if best.count == kept {
                guard value > probabilities[best[kept - 1]] else { continue }
                best.removeLast()
            }
            var position = best.count
            while position > 0 && value > probabilities[best[position - 1]] { position -= 1 }
            best.insert(index, at: position)
        }
        return best
    }

    private func ranked(_ probabilities: UnsafeBufferPointer<Double>, _ count: Int) -> [(label: String, probability: Double)] {
        let labels = labelNames
        return ranking(probabilities, count).map { (labels[$0], probabilities[$0]) }
    }

    private func hypotheses(_ probabilities: UnsafeBufferPointer<Double>, _ count: Int) -> [String: Double] {
        let labels = labelNames
        var result: [String: Double] = [:]
        for index in ranking(probabilities, count) { result[labels[index]] = probabilities[index] }
        return result
    }
}

/// Maps `count` indices on several threads, keeping the order.
enum BatchMap {
    private final class Results<T>: @unchecked Sendable {
        var values: [T?]
        var error: (any Error)?
        let lock = NSLock()
        init(count: Int) { values = Array(repeating: nil, count: count) }
    }

    static func map<T>(_ count: Int, threads: Int, _ transform: (Int) throws -> T) throws -> [T] {
        let workers = threads > 0 ? threads : ProcessInfo.processInfo.activeProcessorCount
        guard count > 1, workers > 1 else { return try (0..<count).map(transform) }
        let chunks = min(count, workers * 8)
        let results = Results<T>(count: count)
        try withoutActuallyEscaping(transform) { transform in
            let work = UnsafeTransform(transform)
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let range = (count * chunk / chunks)..<(count * (chunk + 1) / chunks)
                var local: [T] = []
                local.reserveCapacity(range.count)
                do {
                    for index in range { local.append(try work.transform(index)) }
                } catch {
                    results.lock.lock()
                    results.error = results.error ?? error
                    results.lock.unlock()
                    return
                }
                results.lock.lock()
                for (offset, value) in local.enumerated() { results.values[range.lowerBound + offset] = value }
                results.lock.unlock()
            }
            if let error = results.error { throw error }
        }
        return results.values.map { $0! }
    }

    /// A non-escaping closure carried into the worker threads, which end before it does.
    private struct UnsafeTransform<T>: @unchecked Sendable {
        let transform: (Int) throws -> T
        init(_ transform: @escaping (Int) throws -> T) { self.transform = transform }
    }
}

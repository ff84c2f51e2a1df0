import Foundation

extension TextClassifier {
    /// Trains a classifier, as Create ML's `MLTextClassifier(trainingData:parameters:)` does.
    ///
    /// With ``TextClassifierParameters/Algorithm/automatic`` it tries several algorithms and
    /// settings on the validation data within the time budget, keeps the first in its order of
    /// preference whose validation accuracy is within one standard error of the best (the error
    /// of the difference, paired example by example), tries it again with a vocabulary of the
    /// features seen at least twice, keeps that if it scores better, and refits the one kept on
    /// all the data. The candidates and the reason are in ``trainingSummary``; the validation
    /// figures of the chosen candidate are in ``validationMetrics``.
    ///
    /// - Parameters:
    ///   - trainingData: Labelled texts, with at least two labels.
    ///   - parameters: How to train.
    /// - Throws: ``MLKitError`` with code `invalidDataset` for an empty dataset or a single
    ///   label, or `invalidParameter` for a setting that cannot be used, its location's field
    ///   naming the setting (``TextClassifierParameters/validate()``).
    public init(trainingData: TextDataset, parameters: TextClassifierParameters = TextClassifierParameters()) throws {
        try parameters.validate()
        let trained = try TrainingPlan(data: trainingData, parameters: parameters).run()
        self = TextClassifier(labels: trained.labels, featurizer: trained.featurizer, model: trained.model,
                              metadata: ModelMetadata(), trainingSummary: trained.summary,
                              trainingMetrics: trained.trainingMetrics, validationMetrics: trained.validationMetrics,
                              formatVersion: nil)
    }

    /// Metrics of this classifier on labelled examples.
    /// - Parameters:
    ///   - dataset: Labelled texts; labels the classifier does not know count as errors.
    ///   - threads: Worker threads (0: one per core).
    /// - Returns: Accuracy, per-class metrics, the confusion matrix, top-k accuracy and the
    ///   log-loss.
    public func evaluation(on dataset: TextDataset, threads: Int = 0) -> ClassificationMetrics {
        let extra = dataset.labels.filter { !labels.contains($0) }
        let allLabels = labels + extra
        let index = Dictionary(uniqueKeysWithValues: allLabels.enumerated().map { ($1, $0) })
        let examples = dataset.examples
        let actual = examples.map { index[$0.label]! }
        let known = labels.count, model = storage.model
        // One pass over the texts: each one's raw scores are mapped twice, to the values that
        // predictedLabel(for:) and predictions(for:) rank by, so that the metrics count exactly
        // the labels those give, and to probabilities for the log-loss.
        let scored = mapClassValues(.scores, count: examples.count, threads: threads, text: { examples[$0].text }) { row, scores in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: known) { probabilities in
                _ = probabilities.initialize(fromContentsOf: scores)
                model.map(.probabilities, scores: probabilities)
                model.map(.order, scores: scores)
                let truth = actual[row]
                return (ranking: Self.ranking(scores, 5),
                        negativeLog: -log(max(truth < known ? Double(probabilities[truth]) : 0, 1e-15)))
            }
        }
        // Added in row order, so that the sum does not depend on the thread count.
        let logLoss = examples.isEmpty ? nil : scored.reduce(0) { $0 + $1.negativeLog } / Double(examples.count)
        return ClassificationMetrics(labels: allLabels, actual: actual, ranked: scored.map(\.ranking), logLoss: logLoss)
    }

    func with(metadata: ModelMetadata) -> TextClassifier {
        TextClassifier(labels: labels, featurizer: featurizer, model: model, metadata: metadata,
                       trainingSummary: trainingSummary, trainingMetrics: trainingMetrics,
                       validationMetrics: validationMetrics, formatVersion: formatVersion)
    }
}

/// One algorithm with one set of features and settings.
struct Candidate: Hashable, Sendable {
    let algorithm: TextClassifierParameters.Algorithm
    let features: FeaturizerConfiguration
    /// `C` for maximum entropy and SVM, `α` for naive Bayes, the learning rate for embeddings.
    let strength: Double
    let iterations: Int?

    /// The settings as text, for the training summary and the model file.
    var settings: [String: String] {
        var settings = ["ngrams": "1-\(features.maxWordNGram)", "weighting": features.weighting.rawValue]
        if let range = features.characterNGrams { settings["charNGrams"] = "\(range.lowerBound)-\(range.upperBound)" }
        if case .vocabulary(let pruning) = features.indexing, pruning.minCount > 1 {
            settings["minCount"] = "\(pruning.minCount)"
        }
        settings[algorithm.trainer.strengthName] = "\(strength)"
        if let iterations { settings["maxIterations"] = "\(iterations)" }
        return settings
    }

    var label: String {
        "\(algorithm.rawValue) " + settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}

/// A candidate's validation results.
struct CandidateResult {
    let candidate: Candidate
    let metrics: ClassificationMetrics
    /// Whether the candidate's first choice was right, for each validation example in order:
    /// what ``TrainingPlan/gap(from:to:)`` pairs.
    let correct: [Bool]
    let seconds: Double
    /// The probability mapping fitted on the validation data, reused after the refit.
    let calibration: LinearModel.ProbabilityMapping?

    /// The candidate's place in the plan's list: the preference between equals.
    let order: Int

    /// Orders by accuracy, then macro-F1, then the plan's order of preference, so that the choice
    /// depends only on the data, the seed and the thread count, never on timing.
    static func isWorse(_ a: CandidateResult, than b: CandidateResult) -> Bool {
        if a.metrics.accuracy != b.metrics.accuracy { return a.metrics.accuracy < b.metrics.accuracy }
        if a.metrics.macroF1 != b.metrics.macroF1 { return a.metrics.macroF1 < b.metrics.macroF1 }
        return a.order > b.order
    }

    /// The result as a row of the training summary's candidates.
    func summary(chosen: Bool) -> TrainingSummary.Candidate {
        TrainingSummary.Candidate(algorithm: candidate.algorithm, settings: candidate.settings,
                                  accuracy: metrics.accuracy, macroF1: metrics.macroF1, seconds: seconds,
                                  chosen: chosen)
    }
}

/// A classifier's parts as training leaves them, which ``TextClassifier`` wraps.
struct TrainedClassifier {
    /// The labels, sorted.
    let labels: [String]
    let featurizer: Featurizer
    let model: ClassifierModel
    /// What training chose and why.
    let summary: TrainingSummary
    /// The model's metrics on all the training data.
    let trainingMetrics: ClassificationMetrics
    /// The chosen candidate's metrics on the validation data, before the refit.
    let validationMetrics: ClassificationMetrics?
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

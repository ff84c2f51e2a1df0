import Foundation

extension TextClassifier {
    /// Trains a classifier, as Create ML's `MLTextClassifier(trainingData:parameters:)` does.
    ///
    /// With ``TextClassifierParameters/Algorithm/automatic`` it tries several algorithms and
    /// settings on the validation data within the time budget, keeps the first in its order of
    /// preference whose validation accuracy is within one standard error of the best (the error
    /// of the difference, paired example by example), tries it
    /// again with a vocabulary of the features seen at least twice, keeps that if it scores
    /// better, and refits the one kept on all the data. The reason is in
    /// ``trainingSummary``; the validation figures of the chosen candidate are in
    /// ``validationMetrics``.
    ///
    /// - Parameters:
    ///   - trainingData: Labelled texts, with at least two labels.
    ///   - parameters: How to train.
    /// - Throws: ``MLKitError`` with code `invalidDataset` for an empty dataset or a single
    ///   label, or `invalidParameter` for a setting that cannot be used.
    public init(trainingData: TextDataset, parameters: TextClassifierParameters = TextClassifierParameters()) throws {
        let clock = ContinuousClock()
        let start = clock.now
        let data = try trainingData.validatedForTraining()
        let plan = try TrainingPlan(data: data, parameters: parameters)
        let (train, validation) = try plan.split()
        let candidates = plan.candidates(hasValidation: validation != nil)

        var results: [CandidateResult] = []
        var counted = CountedFeatures()
        var reason: String
        if let validation, candidates.count > 1 || parameters.algorithm == .automatic {
            let automatic = parameters.algorithm == .automatic
            (results, counted) = try plan.evaluate(candidates, train: train, validation: validation,
                                                   budget: parameters.timeBudget) { results in
                automatic ? plan.prunedVariant(of: TrainingPlan.choose(results, planned: candidates.count).candidate) : nil
            }
            let best = TrainingPlan.choose(results, planned: candidates.count)
            reason = plan.explain(results, planned: candidates.count, chosen: best)
            results = [best] + results.filter { $0.candidate != best.candidate }
        } else if let validation {
            (results, counted) = try plan.evaluate(candidates, train: train, validation: validation, budget: .infinity)
            reason = "the algorithm asked for; validation accuracy \(String(format: "%.4f", results[0].metrics.accuracy))"
        } else {
            reason = "the algorithm asked for, with its default settings (no validation data)"
        }
        let chosen = results.first?.candidate ?? candidates[0]
        // Handed to the refit, which frees the model once it has started from it.
        let primal = results.isEmpty ? nil : results[0].primal.take()
        // Refit on all the data, keeping the probability calibration fitted on held-out data
        // when there was enough of it to trust.
        let everything = validation.map { train + $0 } ?? train
        let calibration = validation.flatMap { plan.isEnoughForCalibration($0) ? results.first?.calibration : nil }
        // The chosen SVM's dual variables on the training split, which comes first in `everything`,
        // or the chosen maximum entropy model's weights.
        let final = try plan.fit(chosen, on: everything, calibration: calibration, counted: consume counted,
                                 start: results.first?.dual, primal: consume primal)
        let seconds = (clock.now - start).seconds
        let summary = TrainingSummary(algorithm: chosen.algorithm, settings: chosen.settings, reason: reason,
                                      examples: everything.count, seconds: seconds, date: Date())
        final.model.adviseLargePages()
        self = TextClassifier(labels: plan.labels, featurizer: final.featurizer, model: final.model,
                              metadata: ModelMetadata(), trainingSummary: summary, trainingMetrics: final.metrics,
                              validationMetrics: results.first?.metrics, formatVersion: nil)
    }

    /// Metrics of this classifier on labelled examples.
    /// - Parameter dataset: Labelled texts; labels the classifier does not know count as errors.
    /// - Returns: Accuracy, per-class metrics, the confusion matrix, top-k accuracy and the
    ///   log-loss.
    public func evaluation(on dataset: TextDataset) -> ClassificationMetrics {
        let extra = dataset.labels.filter { !labels.contains($0) }
        let allLabels = labels + extra
        let index = Dictionary(uniqueKeysWithValues: allLabels.enumerated().map { ($1, $0) })
        let examples = dataset.examples
        let actual = examples.map { index[$0.label]! }
        let known = labels.count, model = storage.model
        // One pass over the texts: each one's raw scores are mapped twice, to the values that
        // predictedLabel(for:) and predictions(for:) rank by, so that the metrics count exactly
        // the labels those give, and to probabilities for the log-loss.
        let scored = mapClassValues(.scores, count: examples.count, threads: 0, text: { examples[$0].text }) { row, scores in
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
        switch algorithm {
        case .naiveBayes, .complementNaiveBayes: settings["alpha"] = "\(strength)"
        case .maxEnt, .linearSVM: settings["C"] = "\(strength)"
        case .embedding: settings["learningRate"] = "\(strength)"
        case .automatic: break
        }
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
    /// An SVM's dual variables on the training split, where the refit starts from.
    let dual: [Float]?
    /// A maximum entropy model trained on the training split, and the vocabulary of its columns,
    /// where the refit starts from; taken out (`nil`) when the refit starts.
    var primal: (model: LinearModel, vocabulary: Vocabulary)?

    /// The candidate's place in the plan's list: the preference between equals.
    let order: Int

    /// Orders by accuracy, then macro-F1, then the plan's order of preference, so that the choice
    /// depends only on the data, the seed and the thread count, never on timing.
    static func isWorse(_ a: CandidateResult, than b: CandidateResult) -> Bool {
        if a.metrics.accuracy != b.metrics.accuracy { return a.metrics.accuracy < b.metrics.accuracy }
        if a.metrics.macroF1 != b.metrics.macroF1 { return a.metrics.macroF1 < b.metrics.macroF1 }
        return a.order > b.order
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

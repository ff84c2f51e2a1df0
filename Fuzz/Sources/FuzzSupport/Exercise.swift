import Foundation
public import MLKit

/// What a harness does with a model it managed to load: everything a user can ask of it. A
/// model the loader accepts must answer every question without trapping, and must survive
/// being written and read again.
public enum Exercise {
    /// Texts to predict on: plain words, punctuation and word parts, scripts without spaces and
    /// emoji, and an empty text.
    public static let texts = ["Whisk the eggs, then let it rain on the striker!!! :)", "北京 dumplings, don't stir 🏆 3.14", ""]

    /// Asks `classifier` for labels, rankings and probabilities, reads the metrics its file
    /// holds as `mlkit info` and `evaluate` do, then writes it and reads it back.
    /// - Precondition: the model written by this mlkit loads again with the same labels.
    public static func classifier(_ classifier: TextClassifier) {
        for text in texts {
            _ = classifier.predictedLabel(for: text)
            check(classifier.rankedLabels(for: text, maximumCount: 3).map(\.probability))
            check(Array(classifier.predictedLabelHypotheses(for: text, maximumCount: 2).values))
        }
        _ = classifier.predictions(for: texts, threads: 1)
        _ = classifier.rankedLabels(for: texts, maximumCount: 2, threads: 1)
        check(Array(classifier.predictedLabelHypotheses(forWordCounts: ["rain": 2, "goal": 1, "": 3]).values))
        let examples = [LabeledText(text: texts[0], label: classifier.labels[0]), LabeledText(text: texts[1], label: "a label it lacks")]
        metrics(classifier.evaluation(on: TextDataset(examples)))
        classifier.trainingMetrics.map(metrics)
        classifier.validationMetrics.map(metrics)
        _ = classifier.featurizerConfiguration
        _ = classifier.vocabularySize
        if let summary = classifier.trainingSummary {
            _ = String(format: "%d examples, %.2f s", summary.examples, summary.seconds)
        }

        let written = classifier.modelFileData()
        do {
            let again = try TextClassifier(modelFileData: written, source: "written")
            precondition(again.labels == classifier.labels, "labels changed when the model was written and read back")
        } catch {
            preconditionFailure("a loaded model, written again, does not load: \(error)")
        }
    }

    /// Asks `tagger` for the labels, hypotheses and tags of tokens and texts, evaluates it on a
    /// sentence, then writes it and reads it back.
    /// - Precondition: the model written by this mlkit loads again with the same labels.
    public static func tagger(_ tagger: WordTagger) {
        let sentences = [["Apple", "ships", "iOS", "14"], ["北", "京"], []]
        for tokens in sentences {
            precondition(tagger.predictedLabels(for: tokens).count == tokens.count, "one label per token")
            for hypotheses in tagger.predictedLabelHypotheses(for: tokens, maximumCount: 2) { check(Array(hypotheses.values)) }
        }
        _ = tagger.predictedLabels(for: sentences, threads: 1)
        for text in texts { _ = tagger.tags(for: text) }
        _ = tagger.tags(for: texts, threads: 1)
        _ = tagger.evaluation(on: [TaggedTokens(tokens: sentences[0], labels: sentences[0].map { _ in tagger.labels[0] })], threads: 1)
        _ = (tagger.trainingSummary, tagger.trainingMetrics, tagger.validationMetrics, tagger.attributeCount, tagger.weightCount)

        let written = tagger.modelFileData()
        do {
            let again = try WordTagger(modelFileData: written, source: "written")
            precondition(again.labels == tagger.labels, "labels changed when the tagger was written and read back")
        } catch {
            preconditionFailure("a loaded tagger, written again, does not load: \(error)")
        }
    }

    /// Everything a user reads of metrics: the report, the summary figures and the classes.
    public static func metrics(_ metrics: ClassificationMetrics) {
        _ = metrics.report
        _ = (metrics.count, metrics.accuracy, metrics.classificationError, metrics.macroF1, metrics.weightedF1)
        _ = metrics.perClass
        _ = metrics.topKAccuracy.first
    }

    /// Probabilities are numbers between 0 and 1, or NaN when the model's weights are not
    /// numbers; never outside.
    private static func check(_ probabilities: [Double]) {
        for probability in probabilities where !probability.isNaN {
            precondition(probability >= 0 && probability <= 1.000_001, "probability \(probability) out of [0, 1]")
        }
    }
}

import Foundation
import MLKit

extension EvaluateCommand {
    /// Measures a word tagger on DATA's tagged sentences.
    func evaluate(_ tagger: WordTagger) throws {
        let rows = try DatasetReader().readTaggedTokens(contentsOf: URL(fileURLWithPath: data), tokensKey: tokenColumn,
                                                        labelsKey: labelColumn ?? "labels")
        let metrics = tagger.evaluation(on: rows)
        if json {
            print(try jsonText(TaggingMetricsJSON(metrics)))
        } else {
            print(metrics.report, terminator: "")
        }
    }
}

/// The JSON form of a tagger's metrics, with the derived figures spelled out.
struct TaggingMetricsJSON: Encodable {
    struct Entities: Encodable {
        let precision: Double
        let recall: Double
        let f1: Double
        let actual: Int
        let predicted: Int
        let correct: Int

        init(_ counts: TaggingMetrics.EntityCounts) {
            precision = counts.precision
            recall = counts.recall
            f1 = counts.f1
            actual = counts.actual
            predicted = counts.predicted
            correct = counts.correct
        }
    }

    let sentences: Int
    let tokens: Int
    let tokenAccuracy: Double
    /// All entities (or words) together, then by type; absent when the labels mark none.
    let entities: Entities?
    let entityTypes: [String: Entities]?
    let words: Entities?
    let perLabel: [TaggingMetrics.LabelMetrics]
    let labels: [String]
    let confusion: [[Int]]

    init(_ metrics: TaggingMetrics) {
        sentences = metrics.sentenceCount
        tokens = metrics.tokenCount
        tokenAccuracy = metrics.tokenAccuracy
        let all = metrics.hasEntities ? Entities(metrics.allEntities) : nil
        entities = metrics.segmentsWords ? nil : all
        words = metrics.segmentsWords ? all : nil
        entityTypes = metrics.hasEntities && !metrics.segmentsWords
            ? Dictionary(uniqueKeysWithValues: metrics.entities.map { ($0.type, Entities($0)) }) : nil
        perLabel = metrics.perLabel
        labels = metrics.labels
        confusion = metrics.confusion
    }
}

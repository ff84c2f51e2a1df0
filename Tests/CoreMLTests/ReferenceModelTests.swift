import Foundation
import MLKitCoreML
import TestSupport
import Testing

@Suite("The reference chapter's SentimentPolarity model", .onOwnThreads)
struct ReferenceModelTests {
    @Test("Acceptance: the .mlmodel labels the chapter's two texts with the probabilities its weights give",
          .needsSeedArtifacts(Reference.model))
    func acceptance() throws {
        let model = try CoreMLModel(contentsOf: SeedArtifacts.url(Reference.model))
        #expect(model.isTextClassifier)
        #expect(model.labels == ["Neg", "Pos"])
        for example in [Reference.loveRainbows, Reference.sadCloudy] {
            #expect(try model.predictedLabel(for: example.text) == example.label)
            let hypotheses = try model.predictedLabelHypotheses(for: example.text, maximumCount: 2)
            let probability = try #require(hypotheses[example.label])
            #expect(abs(probability - example.probability) < 1e-12, "\(example.text): \(probability)")
            #expect(abs(hypotheses.values.reduce(0, +) - 1) < 1e-15)
            // The sparse text path and the general evaluation of the stages give the same bits.
            #expect(try model.prediction(from: try model.input(for: example.text))["classProbability"] == .stringDictionary(hypotheses))
        }
    }
}

import Foundation
import TestSupport
import Testing
@testable import MLKit

/// A model read from a file uses the file's mapped bytes in place for its weights; it must
/// predict exactly as the same weights copied into arrays of their own, and write the same
/// sections back.
@Suite("Models use their file's weights in place and predict as with copied weights", .onOwnThreads)
struct ModelLoadingTests {
    /// The classifier with the same featurizer and the same weights, copied into arrays of its
    /// own, and a matrix stored as rows expanded into the whole matrix.
    private static func copied(_ classifier: TextClassifier) -> TextClassifier {
        let model: ClassifierModel
        switch classifier.model {
        case .linear(let linear):
            model = .linear(LinearModel(features: linear.features, classes: linear.classes, weights: linear.denseWeights,
                                        bias: linear.bias, probability: linear.probability))
        case .embedding(let embedding):
            model = .embedding(EmbeddingModel(dimension: embedding.dimension, classes: embedding.classes, buckets: embedding.buckets,
                                              featureIDs: embedding.featureIDs, embeddings: embedding.embeddings.array,
                                              output: embedding.output, bias: embedding.bias))
        }
        return TextClassifier(labels: classifier.labels, featurizer: classifier.featurizer, model: model, metadata: classifier.metadata,
                              trainingSummary: nil, trainingMetrics: nil, validationMetrics: nil, formatVersion: nil)
    }

    /// The bits of every label's probability for each of the golden texts, in label order.
    private static func probabilityBits(_ classifier: TextClassifier) -> [[UInt64]] {
        GoldenModels.probabilities(of: classifier).map { $0.map(\.bitPattern) }
    }

    /// Whether the model's largest array is the file's bytes used in place.
    private static func weightsInPlace(_ classifier: TextClassifier) -> Bool {
        switch classifier.model {
        case .linear(let linear): return linear.weights.isInPlace
        case .embedding(let embedding): return embedding.embeddings.isInPlace
        }
    }

    /// The bytes of every section of a model file, by name.
    private static func sections(_ data: Data) throws -> [String: Data] {
        let container = try ModelContainer.decode(data, file: nil, knownSections: ModelFileSection.all)
        return container.sections.mapValues { Data($0.bytes) }
    }

    @Test("Every golden file keeps its weights in place, predicts bit for bit as with copied weights, and writes the same sections",
          arguments: GoldenModels.files)
    func goldenFiles(version: Int, kind: String) throws {
        let url = GoldenModels.folder.appendingPathComponent(GoldenModels.name(version: version, kind: kind))
        let classifier = try TextClassifier(contentsOf: url)
        #expect(Self.weightsInPlace(classifier))
        if case .linear(let linear) = classifier.model, kind == "hashed" {
            // Stored rows are found through the table of their positions, not expanded.
            #expect(linear.storedRows != nil && linear.rowPositions?.count == linear.features)
            #expect(linear.weights.count == (linear.storedRows?.count ?? 0) * linear.classes)
        }
        let reference = Self.copied(classifier)
        #expect(Self.probabilityBits(classifier) == Self.probabilityBits(reference))
        #expect(GoldenModels.texts.map { classifier.predictedLabel(for: $0) } == GoldenModels.texts.map { reference.predictedLabel(for: $0) })
        #expect(try Self.sections(classifier.modelFileData()) == Self.sections(Data(contentsOf: url)))
    }

    @Test("Bytes not aligned for floats are copied, and predict the same")
    func unalignedBytes() throws {
        let url = GoldenModels.folder.appendingPathComponent(GoldenModels.name(version: 3, kind: "svm"))
        let file = try Data(contentsOf: url)
        // One byte ahead, so that every section starts one byte past a multiple of 64.
        let shifted = (Data([0]) + file).dropFirst()
        let unaligned = try TextClassifier(modelFileData: shifted, source: "shifted")
        #expect(!Self.weightsInPlace(unaligned))
        let mapped = try TextClassifier(contentsOf: url)
        #expect(Self.probabilityBits(unaligned) == Self.probabilityBits(mapped))
    }

    @Test("A loaded model keeps predicting after its file is replaced, as mlkit writes files")
    func fileReplacedByRename() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-loading-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("model.mlkit")
        let first = try TextClassifier(contentsOf: GoldenModels.folder.appendingPathComponent(GoldenModels.name(version: 3, kind: "maxent")))
        let other = try TextClassifier(contentsOf: GoldenModels.folder.appendingPathComponent(GoldenModels.name(version: 3, kind: "nb")))
        try first.write(to: target)
        let loaded = try TextClassifier(contentsOf: target)
        let before = Self.probabilityBits(loaded)
        #expect(before == Self.probabilityBits(first))
        try other.write(to: target)
        #expect(Self.probabilityBits(loaded) == before)
        #expect(try Self.probabilityBits(TextClassifier(contentsOf: target)) == Self.probabilityBits(other))
    }
}

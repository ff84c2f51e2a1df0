import Foundation
import TestSupport
import Testing
@testable import MLKit

/// The golden model files in `Fixtures/models/`: one per released format version (1, 2, 3) and
/// model kind, trained on `Fixtures/datasets/topics.json`, with the probabilities each gave on
/// fixed texts when it was written (`expected-probabilities.json`).
///
/// The files are written by ``GoldenModelFileTests/regenerate()``, which runs only when
/// `MLKIT_WRITE_GOLDEN_MODELS=1` is set. Versions 1 and 2 are the same models written in those
/// versions' layout: the header without the featurizer fields that came later (`wordParts` in
/// version 2, `punctuation` in version 3), which a reader takes as `false`.
enum GoldenModels {
    static let folder = Reference.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models")
    static let dataset = Reference.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/datasets/topics.json")
    static let expectedFile = folder.appendingPathComponent("expected-probabilities.json")

    /// Every released format version.
    static let versions = [1, 2, 3]
    /// The model kinds: the four linear trainers over a vocabulary, the embedding classifier
    /// (hashed buckets, compact rows), and a linear model over hashed buckets that stores only
    /// its non-zero weight rows.
    static let kinds = ["nb", "cnb", "maxent", "svm", "embedding", "hashed"]
    /// Every (version, kind) pair, as test arguments.
    static let files = versions.flatMap { version in kinds.map { (version, $0) } }

    /// The texts whose probabilities are recorded: one per topic, one on none of them, an empty
    /// one, and one whose word parts and punctuation only versions 2 and 3 count.
    static let texts = [
        "Fold the flour into the whisked eggs", "Snow and strong winds tonight", "The striker scored in extra time",
        "A quiet afternoon at the library", "", "Don't stir-fry the cast-iron pan!!! :)",
    ]

    static func name(version: Int, kind: String) -> String { "v\(version)-topics-\(kind).mlkit" }

    /// The model of `kind`, trained on the topics with a fixed seed on one thread.
    static func train(_ kind: String) throws -> TextClassifier {
        let data = try DatasetReader().read(contentsOf: dataset)
        switch kind {
        case "hashed":
            return try hashedModel(data)
        case "embedding":
            return try embeddingModel(data)
        default:
            let algorithm = try #require(TextClassifierParameters.Algorithm(rawValue: kind))
            return try TextClassifier(trainingData: data, parameters: .init(algorithm: algorithm, seed: 1, threads: 1))
        }
    }

    /// Maximum entropy over 2^12 hashed buckets: most rows are zero, so the file stores the
    /// others and their indices (`linear.rows`). The trainers of `TextClassifier` use a
    /// vocabulary for linear models, so this one is built from the parts.
    private static func hashedModel(_ data: TextDataset) throws -> TextClassifier {
        let configuration = FeaturizerConfiguration(maxWordNGram: 2, wordParts: true, punctuation: true, indexing: .hashed(bits: 12),
                                                    sublinearTF: true, l2Normalize: true)
        let featurizer = try Featurizer(configuration: configuration)
        let problem = problem(data, featurizer)
        let model = try LogisticRegression(c: 10, threads: 1).fit(problem, start: nil).model
        return TextClassifier(labels: data.labels, featurizer: featurizer, model: .linear(model), metadata: ModelMetadata(),
                              trainingSummary: nil, trainingMetrics: nil, validationMetrics: nil, formatVersion: nil)
    }

    /// The embedding classifier with 8 dimensions instead of 64, so that the file stays small.
    private static func embeddingModel(_ data: TextDataset) throws -> TextClassifier {
        let featurizer = try Featurizer(configuration: FeaturizerConfiguration(maxWordNGram: 2, indexing: .hashed(bits: 20)))
        let model = try EmbeddingTrainer.train(problem(data, featurizer), options: .init(dimension: 8, epochs: 20, seed: 1, threads: 1))
        return TextClassifier(labels: data.labels, featurizer: featurizer, model: .embedding(model), metadata: ModelMetadata(),
                              trainingSummary: nil, trainingMetrics: nil, validationMetrics: nil, formatVersion: nil)
    }

    private static func problem(_ data: TextDataset, _ featurizer: Featurizer) -> TrainingProblem {
        let classes = Dictionary(uniqueKeysWithValues: data.labels.enumerated().map { ($1, Int32($0)) })
        return TrainingProblem(matrix: featurizer.matrix(for: data.examples.map(\.text), threads: 1),
                               labels: data.examples.map { classes[$0.label]! }, classCount: data.labels.count)
    }

    /// The model file of `classifier` in format version `version`: the current writer's layout,
    /// with the header fields that `version` did not have taken out of the featurizer.
    static func file(of classifier: TextClassifier, version: Int, kind: String) throws -> Data {
        let metadata = ModelMetadata(author: "mlkit tests", shortDescription: "golden \(kind) model, format version \(version)",
                                     license: "MIT", version: "golden-\(version)")
        let container = try ModelContainer.decode(classifier.modelFileData(metadata: metadata), file: nil,
                                                  knownSections: ModelFileSection.all)
        var header = try #require(try JSONSerialization.jsonObject(with: container.header) as? [String: Any])
        var featurizer = try #require(header["featurizer"] as? [String: Any])
        if version < 3 { featurizer["punctuation"] = nil }
        if version < 2 { featurizer["wordParts"] = nil }
        header["featurizer"] = featurizer
        // A fixed date, so that writing the files again changes no byte.
        header["created"] = "2026-11-26T00:00:00Z"
        if var training = header["training"] as? [String: Any] {
            training["date"] = "2026-11-26T00:00:00Z"
            training["seconds"] = 0
            header["training"] = training
        }
        let headerData = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        let sections = container.sections.values.sorted { $0.name < $1.name }.map { section in
            ModelContainer.OutputSection(name: section.name, type: section.type, count: section.bytes.count) { emit in
                try section.bytes.withUnsafeBytes { try emit($0) }
            }
        }
        return ModelContainer.encode(header: headerData, sections: sections, version: UInt32(version))
    }

    /// Each label's probability for each of ``texts``, in label order.
    static func probabilities(of classifier: TextClassifier) -> [[Double]] {
        texts.map { text in
            let hypotheses = classifier.predictedLabelHypotheses(for: text, maximumCount: classifier.labels.count)
            return classifier.labels.map { hypotheses[$0] ?? -1 }
        }
    }

    /// The recorded probabilities, by file name.
    static func expected() throws -> [String: [[Double]]] {
        try JSONDecoder().decode([String: [[Double]]].self, from: Data(contentsOf: expectedFile))
    }
}

@Suite("Golden model files keep loading and predicting", .onOwnThreads)
struct GoldenModelFileTests {
    @Test("Every format version and model kind loads and gives its recorded probabilities within 1e-6",
          arguments: GoldenModels.files)
    func recordedProbabilities(version: Int, kind: String) throws {
        let name = GoldenModels.name(version: version, kind: kind)
        let classifier = try TextClassifier(contentsOf: GoldenModels.folder.appendingPathComponent(name))
        #expect(classifier.formatVersion == version)
        // Word parts came with version 2 and punctuation with version 3: older files featurize
        // without them.
        let linearOverVocabulary = !["embedding", "hashed"].contains(kind)
        #expect(classifier.featurizerConfiguration.wordParts == (version >= 2 && kind != "embedding"))
        #expect(classifier.featurizerConfiguration.punctuation == (version >= 3 && kind != "embedding"))
        #expect((classifier.vocabularySize > 0) == linearOverVocabulary)
        #expect(classifier.labels == ["kitchen", "sport", "weather"])
        #expect(classifier.metadata.author == "mlkit tests")
        #expect(classifier.metadata.version == "golden-\(version)")

        let expected = try #require(try GoldenModels.expected()[name], "no recorded probabilities for \(name)")
        let actual = GoldenModels.probabilities(of: classifier)
        #expect(actual.count == expected.count)
        for (text, (row, recorded)) in zip(GoldenModels.texts, zip(actual, expected)) {
            #expect(row.count == recorded.count)
            for (label, (probability, value)) in zip(classifier.labels, zip(row, recorded)) {
                #expect(abs(probability - value) <= 1e-6, "\(name), \"\(text)\", \(label): \(probability), recorded \(value)")
            }
        }
        // The first three texts are about the topics the models learned.
        #expect(GoldenModels.texts.prefix(3).map { classifier.predictedLabel(for: $0) } == ["kitchen", "weather", "sport"])
    }

    @Test("The golden files differ only in their layout: the same sections in every version",
          arguments: GoldenModels.kinds)
    func sameSectionsInEveryVersion(kind: String) throws {
        let containers = try GoldenModels.versions.map { version in
            let url = GoldenModels.folder.appendingPathComponent(GoldenModels.name(version: version, kind: kind))
            return try ModelContainer.decode(Data(contentsOf: url), file: url.path, knownSections: ModelFileSection.all)
        }
        for container in containers.dropFirst() {
            #expect(Set(container.sections.keys) == Set(containers[0].sections.keys))
            for (name, section) in containers[0].sections { #expect(container.sections[name]?.bytes == section.bytes, "\(kind): \(name)") }
        }
    }

    @Test("Regenerates the golden files and their probabilities (MLKIT_WRITE_GOLDEN_MODELS=1)",
          .enabled(if: ProcessInfo.processInfo.environment["MLKIT_WRITE_GOLDEN_MODELS"] == "1",
                   "set MLKIT_WRITE_GOLDEN_MODELS=1 to write the golden model files again"))
    func regenerate() throws {
        var expected: [String: [[Double]]] = [:]
        for kind in GoldenModels.kinds {
            let classifier = try GoldenModels.train(kind)
            for version in GoldenModels.versions {
                let name = GoldenModels.name(version: version, kind: kind)
                let data = try GoldenModels.file(of: classifier, version: version, kind: kind)
                try data.write(to: GoldenModels.folder.appendingPathComponent(name))
                expected[name] = GoldenModels.probabilities(of: try TextClassifier(modelFileData: data, source: name))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try encoder.encode(expected).write(to: GoldenModels.expectedFile)
    }
}

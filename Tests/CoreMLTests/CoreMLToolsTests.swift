import Foundation
@testable import MLKit
import MLKitCoreML
import TestSupport
import Testing

/// The Python of `.venv-coreml`, a virtual environment with coremltools from PyPI, which
/// `.ci/run` creates.
enum CoreMLTools {
    static let python = ChildProcess.repositoryRoot.appendingPathComponent(".venv-coreml/bin/python")
    static let script = ChildProcess.repositoryRoot.appendingPathComponent("Tests/CoreMLTests/Scripts/check_coreml.py")

    static var isAvailable: Bool {
        guard FileManager.default.isExecutableFile(atPath: python.path),
              let result = try? ChildProcess.run(python, ["-c", "import coremltools"], deadline: 120) else { return false }
        return result.status == 0
    }
}

@Suite("coremltools reads what mlkit exports",
       .enabled(if: CoreMLTools.isAvailable,
                "skipped: needs coremltools in .venv-coreml (python3 -m venv .venv-coreml && .venv-coreml/bin/pip install coremltools; .ci/run makes it)"),
       .timeLimit(.minutes(10)), .onOwnThreads)
struct CoreMLToolsTests {
    @Test("Acceptance: coremltools loads every exported model, and its spec gives mlkit's probabilities")
    func everyExport() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var models: [(name: String, classifier: TextClassifier, labels: [String])] = []
        for algorithm in ExportTests.algorithms {
            for labels in [Corpus.allLabels, ["cooking", "weather"]] {
                let classifier = try TextClassifier(trainingData: Corpus.training(labels: labels), parameters: .init(algorithm: algorithm))
                models.append(("\(algorithm.rawValue)-\(labels.count)", classifier, labels))
            }
        }
        models.append(("hashed-nb", try hashedNaiveBayes(Corpus.training()), Corpus.allLabels))
        models.append(("hashed-tfidf", try hashedNaiveBayes(Corpus.training(), weighting: .tfidf, sublinear: true, l2: true),
                       Corpus.allLabels))
        var jobs: [[String: Any]] = []
        for model in models {
            let url = folder.appendingPathComponent("\(model.name).mlmodel")
            try model.classifier.writeCoreMLModel(to: url, metadata: ModelMetadata(author: "mlkit tests", license: "MIT"))
            let exported = try CoreMLModel(contentsOf: url)
            var inputs: [Any] = []
            var expected: [[String: Double]] = []
            for text in Corpus.test(labels: model.labels).examples.prefix(40).map(\.text) {
                switch try exported.input(for: text)["input"] {
                case .stringDictionary(let dictionary): inputs.append(dictionary)
                case .int64Dictionary(let dictionary):
                    inputs.append(Dictionary(uniqueKeysWithValues: dictionary.map { (String($0.key), $0.value) }))
                default: Issue.record("unexpected input")
                }
                expected.append(try exported.predictedLabelHypotheses(for: text, maximumCount: model.labels.count))
            }
            jobs.append(["path": url.path, "inputs": inputs, "expected": expected])
        }
        let job = folder.appendingPathComponent("job.json")
        try JSONSerialization.data(withJSONObject: jobs).write(to: job)
        let result = try ChildProcess.run(CoreMLTools.python, [CoreMLTools.script.path, job.path], deadline: 300)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").filter { $0.contains(": loaded,") }.count == models.count, "\(result.stdout)")
    }

    @Test("Acceptance: coremltools' parse of the reference model, evaluated with numpy, gives the figures mlkit is held to",
          .needsSeedArtifacts(Reference.model))
    func referenceFigures() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let job: [[String: Any]] = [[
            "path": SeedArtifacts.path(Reference.model),
            "inputs": [["i": 1.0, "love": 1.0, "rainbows": 1.0], ["i": 1.0, "am": 1.0, "sad": 1.0, "on": 1.0, "cloudy": 1.0, "days": 1.0]],
            "expected": [[Reference.loveRainbows.label: Reference.loveRainbows.probability],
                         [Reference.sadCloudy.label: Reference.sadCloudy.probability]],
            "tolerance": 1e-12,
        ]]
        let url = folder.appendingPathComponent("job.json")
        try JSONSerialization.data(withJSONObject: job).write(to: url)
        let result = try ChildProcess.run(CoreMLTools.python, [CoreMLTools.script.path, url.path], deadline: 300)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }
}

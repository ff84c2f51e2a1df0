// Inputs for the prediction, model-load and training benchmarks: the repository's bundled model,
// short documents from the English corpus, and the VADER training split from datasets/.
import Foundation
import MLKit

enum Fixtures {
    /// The repository root: this file is Benchmarks/Benchmarks/MLKitBenchmarks/Fixtures.swift.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Where the training benchmarks read their data, relative to the repository root.
    static let trainingPath = "datasets/out/vader-sentiment.train.json"

    /// `count` sentence-sized documents: the English corpus's lines of 20 to 200 bytes, in order,
    /// repeated if there are fewer.
    static func predictionDocuments(count: Int) -> [String] {
        let lines = Corpus.english.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { (20...200).contains($0.utf8.count) }
        precondition(!lines.isEmpty, "no sentence-sized lines in the English corpus")
        return (0..<count).map { lines[$0 % lines.count] }
    }

    /// The VADER sentiment training split (7,472 sentences, 2 labels), or `nil` if
    /// `datasets/build_vader.py` has not been run.
    static func trainingData() -> TextDataset? {
        let url = repository.appendingPathComponent(trainingPath)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try? DatasetReader().read(contentsOf: url)
    }
}

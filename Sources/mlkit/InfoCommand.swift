import ArgumentParser
import Foundation
import MLKit

/// `mlkit info`: what a model file holds.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a model's metadata, labels, features, sizes and format version."
    )

    @Argument(help: "The model file.")
    var model: String

    func run() throws {
        try reportingFailures {
            let url = URL(fileURLWithPath: model)
            let classifier = try TextClassifier(contentsOf: url)
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            let configuration = classifier.featurizerConfiguration
            var lines = [
                "file                \(model) (\(size) bytes)",
                "format version      \(classifier.formatVersion.map(String.init) ?? "-")",
                "labels              \(classifier.labels.count): \(classifier.labels.joined(separator: ", "))",
            ]
            if let summary = classifier.trainingSummary {
                let settings = summary.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                lines.append("algorithm           \(summary.algorithm.rawValue) (\(settings))")
                lines.append("trained             \(summary.examples) examples, \(String(format: "%.2f", summary.seconds)) s")
            }
            let indexing: String
            switch configuration.indexing {
            case .hashed(let bits): indexing = "hashed, 2^\(bits) buckets"
            case .vocabulary: indexing = "vocabulary of \(classifier.vocabularySize) features"
            }
            lines.append("features            words 1-\(configuration.maxWordNGram)-grams, \(indexing), \(configuration.weighting.rawValue)")
            lines.append("tokenizer           \(configuration.tokenizer.segmentation.rawValue), lowercase \(configuration.tokenizer.normalization.lowercase)")
            let metadata = classifier.metadata
            for (name, value) in [("author", metadata.author), ("license", metadata.license),
                                  ("version", metadata.version), ("description", metadata.shortDescription)] {
                if let value { lines.append(name.padding(toLength: 20, withPad: " ", startingAt: 0) + value) }
            }
            for (key, value) in metadata.additional.sorted(by: { $0.key < $1.key }) {
                lines.append(key.padding(toLength: 20, withPad: " ", startingAt: 0) + value)
            }
            if let validation = classifier.validationMetrics {
                lines.append(String(format: "validation          accuracy %.4f, macro-F1 %.4f on %d examples",
                                    validation.accuracy, validation.macroF1, validation.count))
            }
            print(lines.joined(separator: "\n"))
        }
    }
}

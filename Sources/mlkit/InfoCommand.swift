import ArgumentParser
import Foundation
import MLKit
import MLKitEncryption

/// `mlkit info`: what a model file holds.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a model's metadata, labels, features, sizes and format version."
    )

    @Argument(help: "The model file: mlkit's, or a Core ML .mlmodel or .mlarchive.")
    var model: String

    @Option(help: "The key file for an encrypted model; without it, only the clear header is shown.")
    var key: String?

    func run() throws {
        try reportingFailures {
            if ModelFileKind.isCoreML(URL(fileURLWithPath: model)) { return try describeCoreML() }
            let data = try TextClassifier.mappedModelFile(at: URL(fileURLWithPath: model))
            var lines = ["file                \(model) (\(data.count) bytes)"]
            let loaded: AnyModel
            if EncryptedModelHeader.isEncrypted(data) {
                let header = try EncryptedModelHeader(parsing: data, source: model)
                lines.append("encryption          format version \(header.formatVersion), \(header.cipher.rawValue), "
                             + "\(header.chunkCount) chunk\(header.chunkCount == 1 ? "" : "s") of up to \(header.chunkSize) bytes")
                lines.append("key identifier      \(header.keyIdentifier)")
                guard let key else {
                    lines.append("model               encrypted, \(header.plaintextLength) bytes; pass --key FILE to read it")
                    print(lines.joined(separator: "\n"))
                    return
                }
                loaded = try AnyModel(encryptedModelData: data, key: try readKey(path: key), source: model)
            } else {
                loaded = try AnyModel(modelFileData: data, source: model)
            }
            switch loaded {
            case .textClassifier(let classifier): print((lines + describe(classifier)).joined(separator: "\n"))
            case .wordTagger(let tagger): print((lines + describe(tagger)).joined(separator: "\n"))
            }
        }
    }

    /// The lines that describe a loaded model.
    private func describe(_ classifier: TextClassifier) -> [String] {
        let configuration = classifier.featurizerConfiguration
        var lines = [
            "kind                text classifier",
            "format version      \(classifier.formatVersion.map(String.init) ?? "-")",
            "labels              \(classifier.labels.count): \(classifier.labels.joined(separator: ", "))",
        ]
        if let summary = classifier.trainingSummary {
            let settings = summary.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            lines.append("algorithm           \(summary.algorithm.rawValue) (\(settings))")
            lines.append("trained             \(summary.examples) examples, \(String(format: "%.2f", summary.seconds)) s")
            lines.append("chosen because      \(summary.reason)")
            if let candidates = summary.candidates {
                lines += ["candidates          tried on the validation data; * marks the one chosen"]
                    + candidateTable(candidates)
            }
        }
        let indexing: String
        switch configuration.indexing {
        case .hashed(let bits): indexing = "hashed, 2^\(bits) buckets"
        case .vocabulary(let pruning):
            indexing = "vocabulary of \(classifier.vocabularySize) features"
                + (pruning.minCount > 1 ? " (each seen at least \(pruning.minCount) times)" : "")
        }
        var units = ["words 1-\(configuration.maxWordNGram)-grams"]
        if configuration.wordParts { units.append("word parts") }
        if configuration.punctuation { units.append("punctuation") }
        if let lengths = configuration.characterNGrams { units.append("characters \(lengths.lowerBound)-\(lengths.upperBound)-grams") }
        lines.append("features            \(units.joined(separator: ", ")); \(indexing), \(configuration.weighting.rawValue)")
        lines.append("tokenizer           \(configuration.tokenizer.segmentation.rawValue), lowercase \(configuration.tokenizer.normalization.lowercase)")
        lines += describe(classifier.metadata)
        if let validation = classifier.validationMetrics {
            lines.append(String(format: "validation          accuracy %.4f, macro-F1 %.4f on %d examples",
                                validation.accuracy, validation.macroF1, validation.count))
        }
        return lines
    }

    /// The lines of a model's metadata.
    func describe(_ metadata: ModelMetadata) -> [String] {
        var lines: [String] = []
        for (name, value) in [("author", metadata.author), ("license", metadata.license),
                              ("version", metadata.version), ("description", metadata.shortDescription)] {
            if let value { lines.append(name.padding(toLength: 20, withPad: " ", startingAt: 0) + value) }
        }
        for (key, value) in metadata.additional.sorted(by: { $0.key < $1.key }) {
            lines.append(key.padding(toLength: 20, withPad: " ", startingAt: 0) + value)
        }
        return lines
    }
}

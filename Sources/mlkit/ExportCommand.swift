import ArgumentParser
import Foundation
import MLKit
import MLKitCoreML

/// `mlkit export`: an mlkit model as a Core ML model, for apps on Apple's systems.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write an mlkit model as a Core ML model (.mlmodel).",
        discussion: """
            Writes a pipelineClassifier (specification version 1): dictVectorizer, featureVectorizer, \
            a scaler for TF-IDF, a normalizer for L2, then a glmClassifier, with the input \
            input: [String: Double] (the text's feature keys with their term frequencies; \
            [Int64: Double] buckets for a hashed model) and the outputs classLabel and \
            classProbability. The featurizer's configuration goes into the metadata as \
            mlkit.featurizer. The embedding classifier cannot be exported. See docs/coreml.md.
            """
    )

    @Argument(help: "The mlkit model file.")
    var model: String

    @Option(name: .shortAndLong, help: "The Core ML model to write (default: MODEL with .mlmodel).")
    var output: String?

    @Option(help: "The key file for an encrypted mlkit model.")
    var key: String?

    @Option(help: "The author to store instead of the model's.")
    var author: String?

    @Option(help: "The licence to store instead of the model's.")
    var license: String?

    @Option(name: .customLong("version"), help: "The version string to store instead of the model's.")
    var modelVersion: String?

    @Option(help: "The one-line description to store instead of the model's.")
    var description: String?

    func run() throws {
        try reportingFailures {
            let source = URL(fileURLWithPath: model)
            let classifier = try loadClassifier(at: source, keyPath: key)
            var metadata = classifier.metadata
            if let author { metadata.author = author }
            if let license { metadata.license = license }
            if let modelVersion { metadata.version = modelVersion }
            if let description { metadata.shortDescription = description }
            let destination = URL(fileURLWithPath: output ?? source.deletingPathExtension().appendingPathExtension("mlmodel").path)
            do {
                try classifier.writeCoreMLModel(to: destination, metadata: metadata)
            } catch let error as CoreMLError where error.file == nil {
                throw CoreMLError(error.code, error.reason, file: model)
            }
            let written = try CoreMLModel(contentsOf: destination)
            let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.intValue ?? 0
            let stages = written.info.stages.filter { !$0.path.isEmpty }.map(\.type).joined(separator: " → ")
            let input = written.info.inputs[0]
            print("""
                exported \(model) to \(destination.path) (\(size) bytes)
                model     \(written.info.modelType), specification version \(written.info.specificationVersion): \(stages)
                labels    \(written.labels?.count ?? 0): \((written.labels ?? []).joined(separator: ", "))
                input     \(input.name): \(input.type) — \(input.shortDescription)
                outputs   \(written.info.outputs.map { "\($0.name): \($0.type)" }.joined(separator: ", "))
                """)
        }
    }
}

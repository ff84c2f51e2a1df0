import ArgumentParser
import Foundation
import MLKit

/// `mlkit predict`: labels texts with a model.
struct PredictCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "predict",
        abstract: "Label texts with a trained model.",
        discussion: """
            With no TEXT, reads one text per line from standard input and writes one prediction \
            per line as it goes. The model is --model, else the model --model-id of the \
            collection --collection on the collection server, else $MLKIT_MODEL, else the \
            bundled sentiment model.
            """
    )

    @Argument(help: "The texts to label, one prediction each.")
    var texts: [String] = []

    @Option(help: "The model file.")
    var model: String?

    @Option(help: "The key file for an encrypted model (.mlkitkey, or Apple's .mlmodelkey).")
    var key: String?

    @Option(help: "Show the K most likely labels with their probabilities.")
    var top: Int = 1

    @Flag(help: "Write JSON Lines: {\"label\": ..., \"probabilities\": {...}}.")
    var json = false

    @Option(help: "Take the model from this collection on the collection server (with --model-id).")
    var collection: String?

    @Option(name: .customLong("model-id"), help: "The model's identifier in --collection.")
    var modelID: String?

    @OptionGroup var server: ServerOptions

    @OptionGroup var device: DeviceContextOptions

    func validate() throws {
        if top < 1 { throw ValidationError("--top must be at least 1.") }
        try validateCollectionOptions()
    }

    func run() async throws {
        try await reportingFailures {
            let classifier = try await resolveClassifier()
            if texts.isEmpty {
                var output = ""
                while let line = readLine(strippingNewline: true) {
                    output += format(classifier, line)
                    if output.utf8.count > 1 << 16 {
                        FileHandle.standardOutput.write(Data(output.utf8))
                        output = ""
                    }
                }
                FileHandle.standardOutput.write(Data(output.utf8))
            } else {
                FileHandle.standardOutput.write(Data(texts.map { format(classifier, $0) }.joined().utf8))
            }
        }
    }

    private func format(_ classifier: TextClassifier, _ text: String) -> String {
        let ranked = classifier.rankedLabels(for: text, maximumCount: top)
        if json {
            let probabilities = ranked.map { "\(jsonString($0.label)):\(rounded($0.probability))" }.joined(separator: ",")
            return "{\"label\":\(jsonString(ranked.first?.label ?? "")),\"probabilities\":{\(probabilities)}}\n"
        }
        if top == 1 { return (ranked.first?.label ?? "") + "\n" }
        return ranked.map { "\($0.label)\t\(rounded($0.probability))" }.joined(separator: "\t") + "\n"
    }

    private func rounded(_ value: Double) -> String { String(format: "%.4f", value) }

    private func jsonString(_ value: String) -> String {
        let data = (try? JSONEncoder().encode(value)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

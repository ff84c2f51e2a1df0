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

    @Option(help: "The model file: mlkit's, or a Core ML .mlmodel or .mlarchive.")
    var model: String?

    @Option(help: "The key file for an encrypted model (.mlkitkey, or Apple's .mlmodelkey, also for an encrypted .mlarchive).")
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
            let classifier = try await resolveModel()
            if texts.isEmpty {
                // Each batch's answers are written as soon as they are ready.
                var lines = InputLines()
                while let batch = try lines.next() {
                    FileHandle.standardOutput.write(Data(try answers(classifier, batch).utf8))
                }
            } else {
                FileHandle.standardOutput.write(Data(try answers(classifier, texts).utf8))
            }
        }
    }

    /// One line per text, computed on all cores.
    private func answers(_ classifier: LoadedModel, _ texts: [String]) throws -> String {
        if top == 1 && !json { return try classifier.predictions(for: texts).map { $0 + "\n" }.joined() }
        // Each label as a JSON string, encoded once rather than once per line.
        let quoted = Dictionary(classifier.labels.map { ($0, jsonString($0)) }) { first, _ in first }
        return try classifier.rankedLabels(for: texts, maximumCount: top).map { format($0, quoted) }.joined()
    }

    private func format(_ ranked: [(label: String, probability: Double)], _ quoted: [String: String]) -> String {
        if json {
            let probabilities = ranked.map { "\(quoted[$0.label]!):\(rounded($0.probability))" }.joined(separator: ",")
            return "{\"label\":\(ranked.first.map { quoted[$0.label]! } ?? "\"\""),\"probabilities\":{\(probabilities)}}\n"
        }
        if top == 1 { return (ranked.first?.label ?? "") + "\n" }
        return ranked.map { "\($0.label)\t\(rounded($0.probability))" }.joined(separator: "\t") + "\n"
    }

    /// `value` with four decimals, as `String(format: "%.4f")` writes it, without Foundation's
    /// formatter, which is slow enough to cost more than the prediction.
    private func rounded(_ value: Double) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let count = withVaList([value]) { vsnprintf(buffer.baseAddress, buffer.count, "%.4f", $0) }
            let length = max(0, min(Int(count), buffer.count - 1))  // a probability needs a few bytes
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: length), as: UTF8.self)
        }
    }

    private func jsonString(_ value: String) -> String {
        let data = (try? JSONEncoder().encode(value)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

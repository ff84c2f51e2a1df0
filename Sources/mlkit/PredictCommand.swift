import ArgumentParser
import Foundation
import MLKit

/// `mlkit predict`: labels texts with a model.
struct PredictCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "predict",
        abstract: "Label texts with a trained model.",
        discussion: """
            With no TEXT, reads one text per line from --input or standard input and writes one \
            prediction per line, in order, to --output or standard output as it goes. The model \
            is --model, else the model --model-id of the collection --collection on the \
            collection server, else $MLKIT_MODEL, else the bundled sentiment model.
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

    @Option(help: "Read the texts, one per line, from this file rather than from standard input.")
    var input: String?

    @Option(help: "Write the predictions to this file (complete, or not at all) rather than to standard output.")
    var output: String?

    @Option(help: "Take the model from this collection on the collection server (with --model-id).")
    var collection: String?

    @Option(name: .customLong("model-id"), help: "The model's identifier in --collection.")
    var modelID: String?

    @OptionGroup var server: ServerOptions

    @OptionGroup var device: DeviceContextOptions

    func validate() throws {
        if top < 1 { throw ValidationError("--top must be at least 1.") }
        if input != nil && !texts.isEmpty { throw ValidationError("Give texts or --input, not both.") }
        try validateCollectionOptions()
    }

    func run() async throws {
        try await reportingFailures {
            let classifier = try await resolveModel()
            let formatter = PredictionFormatter(labels: classifier.labels, top: top, json: json)
            try withOutput(output) { write in
                guard texts.isEmpty else {
                    return try formatter.lines(classifier, texts, threads: 0).withUnsafeBytes { try write($0) }
                }
                // Read, predict on every core, and write, all at once, in the input's order.
                let reader = try LineBatchReader(path: input)
                let name = reader.name
                try StreamingPipeline.run(reader, transform: { batch in
                    let (texts, failure) = batch.texts(inputName: name)
                    let lines = try formatter.lines(classifier, texts, threads: 1)
                    if let failure { throw StreamingPipeline.Failure(output: lines, error: failure) }
                    return lines
                }, write: write)
            }
        }
    }
}

/// Writes predictions: one line per text, as `predict`'s options ask.
struct PredictionFormatter: Sendable {
    let top: Int
    let json: Bool
    /// Each label as a JSON string, encoded once rather than once per line.
    private let quoted: [String: String]

    init(labels: [String], top: Int, json: Bool) {
        self.top = top
        self.json = json
        quoted = Dictionary(labels.map { ($0, Self.jsonString($0)) }) { first, _ in first }
    }

    /// The lines of `texts`' predictions, as UTF-8.
    /// - Parameter threads: Worker threads (0: all cores).
    func lines(_ classifier: LoadedModel, _ texts: [String], threads: Int) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(texts.count * (json ? 64 : 16))
        if top == 1 && !json {
            for label in try classifier.predictions(for: texts, threads: threads) {
                output.append(contentsOf: label.utf8)
                output.append(0x0A)
            }
            return output
        }
        for ranked in try classifier.rankedLabels(for: texts, maximumCount: top, threads: threads) {
            output.append(contentsOf: format(ranked).utf8)
        }
        return output
    }

    private func format(_ ranked: [(label: String, probability: Double)]) -> String {
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

    private static func jsonString(_ value: String) -> String {
        let data = (try? JSONEncoder().encode(value)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

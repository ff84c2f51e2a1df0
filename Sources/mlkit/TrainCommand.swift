public import ArgumentParser
import Foundation
public import MLKit

extension TextClassifierParameters.Algorithm: ExpressibleByArgument {}

/// `mlkit train`: trains a classifier or a word tagger from labelled data and writes a model
/// file (the tagger's part is in TrainCommand+Tagger.swift).
struct TrainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train a text classifier or a word tagger from labelled data.",
        discussion: """
            DATA is a JSON array of {"text": ..., "label": ...} objects (Create ML's format), JSON \
            Lines, CSV with a header, or a folder of sub-folders named by label holding .txt files; \
            or, for a word tagger, {"tokens": [...], "labels": [...]} rows (JSON or JSON Lines) or \
            word/TAG text (.txt). The task follows from the data unless --task names it.
            """
    )

    @Argument(help: "The training data.")
    var data: String

    @Option(name: .shortAndLong, help: "The model file to write.")
    var output: String = "model.mlkit"

    @Option(help: "tagger or classifier (default: what the data holds).")
    var task: TrainingTask?

    @Option(help: "auto, nb, cnb, maxent, svm or embedding; for a tagger auto, crf or perceptron.")
    var algorithm: TrainingAlgorithm = .automatic

    @Option(help: "The fraction of the data held out for validation (stratified, seeded).")
    var validationSplit: Double = 0.1

    @Option(help: "A separate validation file, instead of a split.")
    var validation: String?

    @Option(help: "The field or column holding the text.")
    var textColumn: String = "text"

    @Option(help: "The field or column holding the label (a tagger's: the labels; default label, or labels).")
    var labelColumn: String?

    @Option(help: "A tagger's field holding the tokens.")
    var tokenColumn: String = "tokens"

    @Option(help: "The CRF's convergence tolerance (a tagger's; default 1e-4).")
    var tolerance: Double?

    @Option(help: "The longest word n-gram (1 to 5).")
    var ngrams: Int?

    @Option(help: "Keep only features seen at least this many times (default: all; auto also tries 2).")
    var minCount: Int?

    @Option(help: "'balanced', or label=weight pairs separated by commas.")
    var classWeights: String?

    @Option(help: "The largest number of iterations (maxent Newton iterations, SVM passes, epochs, CRF L-BFGS iterations).")
    var maxIterations: Int?

    @Option(help: "C for maxent and svm, alpha for naive Bayes, c2 for the CRF.")
    var regularization: Double?

    @Option(help: "The texts' language (en, zh, ja, th, ...).")
    var language: String?

    @Option(help: "The seed of every random choice.")
    var seed: UInt64 = 42

    @Option(help: "Worker threads (0: all cores).")
    var threads: Int = 0

    @Option(help: "Seconds that --algorithm auto may spend on candidates.")
    var timeBudget: Double = 30

    @Option(help: "The model's author.")
    var author: String?

    @Option(help: "The model's licence.")
    var license: String?

    @Option(name: .customLong("version"), help: "The model's version string.")
    var modelVersion: String?

    @Option(help: "A one-line description of the model.")
    var description: String?

    /// The option of this command for each field of ``TextClassifierParameters`` that the
    /// library checks: an `invalidParameter` error names the field, and the command names the
    /// option the user typed instead (``TextClassifierParameters/validate()`` holds the checks).
    static let optionOfField = [
        "validation": "--validation-split", "maxWordNGram": "--ngrams", "minimumFeatureCount": "--min-count",
        "classWeights": "--class-weights", "maxIterations": "--max-iterations", "epochs": "--max-iterations",
        "regularization": "--regularization", "smoothing": "--regularization", "learningRate": "--regularization",
        "threads": "--threads", "timeBudget": "--time-budget",
    ]

    func run() throws {
        // Each candidate allocates and frees arrays of tens of MB; reusing them saves their page
        // faults. This runs on the main thread, whose heap can keep them (`MLKitCommand.main`).
        FreedMemory.keepForReuse()
        try reportingFailures {
            if try trainsTagger() {
                try trainTagger()
                return
            }
            do {
                try train()
            } catch let error as MLKitError where error.code == .invalidParameter {
                throw error.namingOption(from: Self.optionOfField)
            }
        }
    }

    private func train() throws {
        let clock = ContinuousClock()
        let start = clock.now
        var parameters = TextClassifierParameters(
            algorithm: try algorithm.classifierAlgorithm(), validation: .split(fraction: validationSplit), language: language,
            maxWordNGram: ngrams, minimumFeatureCount: minCount, classWeights: try parsedClassWeights(),
            maxIterations: maxIterations, regularization: regularization, seed: seed, threads: threads,
            timeBudget: timeBudget)
        // Before reading the data, so that a usage error comes at once.
        try parameters.validate()
        let reader = DatasetReader(textColumn: textColumn, labelColumn: labelColumn ?? "label")
        let dataset = try reader.read(contentsOf: URL(fileURLWithPath: data))
        _ = try dataset.validatedForTraining(source: data)
        if let validation {
            parameters.validation = .dataset(try reader.read(contentsOf: URL(fileURLWithPath: validation)))
        }
        let progress = ProgressDisplay()
        parameters.progress = { step, fraction in progress.update(step, fraction) }
        let classifier = try TextClassifier(trainingData: dataset, parameters: parameters)
        progress.finish()
        let metadata = ModelMetadata(author: author, shortDescription: description, license: license,
                                     version: modelVersion)
        let url = URL(fileURLWithPath: output)
        try classifier.write(to: url, metadata: metadata)
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        printSummary(classifier, seconds: seconds, size: size)
    }

    private func parsedClassWeights() throws -> TextClassifierParameters.ClassWeights {
        guard let classWeights else { return .uniform }
        if classWeights == "balanced" { return .balanced }
        var weights: [String: Double] = [:]
        for pair in classWeights.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let weight = Double(parts[1]) else {
                throw MLKitError(.invalidParameter, "expected 'balanced' or label=weight pairs, not '\(pair)'",
                                 at: .init(field: "--class-weights"))
            }
            weights[String(parts[0])] = weight
        }
        return .explicit(weights)
    }

    private func printSummary(_ classifier: TextClassifier, seconds: Double, size: Int) {
        var lines: [String] = []
        if let summary = classifier.trainingSummary {
            let settings = summary.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            lines.append("algorithm            \(summary.algorithm.rawValue) (\(settings))")
            lines.append("chosen because       \(summary.reason)")
            if let candidates = summary.candidates {
                lines += ["candidates           tried on the validation data; * marks the one chosen"]
                    + candidateTable(candidates)
            }
            lines.append("examples             \(summary.examples) in \(classifier.labels.count) labels")
        }
        if let training = classifier.trainingMetrics {
            lines.append(String(format: "training accuracy    %.4f", training.accuracy))
        }
        if let validation = classifier.validationMetrics {
            lines.append(String(format: "validation accuracy  %.4f (macro-F1 %.4f, %d held-out examples)",
                                validation.accuracy, validation.macroF1, validation.count))
        }
        lines.append(String(format: "time                 %.2f s", seconds))
        lines.append("model                \(output) (\(ByteCountFormatter.string(fromByteCount: Int64(size), countStyle: .file)))")
        print(lines.joined(separator: "\n"))
    }
}

/// Training progress: a bar redrawn in place on a terminal, plain lines otherwise.
final class ProgressDisplay: @unchecked Sendable {
    private let lock = NSLock()
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private var lastStep = ""

    func update(_ step: String, _ fraction: Double) {
        lock.lock()
        defer { lock.unlock() }
        if isTerminal {
            let width = 24
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let line = "\r\(bar) \(Int(fraction * 100))% \(step)".prefix(110)
            FileHandle.standardError.write(Data((line + "\u{1B}[K").utf8))
        } else if step != lastStep {
            FileHandle.standardError.write(Data("mlkit: \(step)\n".utf8))
        }
        lastStep = step
    }

    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

extension MLKitError {
    /// The same error with its field replaced by the command-line option for it in `options`
    /// (a library field such as `maxWordNGram` becomes `--ngrams`); unchanged when `options`
    /// has none.
    func namingOption(from options: [String: String]) -> MLKitError {
        guard var location, let field = location.field, let option = options[field] else { return self }
        location.field = option
        return MLKitError(code, reason, at: location)
    }
}

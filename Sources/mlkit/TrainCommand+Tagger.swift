import ArgumentParser
import Foundation
import MLKit

/// What `mlkit train` trains.
enum TrainingTask: String, ExpressibleByArgument, CaseIterable {
    case classifier
    case tagger
}

/// `--algorithm`: the algorithms of both tasks.
enum TrainingAlgorithm: String, ExpressibleByArgument, CaseIterable {
    case automatic = "auto"
    case nb, cnb, maxent, svm, embedding
    case crf, perceptron

    /// The classifier's algorithm.
    /// - Throws: A usage error for a tagger's algorithm.
    func classifierAlgorithm() throws -> TextClassifierParameters.Algorithm {
        guard let algorithm = TextClassifierParameters.Algorithm(rawValue: rawValue) else {
            throw MLKitError.option("algorithm", "'\(rawValue)' trains a word tagger; a text classifier's algorithms are "
                                    + TextClassifierParameters.Algorithm.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return algorithm
    }

    /// The tagger's algorithm.
    /// - Throws: A usage error for a classifier's algorithm.
    func taggerAlgorithm() throws -> WordTaggerParameters.Algorithm {
        guard let algorithm = WordTaggerParameters.Algorithm(rawValue: rawValue) else {
            throw MLKitError.option("algorithm", "'\(rawValue)' trains a text classifier; a word tagger's algorithms are "
                                    + WordTaggerParameters.Algorithm.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return algorithm
    }
}

extension TrainCommand {
    /// Whether to train a word tagger: `--task`, else what the data holds.
    func trainsTagger() throws -> Bool {
        if let task { return task == .tagger }
        // A missing file is reported after the classifier's settings are checked.
        guard FileManager.default.fileExists(atPath: data) else { return false }
        return try DatasetReader().holdsTaggedTokens(at: URL(fileURLWithPath: data), tokensKey: tokenColumn)
    }

    /// Trains a word tagger from DATA and writes it.
    func trainTagger() throws {
        for (option, given) in [("ngrams", ngrams != nil), ("min-count", minCount != nil), ("class-weights", classWeights != nil)]
            where given {
            throw MLKitError.option(option, "applies to text classifiers, and DATA trains a word tagger")
        }
        guard validationSplit > 0 && validationSplit < 1 else {
            throw MLKitError.option("validation-split", "must lie strictly between 0 and 1")
        }
        let clock = ContinuousClock()
        let start = clock.now
        let reader = DatasetReader()
        let labels = labelColumn ?? "labels"
        func read(_ path: String) throws -> [TaggedTokens] {
            try reader.readTaggedTokens(contentsOf: URL(fileURLWithPath: path), tokensKey: tokenColumn, labelsKey: labels)
        }
        let rows = try TaggedTokens.validatedForTraining(try read(data), source: data)
        var parameters = WordTaggerParameters(algorithm: try algorithm.taggerAlgorithm(), regularization: regularization,
                                              maxIterations: maxIterations, language: language, seed: seed, threads: threads)
        if let tolerance { parameters.tolerance = tolerance }
        parameters.validation = try validation.map { .dataset(try read($0)) } ?? .split(fraction: validationSplit)
        let progress = ProgressDisplay()
        parameters.progress = { step, fraction in progress.update(step, fraction) }
        let tagger = try WordTagger(trainingData: rows, parameters: parameters)
        progress.finish()
        let metadata = ModelMetadata(author: author, shortDescription: description, license: license, version: modelVersion)
        let url = URL(fileURLWithPath: output)
        try tagger.write(to: url, metadata: metadata)
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        print(Self.taggerSummary(tagger, seconds: seconds, output: output, size: size).joined(separator: "\n"))
    }

    /// The summary of a trained tagger.
    static func taggerSummary(_ tagger: WordTagger, seconds: Double, output: String, size: Int) -> [String] {
        var lines: [String] = []
        if let summary = tagger.trainingSummary {
            let settings = summary.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            lines.append("task                 word tagger")
            lines.append("algorithm            \(summary.algorithm.rawValue) (\(settings))")
            lines.append("chosen because       \(summary.reason)")
            lines.append("examples             \(summary.examples) sentences, \(summary.tokens) tokens, \(tagger.labels.count) labels")
        }
        if let training = tagger.trainingMetrics {
            lines.append(String(format: "training accuracy    %.4f (tokens)", training.tokenAccuracy))
        }
        if let validation = tagger.validationMetrics {
            var line = String(format: "validation accuracy  %.4f (tokens", validation.tokenAccuracy)
            if validation.hasEntities {
                line += String(format: "; %@ F1 %.4f", validation.segmentsWords ? "word" : "entity", validation.allEntities.f1)
            }
            lines.append(line + ", \(validation.tokenCount) held-out tokens)")
        }
        lines.append(String(format: "time                 %.2f s", seconds))
        lines.append("model                \(output) (\(ByteCountFormatter.string(fromByteCount: Int64(size), countStyle: .file)))")
        return lines
    }
}

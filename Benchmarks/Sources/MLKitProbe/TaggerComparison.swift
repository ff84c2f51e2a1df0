// `MLKitProbe tagger`: mlkit's side of the word-tagger comparison (Benchmarks/tagger/compare.py).
//
//     MLKitProbe tagger TRAIN.jsonl TEST.jsonl --algorithm auto|crf|perceptron --model OUT.mlkit \
//         --result RESULT.json [--passes 3] [--threads 0] [--max-iterations N] [--regularization C]
//     MLKitProbe tagger-features DATA.jsonl OUT.jsonl
//
// `tagger` does in one process what a peer's child does in compare.py: read both splits (not
// timed), train from the sentences in memory (timed, wall clock, all cores), write the model
// file, load it back, then tag the test sentences with the loaded model: the whole pipeline from
// the tokens in memory (features, Viterbi), best of PASSES passes on all cores, and once on one
// thread. A test set whose tokens are single characters (a segmenter's) is also tagged from
// its text: each sentence's characters joined, then split by the tagger's own tokenizer. It
// writes the timings, the model's size and the predicted labels, which the parent scores.
//
// `tagger-features` writes the attribute keys of every token, one JSON array per sentence, so
// that the comparison can check that its copy of the templates gives the peers the same features.
import Foundation
import MLKit

/// What `tagger` writes.
struct TaggerComparisonResult: Encodable {
    let trainSeconds: Double
    let predictSeconds: Double
    let predictOneThreadSeconds: Double
    let textPredictSeconds: Double?
    let modelBytes: Int
    let predictions: [[String]]
    let notes: [String: String]

    enum CodingKeys: String, CodingKey {
        case trainSeconds = "train_s", predictSeconds = "predict_s", predictOneThreadSeconds = "predict_1thread_s"
        case textPredictSeconds = "text_predict_s", modelBytes = "model_bytes", predictions = "pred", notes
    }
}

/// Parses `tagger`'s arguments and runs it; returns the exit status.
func runTaggerComparison(_ arguments: [String]) -> Int32 {
    var positional: [String] = []
    var options: [String: String] = [:]
    var index = 0
    while index < arguments.count {
        if arguments[index].hasPrefix("--"), index + 1 < arguments.count {
            options[String(arguments[index].dropFirst(2))] = arguments[index + 1]
            index += 2
        } else {
            positional.append(arguments[index])
            index += 1
        }
    }
    guard positional.count == 2, let modelPath = options["model"], let resultPath = options["result"] else {
        FileHandle.standardError.write(Data("usage: MLKitProbe tagger TRAIN TEST --algorithm A --model OUT --result RESULT.json\n".utf8))
        return 64
    }
    do {
        let reader = DatasetReader()
        let train = try reader.readTaggedTokens(contentsOf: URL(fileURLWithPath: positional[0]))
        let test = try reader.readTaggedTokens(contentsOf: URL(fileURLWithPath: positional[1]))
        var parameters = WordTaggerParameters()
        if let algorithm = options["algorithm"], algorithm != "default" {
            guard let chosen = WordTaggerParameters.Algorithm(rawValue: algorithm) else {
                FileHandle.standardError.write(Data("unknown algorithm \(algorithm)\n".utf8))
                return 64
            }
            parameters.algorithm = chosen
        }
        parameters.threads = Int(options["threads"] ?? "0") ?? 0
        parameters.maxIterations = options["max-iterations"].flatMap { Int($0) }
        parameters.regularization = options["regularization"].flatMap { Double($0) }
        if let tolerance = options["tolerance"].flatMap({ Double($0) }) { parameters.tolerance = tolerance }
        if options["progress"] != nil {
            let start = Date()
            parameters.progress = { step, fraction in
                FileHandle.standardError.write(Data(String(format: "%7.1f s %3.0f%% %@\n", Date().timeIntervalSince(start),
                                                           fraction * 100, step).utf8))
            }
        }
        let clock = ContinuousClock()
        var start = clock.now
        let trained = try WordTagger(trainingData: train, parameters: parameters)
        let trainSeconds = seconds(clock.now - start)
        let modelURL = URL(fileURLWithPath: modelPath)
        try trained.write(to: modelURL)
        let tagger = try WordTagger(contentsOf: modelURL)
        let sentences = test.map(\.tokens)
        let passes = Int(options["passes"] ?? "3") ?? 3
        var predictions: [[String]] = []
        var best = Double.infinity
        for _ in 0..<max(1, passes) {
            start = clock.now
            predictions = tagger.predictedLabels(for: sentences)
            best = min(best, seconds(clock.now - start))
        }
        start = clock.now
        _ = tagger.predictedLabels(for: sentences, threads: 1)
        let oneThread = seconds(clock.now - start)
        var textSeconds: Double?
        if tagger.tokenizer.unit == .character {
            let texts = sentences.map { $0.joined() }
            var fastest = Double.infinity
            for _ in 0..<max(1, passes) {
                start = clock.now
                let tagged = textPredictions(tagger, texts)
                fastest = min(fastest, seconds(clock.now - start))
                if tagged.map(\.count) != sentences.map(\.count) {
                    FileHandle.standardError.write(Data("note: the text path split some sentences differently\n".utf8))
                }
            }
            textSeconds = fastest
        }
        var notes: [String: String] = [:]
        if let summary = trained.trainingSummary {
            notes["algorithm"] = summary.algorithm.rawValue
            notes["settings"] = summary.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            notes["reason"] = summary.reason
        }
        notes["attributes"] = String(trained.attributeCount)
        notes["weights"] = String(trained.weightCount)
        let size = (try? FileManager.default.attributesOfItem(atPath: modelPath)[.size] as? Int) ?? 0
        let result = TaggerComparisonResult(trainSeconds: trainSeconds, predictSeconds: best, predictOneThreadSeconds: oneThread,
                                            textPredictSeconds: textSeconds, modelBytes: size, predictions: predictions,
                                            notes: notes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(result).write(to: URL(fileURLWithPath: resultPath))
        return 0
    } catch {
        FileHandle.standardError.write(Data("MLKitProbe tagger: \(error)\n".utf8))
        return 65
    }
}

/// Tags texts from their characters on all cores: the pipeline of `mlkit tag` on raw text.
private func textPredictions(_ tagger: WordTagger, _ texts: [String]) -> [[String]] {
    let chunks = 64
    var results = [[[String]]](repeating: [], count: chunks)
    results.withUnsafeMutableBufferPointer { slots in
        let shared = UnsafeMutableSendablePointer(slots.baseAddress!)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let range = (chunk * texts.count / chunks)..<((chunk + 1) * texts.count / chunks)
            shared.pointer[chunk] = range.map { tagger.tags(for: texts[$0]).map(\.label) }
        }
    }
    return results.flatMap { $0 }
}

/// A pointer that workers write at disjoint indices.
private struct UnsafeMutableSendablePointer<T>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<T>
    init(_ pointer: UnsafeMutablePointer<T>) { self.pointer = pointer }
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

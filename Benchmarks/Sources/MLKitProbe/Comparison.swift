// `MLKitProbe compare`: mlkit's side of the peer comparison (Benchmarks/compare/compare.py).
//
//     MLKitProbe compare --algorithms
//     MLKitProbe compare TRAIN.json TEST.json --algorithm default|auto|nb|... --model OUT.mlkit \
//         --result RESULT.json [--latency-calls 1000] [--predict-passes 3]
//
// One process does what a peer's child process does in compare.py, so that the parent can take
// this process's peak RSS from wait4 exactly as it does for the peers: read both splits (not
// timed), train from the examples in memory (timed, wall clock), write the model file, load it
// back (best of 3 loads, timed), predict the whole test set with the loaded model (best of
// PASSES passes, wall clock, all cores as `predictions(for:)` does by default, and once more on
// one thread), then time single predictions of one short test text. It writes the result JSON
// that compare.py's workers write: timings, model size, the predicted labels (the parent scores
// them) and notes.
import Foundation
import MLKit

/// What `compare` writes: the fields of a compare.py worker's result.
struct ComparisonResult: Encodable {
    /// Wall seconds of `TextClassifier(trainingData:parameters:)`.
    let trainSeconds: Double
    /// Best wall seconds to predict the whole test set.
    let predictSeconds: Double
    /// Median microseconds of one `predictedLabel(for:)` call on the latency text.
    let latencyMicroseconds: Double
    /// The model file's size in bytes.
    let modelBytes: Int
    /// One predicted label per test example, in order.
    let predictions: [String]
    /// Details: the algorithm chosen, load time, one-thread batch speed.
    let notes: [String: String]

    enum CodingKeys: String, CodingKey {
        case trainSeconds = "train_s", predictSeconds = "predict_s", latencyMicroseconds = "latency_us"
        case modelBytes = "model_bytes", predictions = "pred", notes
    }
}

/// Parses `compare`'s arguments and runs it; returns the process's exit status.
func runComparison(_ arguments: [String]) -> Int32 {
    if arguments == ["--algorithms"] {
        // The methods compare.py runs: the default with no flags, then every other algorithm
        // (the default's own algorithm, `auto`, would only run the default twice).
        let defaultAlgorithm = TextClassifierParameters().algorithm
        let others = TextClassifierParameters.Algorithm.allCases.filter { $0 != defaultAlgorithm }
        print((["default"] + others.map(\.rawValue)).joined(separator: " "))
        return 0
    }
    var positional: [String] = []
    var options: [String: String] = [:]
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        if argument.hasPrefix("--"), index + 1 < arguments.count {
            options[String(argument.dropFirst(2))] = arguments[index + 1]
            index += 2
        } else {
            positional.append(argument)
            index += 1
        }
    }
    let known: Set = ["algorithm", "model", "result", "latency-calls", "predict-passes"]
    guard positional.count == 2, let model = options["model"], let result = options["result"],
          Set(options.keys).isSubset(of: known)
    else {
        FileHandle.standardError.write(Data("""
            usage: MLKitProbe compare TRAIN TEST --model OUT.mlkit --result RESULT.json \
            [--algorithm default|\(TextClassifierParameters.Algorithm.allCases.map(\.rawValue).joined(separator: "|"))] \
            [--latency-calls N] [--predict-passes N]
            MLKitProbe compare --algorithms

            """.utf8))
        return 64
    }
    let method = options["algorithm"] ?? "default"
    let algorithm: TextClassifierParameters.Algorithm?
    if method == "default" {
        algorithm = nil
    } else if let chosen = TextClassifierParameters.Algorithm(rawValue: method) {
        algorithm = chosen
    } else {
        FileHandle.standardError.write(Data("MLKitProbe compare: unknown algorithm '\(method)'\n".utf8))
        return 64
    }
    do {
        let comparison = try compare(
            train: URL(fileURLWithPath: positional[0]), test: URL(fileURLWithPath: positional[1]),
            algorithm: algorithm, model: URL(fileURLWithPath: model),
            latencyCalls: Int(options["latency-calls"] ?? "") ?? 1000,
            passes: Int(options["predict-passes"] ?? "") ?? 3)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(comparison).write(to: URL(fileURLWithPath: result), options: .atomic)
        return 0
    } catch {
        FileHandle.standardError.write(Data("MLKitProbe compare: \(error)\n".utf8))
        return 1
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// The best wall time of up to `passes` runs of `body`, and its last result (the earlier ones are
/// released before the next run). As compare.py does for the peers, no further run starts once
/// the runs add up to 5 s.
private func bestTime<T>(_ passes: Int, _ body: () throws -> T) rethrows -> (seconds: Double, result: T) {
    var best = Double.infinity
    var total = 0.0
    var result: T?
    for _ in 0..<max(1, passes) {
        // The last result is released first, untimed, so that two never coexist.
        result = nil
        let start = monotonicSeconds()
        result = try body()
        let elapsed = monotonicSeconds() - start
        best = min(best, elapsed)
        total += elapsed
        if total > 5 { break }
    }
    return (best, result!)
}

/// Trains, saves, loads and times one method on one dataset.
/// - Parameter algorithm: `nil` for the default parameters (what `mlkit train` uses with no flags).
private func compare(train: URL, test: URL, algorithm: TextClassifierParameters.Algorithm?, model: URL,
                     latencyCalls: Int, passes: Int) throws -> ComparisonResult {
    let reader = DatasetReader()
    let trainingData = try reader.read(contentsOf: train)
    let testTexts = try reader.read(contentsOf: test).examples.map(\.text)

    let parameters = algorithm.map { TextClassifierParameters(algorithm: $0) } ?? TextClassifierParameters()
    // The trained classifier is released once written: a peer's child predicts with the one
    // model it trained, and this one with the model loaded back, so the two would otherwise
    // hold it twice and add that to the peak RSS.
    let trainSeconds = try { () throws -> Double in
        let start = monotonicSeconds()
        let trained = try TextClassifier(trainingData: trainingData, parameters: parameters)
        let seconds = monotonicSeconds() - start
        try trained.write(to: model)
        return seconds
    }()
    let modelBytes = (try FileManager.default.attributesOfItem(atPath: model.path)[.size] as? Int) ?? 0
    let load = try bestTime(3) { try TextClassifier(contentsOf: model) }
    let classifier = load.result

    let batch = bestTime(passes) { classifier.predictions(for: testTexts) }
    let oneThread = bestTime(1) { classifier.predictions(for: testTexts, threads: 1) }
    precondition(oneThread.result == batch.result, "one-thread predictions differ from the batch's")

    // The test text whose length (in Unicode scalars, as Python counts) is closest to 80; first wins.
    let text = testTexts.min { abs($0.unicodeScalars.count - 80) < abs($1.unicodeScalars.count - 80) } ?? ""
    // As compare.py times the peers: 50 warm-up calls, then `latencyCalls` timed calls, both cut
    // short by a budget (0.3 s and 3 s, never fewer than 20 calls).
    let warmUpStart = monotonicSeconds()
    for call in 0..<min(50, latencyCalls) {
        _ = classifier.predictedLabel(for: text)
        if call + 1 >= 20 && monotonicSeconds() - warmUpStart > 0.3 { break }
    }
    var samples: [Double] = []
    samples.reserveCapacity(latencyCalls)
    var total = 0.0
    for _ in 0..<latencyCalls {
        let callStart = monotonicSeconds()
        let label = classifier.predictedLabel(for: text)
        samples.append(monotonicSeconds() - callStart)
        precondition(classifier.labels.contains(label))
        total += samples[samples.count - 1]
        if samples.count >= 20 && total > 3 { break }
    }
    samples.sort()
    let median = samples.isEmpty ? 0 : (samples[(samples.count - 1) / 2] + samples[samples.count / 2]) / 2

    var notes: [String: String] = [
        "load_ms": String(format: "%.2f", load.seconds * 1000),
        "predict_docs_per_s_1_thread": String(format: "%.1f", Double(testTexts.count) / oneThread.seconds),
        "threads": String(ProcessInfo.processInfo.activeProcessorCount),
        "latency_calls": String(samples.count),
    ]
    // From the model file, which keeps what training reported.
    if let summary = classifier.trainingSummary {
        notes["algorithm"] = summary.algorithm.rawValue
        notes["settings"] = summary.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            .joined(separator: " ")
        notes["reason"] = summary.reason
    }
    if let validation = classifier.validationMetrics {
        notes["validation_accuracy"] = String(format: "%.4f", validation.accuracy)
    }
    return ComparisonResult(trainSeconds: trainSeconds, predictSeconds: batch.seconds,
                            latencyMicroseconds: median * 1e6, modelBytes: modelBytes,
                            predictions: batch.result, notes: notes)
}

// mlkit's micro-benchmarks for ordo-one's Benchmark plugin. From Benchmarks/:
//
//     swift package benchmark                         # everything
//     swift package benchmark --filter "Tokenizer.*"  # a regular expression matching whole names
//
// The tokenizer and featurizer benchmarks process exactly 1 MB (10^6 bytes) of text per
// iteration, so their `Throughput (# / s)` column reads as MB/s, rounded to a whole number. Every
// byte-throughput benchmark also reports the custom metric `kB/s` (10^3 bytes per second), three
// digits finer: 4081 kB/s is 4.081 MB/s. Benchmarks/README.md says what each one measures.
import Benchmark
import Foundation
import MLKit
import MLKitEncryption

/// The custom metric for byte throughput: kilobytes (10^3 bytes) per second.
let kilobytesPerSecondName = "kB/s"
/// The custom metric for document throughput: documents per second.
let documentsPerSecondName = "docs/s"

/// Runs `body` and records `amount` per second of its wall time in the custom metric `name`.
func measureRate(_ benchmark: Benchmark, _ name: String, _ amount: Double, _ body: () throws -> Void) rethrows {
    let elapsed = try ContinuousClock().measure(body)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    if seconds > 0 {
        benchmark.measurement(.custom(name, polarity: .prefersLarger, useScalingFactor: false),
                              Int((amount / seconds).rounded()))
    }
}

/// Runs `body` and records its speed over `bytes` bytes in the `kB/s` metric.
func measureBytes(_ benchmark: Benchmark, _ bytes: Int, _ body: () throws -> Void) rethrows {
    try measureRate(benchmark, kilobytesPerSecondName, Double(bytes) / 1e3, body)
}

/// Runs `body` and records its speed over `count` documents in the `docs/s` metric.
func measureDocuments(_ benchmark: Benchmark, _ count: Int, _ body: () throws -> Void) rethrows {
    try measureRate(benchmark, documentsPerSecondName, Double(count), body)
}

let benchmarks: @Sendable () -> Void = {
    let kilobytesPerSecond = BenchmarkMetric.custom(kilobytesPerSecondName, polarity: .prefersLarger,
                                                    useScalingFactor: false)

    /// Settings for the byte-throughput benchmarks: `kB/s` shown as a plain number, not in K.
    func throughputConfiguration(warmup: Int = 3) -> Benchmark.Configuration {
        .init(metrics: [.throughput, .wallClock, kilobytesPerSecond], timeUnits: .microseconds,
              units: [kilobytesPerSecond: .count], warmupIterations: warmup,
              maxDuration: .seconds(2), maxIterations: 1_000)
    }
    let perMegabyte = throughputConfiguration()

    // MARK: Tokenizer: 1 MB of text per iteration, throughput = MB/s

    let englishMegabyte = Corpus.text(Corpus.english)
    let chineseMegabyte = Corpus.text(Corpus.chinese)

    for (language, text) in [("English", englishMegabyte), ("Chinese", chineseMegabyte)] {
        Benchmark("Tokenizer standard \(language) 1MB", configuration: perMegabyte) { benchmark in
            let tokenizer = Tokenizer()
            for _ in benchmark.scaledIterations {
                var count = 0
                measureBytes(benchmark, megabyte) { tokenizer.enumerateTokens(in: text) { _ in count += 1 } }
                blackHole(count)
            }
        }
    }

    if Tokenizer.isICUAvailable {
        // The peer the probe compares against: ICU's dictionary word break iterator.
        for (language, text) in [("English", englishMegabyte), ("Chinese", chineseMegabyte)] {
            Benchmark("Tokenizer icu \(language) 1MB", configuration: perMegabyte) { benchmark in
                let tokenizer = Tokenizer(segmentation: .icu)
                for _ in benchmark.scaledIterations {
                    var count = 0
                    measureBytes(benchmark, megabyte) { tokenizer.enumerateTokens(in: text) { _ in count += 1 } }
                    blackHole(count)
                }
            }
        }
    }

    // MARK: Featurizer: 1 MB of documents per iteration, throughput = MB/s

    let englishDocuments = Corpus.documents(Corpus.english, separator: "\n\n")
    let chineseDocuments = Corpus.documents(Corpus.chinese, separator: "\n")
    let featurizers: [(name: String, configuration: FeaturizerConfiguration)] = [
        ("words hashed", FeaturizerConfiguration()),
        ("words+bigrams hashed", FeaturizerConfiguration(maxWordNGram: 2)),
    ]
    for (name, configuration) in featurizers {
        for (language, documents) in [("English", englishDocuments), ("Chinese", chineseDocuments)] {
            Benchmark("Featurizer \(name) \(language) 1MB", configuration: perMegabyte) { benchmark, featurizer in
                for _ in benchmark.scaledIterations {
                    var nonzeros = 0
                    measureBytes(benchmark, megabyte) {
                        for document in documents { nonzeros &+= featurizer.vector(for: document).count }
                    }
                    blackHole(nonzeros)
                }
            } setup: {
                try Featurizer(configuration: configuration)
            }
        }
    }

    // MARK: Dataset reading: a 4 MB JSON array parsed from memory (throughput = parses/s; see kB/s)

    let json = Corpus.jsonDataset(bytes: 4 * megabyte)
    Benchmark(
        "DatasetReader JSON array 4MB",
        configuration: {
            var configuration = throughputConfiguration(warmup: 2)
            configuration.metrics.append(.mallocCountTotal)
            return configuration
        }()
    ) { benchmark in
        let reader = DatasetReader()
        try measureBytes(benchmark, json.data.count) {
            let dataset = try reader.read(data: json.data, format: .jsonArray, source: "generated.json")
            precondition(dataset.count == json.records)
            blackHole(dataset)
        }
    }

    // MARK: Allocations per call on the prediction path

    // The goal is no allocation per prediction beyond the result; these report where we are.
    let sentence = "I love rainbows, but this movie was far too long and the ending made no sense."
    let perCall = Benchmark.Configuration(metrics: [.mallocCountTotal, .mallocBytesCount, .wallClock],
                                          timeUnits: .nanoseconds, warmupIterations: 10,
                                          maxDuration: .seconds(1), maxIterations: 10_000)
    for (name, configuration) in featurizers {
        Benchmark(
            "Allocations Featurizer vector \(name) short sentence", configuration: perCall
        ) { benchmark, featurizer in
            blackHole(featurizer.vector(for: sentence))
        } setup: {
            try Featurizer(configuration: configuration)
        }
    }
    Benchmark(
        "Allocations Tokenizer enumerateTokens short sentence", configuration: perCall
    ) { _ in
        var count = 0
        Tokenizer().enumerateTokens(in: sentence) { _ in count += 1 }
        blackHole(count)
    }

    // MARK: Prediction: the bundled sentiment model (trained/sentiment.mlkit)

    let modelURL = Fixtures.repository.appendingPathComponent("trained/sentiment.mlkit")
    let documents = Fixtures.predictionDocuments(count: 1_000)

    Benchmark(
        "Prediction latency short sentence",
        configuration: .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .nanoseconds,
                             warmupIterations: 100, maxDuration: .seconds(2), maxIterations: 100_000)
    ) { _, classifier in
        blackHole(classifier.predictedLabel(for: sentence))
    } setup: {
        try TextClassifier(contentsOf: modelURL)
    }

    // One iteration predicts 1,000 documents with `predictions(for:)` (all cores, then one), so
    // with the scaling factor .kilo the throughput row reads as thousands of documents per second; the
    // custom metric `docs/s` gives the figure itself.
    let documentsPerSecond = BenchmarkMetric.custom(documentsPerSecondName, polarity: .prefersLarger,
                                                    useScalingFactor: false)
    for (suffix, threads) in [("", 0), (" one thread", 1)] {
        Benchmark(
            "Prediction batch docs/s\(suffix)",
            configuration: .init(metrics: [.throughput, .wallClock, documentsPerSecond], timeUnits: .microseconds,
                                 units: [documentsPerSecond: .count], warmupIterations: 2, scalingFactor: .kilo,
                                 maxDuration: .seconds(3), maxIterations: 1_000)
        ) { benchmark, classifier in
            measureDocuments(benchmark, documents.count) {
                blackHole(classifier.predictions(for: documents, threads: threads))
            }
        } setup: {
            try TextClassifier(contentsOf: modelURL)
        }
    }

    // MARK: Allocations per prediction (the goal: none beyond the result)

    let predictionCalls: [(name: String, call: @Sendable (TextClassifier) -> Void)] = [
        ("predictedLabel", { blackHole($0.predictedLabel(for: sentence)) }),
        ("predictedLabelHypotheses top 2", { blackHole($0.predictedLabelHypotheses(for: sentence, maximumCount: 2)) }),
    ]
    for (name, call) in predictionCalls {
        Benchmark("Allocations Prediction \(name) short sentence", configuration: perCall) { _, classifier in
            call(classifier)
        } setup: {
            try TextClassifier(contentsOf: modelURL)
        }
    }

    // MARK: Model load

    Benchmark(
        "Model load plain",
        configuration: .init(metrics: [.wallClock, .mallocCountTotal, .peakMemoryResidentDelta],
                             timeUnits: .microseconds, warmupIterations: 2, maxDuration: .seconds(2),
                             maxIterations: 1_000)
    ) { _ in
        blackHole(try TextClassifier(contentsOf: modelURL))
    }

    // The same model sealed with AES-256-GCM under a fresh key (MLKitEncryption), loaded with
    // that key: decryption happens in memory, so the difference to "Model load plain" is the
    // cipher's cost. The sealed copy lives in the temporary folder during the benchmark.
    let sealedURL = FileManager.default.temporaryDirectory
        .appendingPathComponent("mlkit-benchmark-\(ProcessInfo.processInfo.processIdentifier).mlkit")
    Benchmark(
        "Model load encrypted",
        configuration: .init(metrics: [.wallClock, .mallocCountTotal, .peakMemoryResidentDelta],
                             timeUnits: .microseconds, warmupIterations: 2, maxDuration: .seconds(2),
                             maxIterations: 1_000)
    ) { _, key in
        blackHole(try TextClassifier(contentsOf: sealedURL, key: key))
    } setup: {
        let key = ModelKey.generate(cipher: .aes256GCM)
        try ModelEncryption.encrypt(try Data(contentsOf: modelURL), with: key).write(to: sealedURL)
        return key
    } teardown: {
        try? FileManager.default.removeItem(at: sealedURL)
    }

    // MARK: Training: documents per second for each algorithm, VADER sentiment training split

    if let training = Fixtures.trainingData() {
        for algorithm in TextClassifierParameters.Algorithm.allCases {
            Benchmark(
                "Training docs/s \(algorithm.rawValue)",
                configuration: .init(metrics: [.wallClock, documentsPerSecond, .peakMemoryResidentDelta],
                                     timeUnits: .milliseconds, units: [documentsPerSecond: .count],
                                     warmupIterations: 0, maxDuration: .seconds(10), maxIterations: 3)
            ) { benchmark in
                try measureDocuments(benchmark, training.count) {
                    blackHole(try TextClassifier(trainingData: training,
                                                 parameters: TextClassifierParameters(algorithm: algorithm)))
                }
            }
        }
    } else {
        FileHandle.standardError.write(Data("""
            note: the "Training docs/s" benchmarks need \(Fixtures.trainingPath); \
            build it with `python3 datasets/build_vader.py` from the repository root.

            """.utf8))
    }
}

import Foundation
import MLKit
import MLKitCoreML

// mlkit's side of the Core ML benchmarks in Benchmarks/coreml/ (`swift build -c release
// --package-path Benchmarks --product CoreMLProbe`; run.sh builds and runs it):
//
//   CoreMLProbe speed MODEL [--loads N] [--calls N] TEXT...
//     loads MODEL N times, then labels each TEXT N times, and prints one JSON object: the
//     median and fastest load in milliseconds, and per text the microseconds of one call, from
//     the text (tokenized into lowercased word counts) and from its word counts.
//
//   CoreMLProbe export TRAIN TEST [ALGORITHM...]
//     trains each algorithm (nb, cnb, maxent, svm) on TRAIN, exports it to Core ML, and prints
//     per algorithm how far the export's probabilities on TEST are from the model's.

/// The wall-clock time of `body`, in seconds.
func wallTime(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) * 1e-9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted.count % 2 == 1 ? sorted[sorted.count / 2]
        : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func runCoreMLSpeed(_ arguments: [String]) -> Int32 {
    var loads = 30, calls = 100_000
    var rest: [String] = []
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--loads": loads = Int(iterator.next() ?? "") ?? loads
        case "--calls": calls = Int(iterator.next() ?? "") ?? calls
        default: rest.append(argument)
        }
    }
    guard let path = rest.first else {
        FileHandle.standardError.write(Data("usage: CoreMLProbe speed MODEL [--loads N] [--calls N] TEXT...\n".utf8))
        return 64
    }
    let texts = Array(rest.dropFirst())
    let url = URL(fileURLWithPath: path)
    do {
        var model = try CoreMLModel(contentsOf: url)
        let loadTimes = try (0..<loads).map { _ in try wallTime { model = try CoreMLModel(contentsOf: url) } * 1e3 }
        var perText: [String: [String: Double]] = [:]
        var sink = 0.0
        for text in texts {
            let counts = try model.input(for: text)
            guard case .stringDictionary(let wordCounts)? = counts.first?.value else { return 65 }
            // Warm up, then time `calls` calls, from the text and from its word counts.
            for _ in 0..<1000 { sink += try model.predictedLabelHypotheses(for: text, maximumCount: 2).values.first ?? 0 }
            let fromText = try wallTime {
                for _ in 0..<calls { sink += try model.predictedLabelHypotheses(for: text, maximumCount: 2).values.first ?? 0 }
            }
            let fromCounts = try wallTime {
                for _ in 0..<calls {
                    sink += try model.predictedLabelHypotheses(forWordCounts: wordCounts, maximumCount: 2).values.first ?? 0
                }
            }
            let probabilities = try model.predictedLabelHypotheses(for: text, maximumCount: 2)
            perText[text] = ["text_us": fromText / Double(calls) * 1e6, "counts_us": fromCounts / Double(calls) * 1e6]
                .merging(probabilities.mapValues { $0 }) { first, _ in first }
        }
        let result: [String: Any] = ["load_ms_median": median(loadTimes), "load_ms_min": loadTimes.min() ?? .nan,
                                     "texts": perText, "calls": calls, "loads": loads, "sink": sink.isFinite]
        let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
        return 0
    } catch {
        FileHandle.standardError.write(Data("CoreMLProbe speed: \(error)\n".utf8))
        return 1
    }
}

func runCoreMLExportCheck(_ arguments: [String]) -> Int32 {
    guard arguments.count >= 2 else {
        FileHandle.standardError.write(Data("usage: CoreMLProbe export TRAIN TEST [ALGORITHM...]\n".utf8))
        return 64
    }
    let names = arguments.count > 2 ? Array(arguments.dropFirst(2)) : ["nb", "cnb", "maxent", "svm"]
    func column(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
    do {
        let train = try DatasetReader().read(contentsOf: URL(fileURLWithPath: arguments[0]))
        let test = try DatasetReader().read(contentsOf: URL(fileURLWithPath: arguments[1]))
        print("algorithm  labels  test texts  |Δp| from the model: largest  mean      texts past 1e-6"
              + "  same labels  .mlmodel bytes")
        for name in names {
            guard let algorithm = TextClassifierParameters.Algorithm(rawValue: name) else { return 64 }
            let classifier = try TextClassifier(trainingData: train, parameters: .init(algorithm: algorithm))
            let data = try classifier.coreMLModelData()
            let exported = try CoreMLModel(fileData: data)
            var largest = 0.0, total = 0.0, past = 0, same = 0, count = 0
            let labels = classifier.labels
            for example in test.examples {
                let original = classifier.predictedLabelHypotheses(for: example.text, maximumCount: labels.count)
                let converted = try exported.predictedLabelHypotheses(for: example.text, maximumCount: labels.count)
                var textLargest = 0.0
                for label in labels {
                    let difference = abs(original[label]! - converted[label]!)
                    textLargest = max(textLargest, difference)
                    total += difference
                    count += 1
                }
                largest = max(largest, textLargest)
                if textLargest > 1e-6 { past += 1 }
                if classifier.predictedLabel(for: example.text) == (try exported.predictedLabel(for: example.text)) { same += 1 }
            }
            print(column(name, 9) + column(String(labels.count), 8) + column(String(test.examples.count), 12)
                  + column(String(format: "%.2e", largest), 29) + column(String(format: "%.2e", total / Double(max(count, 1))), 10)
                  + column(String(past), 17)
                  + column("\(same)/\(test.examples.count)", 13) + column(String(data.count), 16))
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("CoreMLProbe export: \(error)\n".utf8))
        return 1
    }
}

switch CommandLine.arguments.dropFirst().first {
case "speed": exit(runCoreMLSpeed(Array(CommandLine.arguments.dropFirst(2))))
case "export": exit(runCoreMLExportCheck(Array(CommandLine.arguments.dropFirst(2))))
default:
    FileHandle.standardError.write(Data("usage: CoreMLProbe speed MODEL ... | CoreMLProbe export TRAIN TEST ...\n".utf8))
    exit(64)
}

public import Foundation
import MLKit
public import MLKitCoreML

/// What the Core ML harnesses do with a file: load it, and ask the model what a user would.
public enum CoreMLExercise {
    /// The most elements of an array input the harness makes: a model may declare any shape,
    /// and the harness's own allocations must stay bounded too.
    static let largestInput = 1 << 16

    /// When `MLKIT_FUZZ_VERBOSE` is set (to check the seeds), why a file did not load.
    static let verbose = ProcessInfo.processInfo.environment["MLKIT_FUZZ_VERBOSE"] != nil

    /// Loads `data` as a Core ML model or archive, as `mlkit info`, `predict` and `evaluate`
    /// do, and uses what loads; a model that does not run is still described.
    public static func load(_ data: Data, decryptor: CoreMLArchiveDecryptor? = nil) {
        do {
            model(try CoreMLModel(fileData: data, source: "fuzz", decryptor: decryptor))
        } catch let error as CoreMLError {
            if verbose { FileHandle.standardError.write(Data("not loaded: \(error)\n".utf8)) }
            if error.code == .invalidModel || error.code == .unsupportedModelType {
                do {
                    info(try CoreMLModel.info(fileData: data, source: "fuzz", decryptor: decryptor))
                } catch {
                    finding("a model that reads, but does not run, cannot be described: \(error)")
                }
            }
        } catch {
            // What the decryptor throws.
            if verbose { FileHandle.standardError.write(Data("not loaded: \(error)\n".utf8)) }
        }
        _ = try? CoreMLModel.archiveKeyIdentifier(fileData: data, source: "fuzz")
    }

    /// Everything `mlkit info` shows.
    public static func info(_ info: CoreMLModelInfo) {
        var lines = [info.modelType, "\(info.specificationVersion)", "\(info.isUpdatable)"]
        lines += (info.inputs + info.outputs).map { "\($0.name) \($0.type) \($0.isOptional) \($0.shortDescription)" }
        lines += [info.predictedFeatureName ?? "", info.predictedProbabilitiesName ?? ""]
        lines += info.stages.map { "\($0.path) \($0.type) \($0.inputs) \($0.outputs) \($0.summary)" }
        lines += info.labels ?? []
        lines.append("\(info.vocabularySize ?? 0)")
        if let nl = info.naturalLanguage { lines.append("\(nl.type) \(nl.revision) \(nl.language) \(nl.labels) \(nl.parameterBytes)") }
        lines.append(String(describing: info.metadata))
        _ = lines.joined(separator: "\n")
    }

    /// Predictions on inputs of every declared type, on missing and mistyped inputs, and, for a
    /// text classifier, every text API and an evaluation.
    public static func model(_ model: CoreMLModel) {
        info(model.info)
        _ = model.labels
        if let inputs = inputs(for: model.inputs, variant: 0) { read(try? model.prediction(from: inputs)) }
        if let inputs = inputs(for: model.inputs, variant: 1) { read(try? model.prediction(from: inputs)) }
        _ = try? model.prediction(from: [:])
        _ = try? model.prediction(from: Dictionary(model.inputs.map { ($0.name, .string("x")) }) { first, _ in first })
        guard model.isTextClassifier else { return }
        let labels = model.labels ?? []
        do {
            for text in Exercise.texts {
                _ = try model.input(for: text)
                let label = try model.predictedLabel(for: text)
                if !(labels.contains(label)) { finding("a predicted label that is not one of the model's") }
                check(Array(try model.predictedLabelHypotheses(for: text, maximumCount: 2).values))
                check(try model.rankedLabels(for: text, maximumCount: 3).map(\.probability))
            }
            _ = try model.rankedLabels(for: Exercise.texts, maximumCount: 2, threads: 1)
            let examples = [LabeledText(text: Exercise.texts[0], label: labels.first ?? "a"),
                            LabeledText(text: Exercise.texts[1], label: "a label it lacks")]
            Exercise.metrics(try model.evaluation(on: TextDataset(examples)))
        } catch let error as CoreMLError where error.code == .invalidInput {
            // A stage that cannot take the text's features (an unknown category), named.
        } catch {
            finding("a text classifier's prediction failed with \(error)")
        }
        _ = try? model.predictedLabel(forWordCounts: ["rain": 2, "goal": 1, "": 3])
        _ = try? model.predictedLabelHypotheses(forWordCounts: ["rain": 2, "#<ra": 1], maximumCount: 2)
    }

    /// A value for each declared input, two variants; `nil` when an input is of a type the
    /// harness cannot make or an array larger than ``largestInput``.
    static func inputs(for features: [CoreMLFeatureDescription], variant: Int) -> [String: CoreMLFeatureValue]? {
        var inputs: [String: CoreMLFeatureValue] = [:]
        for feature in features {
            switch feature.type {
            case .int64: inputs[feature.name] = .int64(variant == 0 ? 7 : -3)
            case .double: inputs[feature.name] = .double(variant == 0 ? 0.5 : -.infinity)
            case .string: inputs[feature.name] = .string(variant == 0 ? "red" : "")
            case .stringDictionary: inputs[feature.name] = .stringDictionary(variant == 0 ? ["rain": 2, "goal": 1, "": 1] : [:])
            case .int64Dictionary: inputs[feature.name] = .int64Dictionary(variant == 0 ? [3: 1, 5: 2, -1: 1] : [Int64.max: .nan])
            case .multiArray(let shape, _):
                var count = 1
                for dimension in shape {
                    guard dimension >= 0 else { return nil }
                    let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
                    guard !overflow, product <= largestInput else { return nil }
                    count = product
                }
                inputs[feature.name] = .multiArray(values: (0..<count).map { variant == 0 ? Double($0) * 0.25 : -Double($0) },
                                                   shape: shape)
            case .other: return nil
            }
        }
        return inputs
    }

    /// Reads every output a prediction gave, as a caller prints them.
    private static func read(_ outputs: [String: CoreMLFeatureValue]?) {
        _ = (outputs ?? [:]).map { "\($0.key): \($0.value)" }.joined(separator: "\n")
    }

    private static func check(_ probabilities: [Double]) {
        for probability in probabilities where !probability.isNaN {
            if !(probability >= 0 && probability <= 1.000_001) { finding("probability \(probability) out of [0, 1]") }
        }
    }
}

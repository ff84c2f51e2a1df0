// The Core ML model reader (`CoreMLModel(fileData:)`, a `.mlmodel` protocol buffer) and its
// evaluator, in two ways chosen by the input's first byte:
// - even: the rest is a `.mlmodel`. A model that loads is asked what a user would ask
//   (`CoreMLExercise`: its description, predictions on inputs of every declared type, the text
//   classifier's APIs and an evaluation); one that reads but does not run is described.
// - odd: the rest is an mlkit model file, resealed (length, CRC-32) as the model-file harness
//   does. A classifier that loads, of up to 2^20 weights, is exported to Core ML
//   (`coreMLModelData()`): the export must load as a text classifier with the same labels,
//   and is then used the same way.
import Foundation
import FuzzSupport
import MLKit
import MLKitCoreML

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked {
        var seeds: [String: Data] = [:]
        for (name, model) in try CoreMLSeeds.models() { seeds[name] = Data([0]) + model }
        for (name, model) in try Seeds.smallModels()
            where (name.hasSuffix("-v3.mlkit") || name.hasSuffix("-hashed.mlkit")) && !name.hasPrefix("stored-rows") {
            seeds["export-" + name] = Data([1]) + model
        }
        return seeds
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard let (choice, rest) = FuzzInput.choice(FuzzInput.data(start, count)) else { return 0 }
    if choice & 1 == 0 {
        CoreMLExercise.load(rest)
        return 0
    }
    guard let classifier = try? TextClassifier(modelFileData: ModelFileSeal.resealed(rest), source: "fuzz.mlkit") else { return 0 }
    // Core ML stores the whole weight matrix, features × labels, whatever the mlkit file keeps:
    // a small file of a model over 2^24 hash buckets exports to hundreds of megabytes, as the
    // format requires. The harness exports models of up to 2^20 weights.
    let features: Int
    if case .hashed(let bits) = classifier.featurizerConfiguration.indexing { features = 1 << min(bits, 40) } else { features = classifier.vocabularySize }
    let (weights, overflow) = features.multipliedReportingOverflow(by: classifier.labels.count)
    guard !overflow, weights <= 1 << 20 else { return 0 }
    let exported: Data
    do {
        exported = try classifier.coreMLModelData()
    } catch let error as CoreMLError where error.code == .notExportable {
        return 0
    } catch {
        finding("the export failed with an error other than notExportable: \(error)")
    }
    let model: CoreMLModel
    do {
        model = try CoreMLModel(fileData: exported, source: "exported.mlmodel")
    } catch {
        finding("an exported model does not load: \(error)")
    }
    if !(model.isTextClassifier) { finding("an exported model is not a text classifier") }
    if !(model.labels == classifier.labels) { finding("an exported model's labels are not the classifier's") }
    CoreMLExercise.model(model)
    return 0
}

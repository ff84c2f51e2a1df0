import Foundation
import MLKit
import MLKitCoreML
import MLKitEncryption

/// Which kind of model file a path holds: mlkit's own, or Core ML's.
enum ModelFileKind {
    /// Whether the file is a Core ML model (`.mlmodel`) or model archive (`.mlarchive`): by its
    /// first bytes (a zip's `PK`, or a protobuf's first field, the specification version), or
    /// else by its extension. An mlkit model starts with `MLKITMOD` or `MLKITENC`.
    static func isCoreML(_ url: URL) -> Bool {
        let first = (try? FileHandle(forReadingFrom: url)).flatMap { handle -> Data? in
            defer { try? handle.close() }
            return try? handle.read(upToCount: 8)
        } ?? Data()
        if first.starts(with: Array("MLKIT".utf8)) { return false }
        if CoreMLModel.isArchive(first) || first.first == 0x08 { return true }
        return ["mlmodel", "mlarchive"].contains(url.pathExtension.lowercased())
    }
}

/// Loads a Core ML model or archive; an encrypted archive is decrypted in memory with the key
/// file that `--key` names (Apple's `.mlmodelkey`).
func loadCoreMLModel(at url: URL, keyPath: String?) throws -> CoreMLModel {
    do {
        return try CoreMLModel(contentsOf: url, decryptor: try archiveDecryptor(keyPath: keyPath, source: url.path))
    } catch let error as CoreMLError where error.code == .keyUnavailable && keyPath == nil {
        throw CoreMLError(error.code, error.reason + "; pass --key FILE with that key", file: error.file)
    }
}

/// The decryptor for an encrypted archive, from the key file `--key` names, if any.
func archiveDecryptor(keyPath: String?, source: String) throws -> CoreMLArchiveDecryptor? {
    guard let keyPath else { return nil }
    let key = try readKey(path: keyPath)
    return { file, identifier in try ModelArchiveDecryption.decrypt(file, keyIdentifier: identifier, with: key, source: source) }
}

/// A model that labels texts: mlkit's own, or a Core ML text classifier.
enum LoadedModel {
    case mlkit(TextClassifier)
    case coreML(CoreMLModel)

    /// An mlkit model file, or a Core ML one, by what the file holds.
    static func load(at url: URL, keyPath: String?) throws -> LoadedModel {
        ModelFileKind.isCoreML(url) ? .coreML(try loadCoreMLModel(at: url, keyPath: keyPath))
                                    : .mlkit(try loadClassifier(at: url, keyPath: keyPath))
    }

    /// The labels, in the model's order.
    var labels: [String] {
        switch self {
        case .mlkit(let classifier): return classifier.labels
        case .coreML(let model): return model.labels ?? []
        }
    }

    /// The most likely label of each text, on `threads` threads (0: all cores).
    func predictions(for texts: [String], threads: Int = 0) throws -> [String] {
        switch self {
        case .mlkit(let classifier): return classifier.predictions(for: texts, threads: threads)
        case .coreML(let model):
            return try model.rankedLabels(for: texts, maximumCount: 1, threads: threads).map { $0.first?.label ?? "" }
        }
    }

    /// The `maximumCount` most likely labels of each text, with their probabilities, on
    /// `threads` threads (0: all cores).
    func rankedLabels(for texts: [String], maximumCount: Int,
                      threads: Int = 0) throws -> [[(label: String, probability: Double)]] {
        switch self {
        case .mlkit(let classifier): return classifier.rankedLabels(for: texts, maximumCount: maximumCount, threads: threads)
        case .coreML(let model): return try model.rankedLabels(for: texts, maximumCount: maximumCount, threads: threads)
        }
    }

    /// Metrics on labelled texts.
    func evaluation(on dataset: TextDataset, threads: Int = 0) throws -> ClassificationMetrics {
        switch self {
        case .mlkit(let classifier): return classifier.evaluation(on: dataset, threads: threads)
        case .coreML(let model): return try model.evaluation(on: dataset, threads: threads)
        }
    }
}

extension PredictCommand {
    /// The model: a Core ML model or archive that `--model` names, or else what
    /// ``resolveClassifier()`` finds.
    func resolveModel() async throws -> LoadedModel {
        if collection == nil {
            let url = try ModelLocation.resolve(model)
            if ModelFileKind.isCoreML(url) { return .coreML(try loadCoreMLModel(at: url, keyPath: key)) }
        }
        return .mlkit(try await resolveClassifier())
    }
}

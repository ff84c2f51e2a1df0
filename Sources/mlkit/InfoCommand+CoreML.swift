import Foundation
import MLKit
import MLKitCoreML

extension InfoCommand {
    /// `mlkit info` of a Core ML model or model archive: the specification version, the inputs
    /// and outputs with their types, the pipeline's stages, the labels and vocabulary size, the
    /// metadata, and whether mlkit runs it. An encrypted archive without `--key` shows its key
    /// identifier only.
    func describeCoreML() throws {
        let url = URL(fileURLWithPath: model)
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
        var lines = ["file                \(model) (\(size) bytes)"]
        let isArchive = CoreMLModel.isArchive((try? FileHandle(forReadingFrom: url).read(upToCount: 4)) ?? Data())
        if isArchive {
            let identifier = try CoreMLModel.archiveKeyIdentifier(contentsOf: url)
            lines.append("archive             " + (identifier.map { "encrypted with key \($0)" } ?? "plain"))
            if let identifier, key == nil {
                lines.append("model               encrypted; pass --key FILE (its .mlmodelkey, key \(identifier)) to read it")
                print(lines.joined(separator: "\n"))
                return
            }
        }
        let decryptor = try archiveDecryptor(keyPath: key, source: model)
        let info: CoreMLModelInfo
        let evaluation: String
        var inconsistency: CoreMLError?
        do {
            let loaded = try CoreMLModel(contentsOf: url, decryptor: decryptor)
            info = loaded.info
            evaluation = loaded.isTextClassifier ? "yes, as a text classifier (mlkit predict, mlkit evaluate)" : "yes (CoreMLModel.prediction(from:))"
        } catch let error as CoreMLError where error.code == .invalidModel || error.code == .unsupportedModelType {
            info = try CoreMLModel.info(contentsOf: url, decryptor: decryptor)
            evaluation = "no: \(error.reason)"
            // A type mlkit does not run is a valid model; stages that do not fit together are not.
            if error.code == .invalidModel { inconsistency = error }
        }
        lines.append("format              Core ML \(isArchive ? "model archive" : "model"), specification version \(info.specificationVersion)")
        lines += Self.describe(info)
        lines.append("mlkit runs it       \(evaluation)")
        print(lines.joined(separator: "\n"))
        if let inconsistency { throw inconsistency }
    }

    /// The lines that describe a Core ML model.
    static func describe(_ info: CoreMLModelInfo) -> [String] {
        func line(_ name: String, _ value: String) -> String { name.padding(toLength: 20, withPad: " ", startingAt: 0) + value }
        func feature(_ feature: CoreMLFeatureDescription) -> String {
            "\(feature.name): \(feature.type)\(feature.isOptional ? " (optional)" : "")"
                + (feature.shortDescription.isEmpty ? "" : " — \(feature.shortDescription)")
        }
        var lines = [line("type", info.modelType + (info.isUpdatable ? " (updatable)" : ""))]
        lines += info.inputs.map { line("input", feature($0)) }
        lines += info.outputs.map { line("output", feature($0)) }
        if let predicted = info.predictedFeatureName {
            lines.append(line("prediction", predicted + (info.predictedProbabilitiesName.map { "; probabilities in \($0)" } ?? "")))
        }
        if let labels = info.labels { lines.append(line("labels", "\(labels.count): \(labels.joined(separator: ", "))")) }
        if let size = info.vocabularySize { lines.append(line("vocabulary", "\(size) keys")) }
        if let nl = info.naturalLanguage {
            lines.append(line("language", nl.language.isEmpty ? "-" : nl.language))
            lines.append(line("revision", String(nl.revision)))
            lines.append(line("weights", "\(nl.parameterBytes) bytes in Apple's unpublished layout"))
        }
        for stage in info.stages where !stage.path.isEmpty || info.stages.count == 1 {
            let name = stage.path.isEmpty ? stage.type : "\(stage.path) \(stage.type)"
            lines.append(line("stage", "\(name)\(stage.summary.isEmpty ? "" : " (\(stage.summary))"): "
                              + "\(stage.inputs.joined(separator: ", ")) → \(stage.outputs.joined(separator: ", "))"))
        }
        let metadata = info.metadata
        for (name, value) in [("author", metadata.author), ("license", metadata.license),
                              ("version", metadata.version), ("description", metadata.shortDescription)] {
            if let value { lines.append(line(name, value)) }
        }
        for (key, value) in metadata.additional.sorted(by: { $0.key < $1.key }) { lines.append(line(key, value)) }
        return lines
    }
}

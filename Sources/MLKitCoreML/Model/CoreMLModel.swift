public import Foundation
import MLKit

/// A Core ML model, read from a `.mlmodel` file or a model archive (`.mlarchive`, plain or
/// encrypted), and evaluated by mlkit.
///
/// mlkit evaluates the classic model types, which the format specifies completely: pipelines
/// (`pipeline`, `pipelineClassifier`, `pipelineRegressor`), `dictVectorizer`,
/// `featureVectorizer`, `glmClassifier`, `glmRegressor`, `scaler`, `normalizer`,
/// `oneHotEncoder`, `imputer`, `categoricalMapping`, `arrayFeatureExtractor` and `identity`.
/// Features flow by name through a pipeline, and are checked when the model loads: every
/// stage's input is produced by an earlier stage, with the declared type and size.
///
/// A model is an immutable value and `Sendable`: load it once and call it from any thread.
///
/// ```swift
/// let model = try CoreMLModel(contentsOf: URL(fileURLWithPath: "SentimentPolarity.mlmodel"))
/// try model.predictedLabel(for: "I love rainbows")                                  // "Pos"
/// try model.prediction(from: ["input": .stringDictionary(["love": 1, "rainbows": 1])])
/// ```
public struct CoreMLModel: Sendable {
    /// The model's parts, behind one immutable reference: copying a model (into a closure, a
    /// task, another thread) costs one retain, whatever its size.
    final class Storage: Sendable {
        let info: CoreMLModelInfo
        let plan: Plan
        let classifier: (stage: GLMClassifierStage, step: Int)?
        let text: TextInput?
        let sparsePath: SparseTextPath?

        init(info: CoreMLModelInfo, plan: Plan, classifier: (stage: GLMClassifierStage, step: Int)?, text: TextInput?,
             sparsePath: SparseTextPath?) {
            self.info = info
            self.plan = plan
            self.classifier = classifier
            self.text = text
            self.sparsePath = sparsePath
        }
    }

    let storage: Storage

    /// What the file says about the model: types, metadata, stages, labels.
    public var info: CoreMLModelInfo { storage.info }
    var plan: Plan { storage.plan }
    /// The classifier stage that gives the predicted label, and its step in the plan.
    var classifier: (stage: GLMClassifierStage, step: Int)? { storage.classifier }
    /// How a text becomes the input, when the model serves as a text classifier.
    var text: TextInput? { storage.text }
    /// The classifier's stages evaluated without intermediate values, when they allow it.
    var sparsePath: SparseTextPath? { storage.sparsePath }

    /// Loads a model file: a `.mlmodel` (protobuf), or a model archive (a zip).
    /// - Parameters:
    ///   - url: The file.
    ///   - decryptor: For an encrypted archive: decrypts its files (see ``CoreMLArchiveDecryptor``).
    /// - Throws: ``CoreMLError``: `fileNotFound`, `io`, `malformedModel` for a file that is not
    ///   a model or is damaged or too large, `invalidModel` for stages that do not fit together,
    ///   `unsupportedModelType` for a type mlkit does not evaluate, `keyUnavailable` or
    ///   `wrongKey` for an encrypted archive; or what `decryptor` throws. Every message names
    ///   the file and the stage, field or entry at fault.
    public init(contentsOf url: URL, decryptor: CoreMLArchiveDecryptor? = nil) throws {
        let data = try Self.read(url)
        try self.init(fileData: data, source: url.path, decryptor: decryptor)
    }

    /// Loads a model from the bytes of a `.mlmodel` or of a model archive: the entry point for
    /// callers that hold the bytes already, and for fuzzing.
    /// - Parameters:
    ///   - fileData: The file's bytes.
    ///   - source: A name for error messages, such as the file's path.
    ///   - decryptor: For an encrypted archive: decrypts its files.
    /// - Throws: As ``init(contentsOf:decryptor:)``.
    public init(fileData: Data, source: String? = nil, decryptor: CoreMLArchiveDecryptor? = nil) throws {
        do {
            let specification = try Self.specification(of: fileData, decryptor: decryptor)
            try self.init(specification, fileLength: fileData.count)
        } catch let error as CoreMLError {
            throw error.inFile(source)
        }
    }

    /// Reads what a model file says without preparing it for evaluation, so that it works for
    /// every model type, those mlkit does not evaluate included.
    /// - Parameters:
    ///   - url: A `.mlmodel` or model archive.
    ///   - decryptor: For an encrypted archive: decrypts its files.
    /// - Throws: As ``init(contentsOf:decryptor:)``, except for the errors of evaluation
    ///   (`invalidModel`, `unsupportedModelType`).
    public static func info(contentsOf url: URL, decryptor: CoreMLArchiveDecryptor? = nil) throws -> CoreMLModelInfo {
        try info(fileData: read(url), source: url.path, decryptor: decryptor)
    }

    /// ``info(contentsOf:decryptor:)`` of the bytes of a `.mlmodel` or of a model archive: for
    /// callers that hold the bytes already, and for fuzzing.
    /// - Parameters:
    ///   - fileData: The file's bytes.
    ///   - source: A name for error messages, such as the file's path.
    ///   - decryptor: For an encrypted archive: decrypts its files.
    /// - Throws: As ``info(contentsOf:decryptor:)``.
    public static func info(fileData: Data, source: String? = nil, decryptor: CoreMLArchiveDecryptor? = nil) throws -> CoreMLModelInfo {
        do {
            return CoreMLModelInfo(try specification(of: fileData, decryptor: decryptor))
        } catch let error as CoreMLError {
            throw error.inFile(source)
        }
    }

    /// The key identifier of an encrypted model archive, read from its clear part, or `nil`
    /// for a plain archive or a `.mlmodel`.
    /// - Parameter url: The file.
    /// - Throws: ``CoreMLError`` for a file that cannot be read, or a damaged archive.
    public static func archiveKeyIdentifier(contentsOf url: URL) throws -> String? {
        try archiveKeyIdentifier(fileData: read(url), source: url.path)
    }

    /// ``archiveKeyIdentifier(contentsOf:)`` of a file's bytes.
    /// - Parameters:
    ///   - fileData: The file's bytes.
    ///   - source: A name for error messages, such as the file's path.
    /// - Throws: ``CoreMLError`` for a damaged archive.
    public static func archiveKeyIdentifier(fileData: Data, source: String? = nil) throws -> String? {
        guard ModelArchive.isArchive(fileData) else { return nil }
        do {
            return try ModelArchive.keyIdentifier(of: fileData)
        } catch let error as CoreMLError {
            throw error.inFile(source)
        }
    }

    /// Whether `data` is a model archive (a zip file) rather than a `.mlmodel`.
    public static func isArchive(_ data: Data) -> Bool { ModelArchive.isArchive(data) }

    /// Compiles a specification.
    init(_ specification: SpecModel, fileLength: Int) throws {
        let info = CoreMLModelInfo(specification)
        let compiled = try PlanCompiler.compile(specification, fileLength: fileLength)
        storage = Storage(info: info, plan: compiled.plan, classifier: compiled.classifier,
                          text: try TextInput(info: info, plan: compiled.plan, hasClassifier: compiled.classifier != nil),
                          sparsePath: compiled.classifier.flatMap { SparseTextPath(plan: compiled.plan, classifierStep: $0.step) })
    }

    private static func specification(of data: Data, decryptor: CoreMLArchiveDecryptor?) throws -> SpecModel {
        if ModelArchive.isArchive(data) { return try ModelArchive.specification(of: data, decryptor: decryptor) }
        return try SpecificationReader.model(data)
    }

    /// A file's bytes, mapped, with this module's errors.
    private static func read(_ url: URL) throws -> Data {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw CoreMLError(.fileNotFound, "no such file", file: url.path)
        }
        guard !isFolder.boolValue else {
            throw CoreMLError(.malformedModel, "a folder, not a model file (a compiled .mlmodelc folder is not read; "
                              + "give the .mlmodel or the .mlarchive)", file: url.path)
        }
        if let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue,
           size > Limits.maximumModelSize {
            throw CoreMLError(.malformedModel, "the file has \(size) bytes, more than the \(Limits.maximumModelSize) "
                              + "a Core ML model can hold", file: url.path)
        }
        do {
            return try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw CoreMLError(.io, "cannot read the file: \(error.localizedDescription)", file: url.path)
        }
    }

    // MARK: Prediction

    /// The names and types of the features the model takes.
    public var inputs: [CoreMLFeatureDescription] { info.inputs }

    /// The labels of the classifier that gives the prediction, in the model's order.
    public var labels: [String]? { classifier?.stage.labels.names }

    /// Evaluates the model.
    /// - Parameter inputs: A value for each input the model declares (optional ones may be
    ///   left out), by name. An int64 may stand for a double.
    /// - Returns: The value of each output the model declares, by name.
    /// - Throws: ``CoreMLError`` (`invalidInput`) for a missing input, or one of the wrong type
    ///   or size, naming it; for an input a stage cannot take (an unknown category), naming
    ///   the stage. `invalidModel` for a stage or an output that would expand a sparse array
    ///   larger than the model's file justifies (2^20 elements, or the file's length in bytes).
    public func prediction(from inputs: [String: CoreMLFeatureValue]) throws -> [String: CoreMLFeatureValue] {
        var slots = try plan.slots(for: inputs)
        try plan.run(&slots)
        return try plan.outputValues(slots)
    }
}

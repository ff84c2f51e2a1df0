/// The one error type of `MLKitCoreML`.
///
/// Every error has a stable ``Code`` and a message that names the file, then the part of the
/// model at fault (the stage, the field, the archive entry):
/// `Model.mlmodel: stage 3 (glmClassifier): weights: 3 rows for 2 labels with ReferenceClass, which needs 1`.
/// New codes may be added in later versions, so a `switch` over ``code`` needs a default.
public struct CoreMLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable category of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The file is not a Core ML model or archive, or it is truncated, damaged or too large.
        public static let malformedModel = Code("malformedModel")
        /// The model is well-formed but its parts do not fit together: a stage's input that no
        /// earlier stage produces, a shape that does not match, a weight matrix of the wrong size.
        public static let invalidModel = Code("invalidModel")
        /// The model, or one of its stages, is of a type that mlkit does not evaluate (a neural
        /// network, or one of Apple's natural-language models, whose weights are not published).
        public static let unsupportedModelType = Code("unsupportedModelType")
        /// An encrypted archive was opened without a way to decrypt it.
        public static let keyUnavailable = Code("keyUnavailable")
        /// An encrypted archive did not decrypt to a model: the key's material is not the one
        /// it was encrypted with.
        public static let wrongKey = Code("wrongKey")
        /// A prediction's input is missing, or of the wrong type or shape.
        public static let invalidInput = Code("invalidInput")
        /// An mlkit model cannot be expressed in Core ML (export).
        public static let notExportable = Code("notExportable")
        /// A file does not exist.
        public static let fileNotFound = Code("fileNotFound")
        /// Reading or writing a file failed.
        public static let io = Code("io")

        /// The code's name, such as `malformedModel`.
        public var description: String { name }
    }

    /// The category of failure.
    public let code: Code
    /// The reason, without the file: it names the stage, field or entry at fault.
    public let reason: String
    /// The file at fault, as the caller named it.
    public let file: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The category of failure.
    ///   - reason: What went wrong, naming the stage, field or entry.
    ///   - file: The file at fault.
    public init(_ code: Code, _ reason: String, file: String? = nil) {
        self.code = code
        self.reason = reason
        self.file = file
    }

    /// The full message: `file: reason`.
    public var description: String {
        (file.map { "\($0): " } ?? "") + reason
    }

    /// A copy naming `file`, unless it already names one.
    func inFile(_ file: String?) -> CoreMLError {
        CoreMLError(code, reason, file: self.file ?? file)
    }
}

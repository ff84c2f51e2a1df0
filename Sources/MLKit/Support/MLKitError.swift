/// The one error type of the MLKit core.
///
/// Every error carries a stable ``Code`` that callers can switch on, and a message that
/// names what is at fault: the file, the line and column or record, and the field.
/// New codes may be added in later versions, so a `switch` over ``code`` needs a default.
///
/// The message reads like a compiler diagnostic:
/// `texts.json:3:14: record 2, field "label": expected a string, found a number`.
public struct MLKitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable category of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The input is not well-formed (JSON syntax, CSV quoting, a model file's layout).
        public static let malformedData = Code("malformedData")
        /// The input is not valid UTF-8.
        public static let invalidUTF8 = Code("invalidUTF8")
        /// A required field is missing.
        public static let missingField = Code("missingField")
        /// A field holds a value of the wrong type.
        public static let wrongType = Code("wrongType")
        /// A dataset has no examples, or too few labels to train on.
        public static let invalidDataset = Code("invalidDataset")
        /// A file or folder does not exist.
        public static let fileNotFound = Code("fileNotFound")
        /// Reading or writing a file failed.
        public static let io = Code("io")
        /// A file was written by a newer mlkit, in a format version this one does not know.
        public static let unsupportedVersion = Code("unsupportedVersion")
        /// A parameter or option has a value that cannot be used.
        public static let invalidParameter = Code("invalidParameter")
        /// A feature was asked for that this build does not include.
        public static let unavailable = Code("unavailable")

        /// The code's name, such as `malformedData`.
        public var description: String { name }
    }

    /// Where in an input the fault lies. Every field is optional; the message shows those set.
    public struct Location: Hashable, Sendable {
        /// The file's path as the caller gave it.
        public var file: String?
        /// The 1-based line.
        public var line: Int?
        /// The 1-based column, counted in bytes of UTF-8 (as compilers and `jq` count).
        public var column: Int?
        /// The 0-based index of the record (JSON object, CSV row, file) in the dataset.
        public var record: Int?
        /// The field (JSON key, CSV column, option name).
        public var field: String?

        /// Creates a location; leave unknown parts `nil`.
        public init(file: String? = nil, line: Int? = nil, column: Int? = nil,
                    record: Int? = nil, field: String? = nil) {
            self.file = file
            self.line = line
            self.column = column
            self.record = record
            self.field = field
        }
    }

    /// The category of failure.
    public let code: Code
    /// Where the fault lies, if it lies in an input.
    public let location: Location?
    /// The reason, without the location.
    public let reason: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The category of failure.
    ///   - reason: What went wrong, as a short sentence fragment without the location.
    ///   - location: Where it went wrong, when it concerns an input.
    public init(_ code: Code, _ reason: String, at location: Location? = nil) {
        self.code = code
        self.reason = reason
        self.location = location
    }

    /// The full message: `file:line:column: record N, field "f": reason`.
    public var description: String {
        guard let location else { return reason }
        var prefix = ""
        if let file = location.file {
            prefix = file
            if let line = location.line {
                prefix += ":\(line)"
                if let column = location.column { prefix += ":\(column)" }
            }
            prefix += ": "
        } else if let line = location.line {
            prefix = "line \(line)"
            if let column = location.column { prefix += ", column \(column)" }
            prefix += ": "
        }
        var context: [String] = []
        if let record = location.record { context.append("record \(record)") }
        if let field = location.field { context.append("field \"\(field)\"") }
        if !context.isEmpty { prefix += context.joined(separator: ", ") + ": " }
        return prefix + reason
    }
}

extension MLKitError {
    /// An `invalidParameter` error that names the setting at fault.
    static func invalidParameter(_ field: String, _ reason: String) -> MLKitError {
        MLKitError(.invalidParameter, reason, at: .init(field: field))
    }

    /// Returns a copy with `file` set, for readers that learn the path after parsing bytes.
    func inFile(_ file: String?) -> MLKitError {
        guard let file else { return self }
        var location = self.location ?? Location()
        location.file = file
        return MLKitError(code, reason, at: location)
    }
}

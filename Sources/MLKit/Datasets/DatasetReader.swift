public import Foundation

/// Reads labelled datasets: JSON arrays, JSON Lines, CSV files and labelled folders.
///
/// ```swift
/// let dataset = try DatasetReader().read(contentsOf: URL(filePath: "texts.json"))
///     .validatedForTraining(source: "texts.json")
/// ```
///
/// Every error is an ``MLKitError`` whose message names the file, the line and column (or
/// record) and the field at fault, such as
/// `texts.json:5:12: record 3, field "text": expected a string, found a number`.
/// In JSON the text and label must be strings; other fields are validated and ignored, and when
/// a key repeats, its last value wins.
public struct DatasetReader: Sendable {
    /// The JSON key or CSV column that holds the text. The default is `"text"`.
    public var textColumn: String
    /// The JSON key or CSV column that holds the label. The default is `"label"`.
    public var labelColumn: String
    /// What to do with text that is not valid UTF-8. The default is ``InvalidUTF8Policy/fail``.
    public var invalidUTF8: InvalidUTF8Policy

    /// Creates a reader.
    /// - Parameters:
    ///   - textColumn: The JSON key or CSV column that holds the text.
    ///   - labelColumn: The JSON key or CSV column that holds the label.
    ///   - invalidUTF8: What to do with text that is not valid UTF-8.
    public init(textColumn: String = "text", labelColumn: String = "label",
                invalidUTF8: InvalidUTF8Policy = .fail) {
        self.textColumn = textColumn
        self.labelColumn = labelColumn
        self.invalidUTF8 = invalidUTF8
    }

    /// Reads a dataset from a file or a labelled folder.
    ///
    /// Without a format, a folder is read as ``DatasetFormat/directory`` and a file by its
    /// extension: `.json` as a JSON array (or as JSON Lines if its first non-space character is
    /// `{`), `.jsonl` and `.ndjson` as JSON Lines, `.csv` as CSV.
    /// - Parameters:
    ///   - url: The file or folder. Errors name it by its `relativePath`.
    ///   - format: The format, or `nil` to infer it.
    /// - Returns: The examples in file order (folders: sorted by label, then by file name).
    /// - Throws: ``MLKitError``: `fileNotFound`, `io`, `malformedData`, `invalidUTF8`,
    ///   `missingField`, `wrongType`, `invalidDataset` (an empty file or folder), or
    ///   `invalidParameter` (an unknown extension, or the same column for text and label).
    public func read(contentsOf url: URL, format: DatasetFormat? = nil) throws -> TextDataset {
        try checkColumns()
        let source = url.relativePath
        let resolved = try format ?? Self.inferFormat(of: url, source: source)
        if resolved == .directory {
            try Self.checkExists(url, source: source)
            return TextDataset(try LabeledDirectory.labeledTexts(
                at: url, source: source, replacesInvalidUTF8: invalidUTF8 == .replace))
        }
        let data = try DatasetFile.contents(of: url, source: source)
        return try dataset(in: data, format: resolved, source: source, sniffsJSONLines: format == nil)
    }

    /// Reads a dataset from bytes in memory.
    /// - Parameters:
    ///   - data: The bytes of a JSON, JSON Lines or CSV file.
    ///   - format: Their format; ``DatasetFormat/directory`` is not allowed here.
    ///   - source: A name for the bytes in error messages, such as the file they came from.
    /// - Returns: The examples in input order.
    /// - Throws: ``MLKitError``, as ``read(contentsOf:format:)`` does.
    public func read(data: Data, format: DatasetFormat, source: String? = nil) throws -> TextDataset {
        try checkColumns()
        return try dataset(in: data, format: format, source: source, sniffsJSONLines: false)
    }

    /// Reads word-tagger examples: Create ML's `{"tokens": [...], "labels": [...]}` rows, as a
    /// JSON array or JSON Lines, or `word/TAG` text (one sentence per line, ``DatasetFormat/wordTags``).
    /// - Parameters:
    ///   - url: The file. Its format goes by its extension, as ``read(contentsOf:format:)`` says;
    ///     `.txt` and `.tagged` are `word/TAG` text.
    ///   - tokensKey: The key of the token array (JSON only).
    ///   - labelsKey: The key of the label array (JSON only).
    /// - Returns: The examples in file order; each has at least one token and as many labels as
    ///   tokens.
    /// - Throws: ``MLKitError`` naming the file, line, column, record and field, as
    ///   ``read(contentsOf:format:)`` does; `malformedData` for a row whose token and label counts
    ///   differ, an empty row, or a `word/TAG` token without its tag.
    public func readTaggedTokens(contentsOf url: URL, tokensKey: String = "tokens",
                                 labelsKey: String = "labels") throws -> [TaggedTokens] {
        let source = url.relativePath
        let format = try Self.inferFormat(of: url, source: source)
        try Self.checkTaggedFormat(format, source: source)
        let data = try DatasetFile.contents(of: url, source: source)
        return try taggedTokens(in: data, format: format, source: source, sniffsJSONLines: true,
                                keys: (tokensKey, labelsKey))
    }

    /// Reads word-tagger examples from bytes in memory.
    /// - Parameters:
    ///   - data: The bytes of a JSON array, JSON Lines or `word/TAG` file.
    ///   - format: ``DatasetFormat/jsonArray``, ``DatasetFormat/jsonLines`` or ``DatasetFormat/wordTags``.
    ///   - source: A name for the bytes in error messages.
    ///   - tokensKey: The key of the token array.
    ///   - labelsKey: The key of the label array.
    /// - Returns: The examples in input order.
    /// - Throws: ``MLKitError``, as ``readTaggedTokens(contentsOf:tokensKey:labelsKey:)`` does.
    public func readTaggedTokens(data: Data, format: DatasetFormat = .jsonArray, source: String? = nil,
                                 tokensKey: String = "tokens",
                                 labelsKey: String = "labels") throws -> [TaggedTokens] {
        try taggedTokens(in: data, format: format, source: source, sniffsJSONLines: false,
                         keys: (tokensKey, labelsKey))
    }

    /// Whether a file holds word-tagger data rather than text-classification data: `word/TAG`
    /// text, or JSON whose first record has the key `tokensKey`. `mlkit train` uses it to choose
    /// what to train.
    /// - Parameters:
    ///   - url: The file or folder.
    ///   - tokensKey: The key of the token array.
    /// - Returns: `true` for word-tagger data; `false` for anything else, including a folder, a
    ///   CSV file and a JSON file that is empty or malformed (whose reader then reports the problem).
    /// - Throws: ``MLKitError``: `fileNotFound`, `io`, or `invalidParameter` for an unknown extension.
    public func holdsTaggedTokens(at url: URL, tokensKey: String = "tokens") throws -> Bool {
        let source = url.relativePath
        let format = try Self.inferFormat(of: url, source: source)
        if format == .wordTags { return true }
        guard format.isJSON else { return false }
        let data = try DatasetFile.contents(of: url, source: source)
        return data.withUnsafeBytes { raw in
            var scanner = JSONScanner(bytes: raw.assumingMemoryBound(to: UInt8.self), file: source, replacesInvalidText: true)
            scanner.skipWhitespace()
            if scanner.current == JSONByte.openBracket {
                scanner.advance()
                scanner.skipWhitespace()
            }
            guard scanner.current == JSONByte.openBrace,
                  let (tokens, _) = try? scanner.readRecord(keys: [Array(tokensKey.utf8)],
                                                            first: { try $0.skipField() }, second: { try $0.skipField() })
            else { return false }
            if case .missing = tokens { return false }
            return true
        }
    }
}

// MARK: - Parsing

extension DatasetReader {
    private var replaces: Bool { invalidUTF8 == .replace }

    private func dataset(in data: Data, format: DatasetFormat, source: String?,
                         sniffsJSONLines: Bool) throws -> TextDataset {
        try data.withUnsafeBytes { raw in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            switch format {
            case .csv:
                return TextDataset(try CSVReader.labeledTexts(in: bytes, file: source,
                                                              columns: (textColumn, labelColumn),
                                                              replacesInvalidUTF8: replaces))
            case .jsonArray, .jsonLines:
                var scanner = JSONScanner(bytes: bytes, file: source, replacesInvalidText: replaces)
                let layout = Self.layout(of: format, scanner: scanner, sniffing: sniffsJSONLines)
                return try JSONRecords.labeledTexts(in: &scanner, layout: layout,
                                                    fields: (textColumn, labelColumn))
            case .directory:
                throw MLKitError(.invalidParameter, "a directory dataset must be read from a folder",
                                 at: .init(file: source, field: "format"))
            case .wordTags:
                throw MLKitError(.invalidParameter, "word/TAG text holds word-tagger data, not labelled texts; "
                                 + "train a word tagger on it", at: .init(file: source, field: "format"))
            }
        }
    }

    private func taggedTokens(in data: Data, format: DatasetFormat, source: String?, sniffsJSONLines: Bool,
                              keys: (tokens: String, labels: String)) throws -> [TaggedTokens] {
        try Self.checkTaggedFormat(format, source: source)
        return try data.withUnsafeBytes { raw in
            if format == .wordTags {
                return try WordTagText.taggedTokens(in: raw.assumingMemoryBound(to: UInt8.self), file: source,
                                                    replacesInvalidUTF8: replaces)
            }
            var scanner = JSONScanner(bytes: raw.assumingMemoryBound(to: UInt8.self), file: source,
                                      replacesInvalidText: replaces)
            let layout = Self.layout(of: format, scanner: scanner, sniffing: sniffsJSONLines)
            return try JSONRecords.taggedTokens(in: &scanner, layout: layout, fields: keys)
        }
    }

    /// The record layout of a JSON format; a JSON array file that starts with `{` is read as
    /// JSON Lines when `sniffing`.
    private static func layout(of format: DatasetFormat, scanner: JSONScanner,
                               sniffing: Bool) -> JSONRecords.Layout {
        if format == .jsonLines { return .lines }
        var probe = scanner
        probe.skipWhitespace()
        return sniffing && probe.current == JSONByte.openBrace ? .lines : .array
    }

    private static func checkTaggedFormat(_ format: DatasetFormat, source: String?) throws {
        guard format.isJSON || format == .wordTags else {
            throw MLKitError(.invalidParameter,
                             "word-tagger data must be a JSON array, JSON Lines or word/TAG text, not \(format.rawValue)",
                             at: .init(file: source, field: "format"))
        }
    }

    private func checkColumns() throws {
        guard textColumn != labelColumn else {
            throw MLKitError(.invalidParameter,
                             "the text and the label must be different columns (both are \"\(textColumn)\")",
                             at: .init(field: "labelColumn"))
        }
    }

    private static func checkExists(_ url: URL, source: String) throws {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw MLKitError(.fileNotFound, "no such file or folder", at: .init(file: source))
        }
    }

    /// The format of `url`: a folder is a directory dataset, a file goes by its extension.
    private static func inferFormat(of url: URL, source: String) throws -> DatasetFormat {
        try checkExists(url, source: source)
        if DatasetFile.isFolder(url) { return .directory }
        if let format = DatasetFormat(fileExtension: url.pathExtension) { return format }
        throw MLKitError(.invalidParameter,
                         "cannot tell the format from the extension \"\(url.pathExtension)\"; "
                         + "use .json, .jsonl, .ndjson or .csv (or .txt for word/TAG text), or name the format",
                         at: .init(file: source))
    }
}

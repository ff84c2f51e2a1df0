/// Reads CSV with a header row (RFC 4180): fields separated by commas, records by CRLF or LF,
/// quoted fields that may hold commas, line breaks and doubled quotes (`""`).
///
/// Columns are found by name in the header (the first one wins if a name repeats). Blank lines
/// are skipped. A record's line is the line where it starts.
struct CSVReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let file: String?
    private var offset: Int
    private var line = 1

    private static let quote = UInt8(ascii: "\"")
    private static let comma = UInt8(ascii: ",")
    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    private init(bytes: UnsafeBufferPointer<UInt8>, file: String?) {
        self.bytes = bytes
        self.file = file
        self.offset = bytes.offsetAfterByteOrderMark
    }

    /// Reads text-classification examples from the columns named `columns`.
    /// - Parameters:
    ///   - replacesInvalidUTF8: Whether ill-formed UTF-8 becomes U+FFFD instead of an error.
    static func labeledTexts(in bytes: UnsafeBufferPointer<UInt8>, file: String?,
                             columns: (text: String, label: String),
                             replacesInvalidUTF8: Bool) throws -> [LabeledText] {
        var reader = CSVReader(bytes: bytes, file: file)
        if !replacesInvalidUTF8 { try reader.validateUTF8() }
        reader.skipBlankLines()
        guard reader.offset < bytes.count else {
            throw MLKitError(.invalidDataset, "the file is empty", at: file.map { .init(file: $0) })
        }
        let headerLine = reader.line
        let header = try reader.readHeader()
        let textIndex = try reader.column(columns.text, in: header, line: headerLine)
        let labelIndex = try reader.column(columns.label, in: header, line: headerLine)
        var examples: [LabeledText] = []
        while true {
            reader.skipBlankLines()
            guard reader.offset < bytes.count else { return examples }
            let recordLine = reader.line
            let (count, text, label) = try reader.readRecord(keeping: (textIndex, labelIndex))
            guard count == header.count, let text, let label else {
                throw MLKitError(.malformedData, "expected \(header.count) fields, found \(count)",
                                 at: .init(file: file, line: recordLine, record: examples.count))
            }
            examples.append(LabeledText(text: text, label: label))
        }
    }

    private func validateUTF8() throws {
        let start = offset
        guard let bad = UTF8Validation.firstInvalidOffset(in: bytes, range: start ..< bytes.count) else {
            return
        }
        throw error("invalid UTF-8 (byte \(bytes[bad].hex))", code: .invalidUTF8, at: bad)
    }

    private func column(_ name: String, in header: [String], line: Int) throws -> Int {
        if let index = header.firstIndex(of: name) { return index }
        let names = header.map { "\"\($0)\"" }.joined(separator: ", ")
        throw MLKitError(.missingField, "no such column; the header has \(names)",
                         at: .init(file: file, line: line, field: name))
    }

    private func error(_ reason: String, code: MLKitError.Code = .malformedData,
                       at offset: Int) -> MLKitError {
        let start = bytes.offsetAfterByteOrderMark
        let position = SourcePosition(of: offset, in: bytes, firstByte: start)
        return MLKitError(code, reason, at: .init(file: file, line: position.line, column: position.column))
    }
}

// MARK: - Records and fields

extension CSVReader {
    private mutating func readHeader() throws -> [String] {
        var names: [String] = []
        var atEnd = false
        while !atEnd {
            let (name, isLast) = try readField(keeping: true)
            names.append(name ?? "")
            atEnd = isLast
        }
        return names
    }

    /// Reads one record, building the text of the two fields at `columns` only.
    /// - Returns: The number of fields, and the two fields' text if the record has them.
    private mutating func readRecord(keeping columns: (Int, Int)) throws -> (Int, String?, String?) {
        var count = 0
        var first: String?, second: String?
        var atEnd = false
        while !atEnd {
            let keep = count == columns.0 || count == columns.1
            let (text, isLast) = try readField(keeping: keep)
            if count == columns.0 { first = text }
            if count == columns.1 { second = text }
            count += 1
            atEnd = isLast
        }
        return (count, first, second)
    }

    /// Reads one field and the separator after it.
    /// - Returns: The field's text (if `keep`), and whether it ended its record.
    private mutating func readField(keeping keep: Bool) throws -> (String?, Bool) {
        let text = offset < bytes.count && bytes[offset] == Self.quote
            ? try readQuotedField(keeping: keep)
            : try readPlainField(keeping: keep)
        guard offset < bytes.count else { return (text, true) }
        switch bytes[offset] {
        case Self.comma:
            offset += 1
            return (text, false)
        case Self.lineFeed:
            consumeLineBreak(length: 1)
            return (text, true)
        case Self.carriageReturn where offset + 1 < bytes.count && bytes[offset + 1] == Self.lineFeed:
            consumeLineBreak(length: 2)
            return (text, true)
        default:
            throw error("expected ',' or end of line after a quoted field, found "
                        + bytes.describeCharacter(at: offset), at: offset)
        }
    }

    /// Reads an unquoted field, up to a comma, a line break or the end of the input.
    private mutating func readPlainField(keeping keep: Bool) throws -> String? {
        let start = offset
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == Self.comma || byte == Self.lineFeed { break }
            if byte == Self.carriageReturn, offset + 1 < bytes.count, bytes[offset + 1] == Self.lineFeed {
                break
            }
            if byte == Self.quote {
                throw error("unexpected '\"' in an unquoted field (a field holding quotes must be quoted, "
                            + "with each quote doubled)", at: offset)
            }
            offset += 1
        }
        return keep ? bytes.string(start ..< offset) : nil
    }

    /// Reads a quoted field from its opening quote to its closing quote.
    private mutating func readQuotedField(keeping keep: Bool) throws -> String? {
        let opening = offset
        offset += 1
        var text: [UInt8] = []
        var runStart = offset
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == Self.quote {
                let isDoubled = offset + 1 < bytes.count && bytes[offset + 1] == Self.quote
                if keep { text.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart ..< offset])) }
                offset += 1
                guard isDoubled else { return keep ? String(decoding: text, as: UTF8.self) : nil }
                runStart = offset
                offset += 1
            } else {
                if byte == Self.lineFeed { line += 1 }
                offset += 1
            }
        }
        throw error("unterminated quoted field: no closing '\"' before the end of the file", at: opening)
    }

    private mutating func consumeLineBreak(length: Int) {
        offset += length
        line += 1
    }

    /// Skips lines that are empty (a line of spaces is not blank: it is a one-field record).
    private mutating func skipBlankLines() {
        while offset < bytes.count {
            if bytes[offset] == Self.lineFeed {
                consumeLineBreak(length: 1)
            } else if bytes[offset] == Self.carriageReturn, offset + 1 < bytes.count,
                      bytes[offset + 1] == Self.lineFeed {
                consumeLineBreak(length: 2)
            } else {
                return
            }
        }
    }
}

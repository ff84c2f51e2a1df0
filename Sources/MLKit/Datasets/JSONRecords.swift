/// Reads datasets of JSON records (one object per example) with ``JSONScanner``: a top-level
/// array of objects, or JSON Lines (one object per line; blank lines skipped).
enum JSONRecords {
    /// How the records are laid out in the file.
    enum Layout {
        /// One top-level array of objects.
        case array
        /// One object per line.
        case lines
    }

    /// Reads a text-classification dataset.
    /// - Parameters:
    ///   - fields: The key of the text and the key of the label.
    static func labeledTexts(in scanner: inout JSONScanner, layout: Layout,
                             fields: (text: String, label: String)) throws -> TextDataset {
        let keys = [Array(fields.text.utf8), Array(fields.label.utf8)]
        var examples: [LabeledText] = []
        var labels = LabelInterner()
        try scanner.forEachRecord(layout: layout) { scanner, record in
            let start = scanner.position
            let (text, label) = try scanner.readRecord(keys: keys, first: { try $0.readStringField() },
                                                       second: { try $0.readLabelField(&labels) })
            let context = FieldContext(record: record, recordStart: start)
            examples.append(LabeledText(text: try scanner.require(text, named: fields.text, context),
                                        label: try scanner.require(label, named: fields.label, context)))
        }
        return TextDataset(examples, distinctLabels: labels.labels)
    }

    /// Reads word-tagger examples, checking that each has as many labels as tokens.
    /// - Parameters:
    ///   - fields: The key of the tokens and the key of the labels.
    static func taggedTokens(in scanner: inout JSONScanner, layout: Layout,
                             fields: (tokens: String, labels: String)) throws -> [TaggedTokens] {
        let keys = [Array(fields.tokens.utf8), Array(fields.labels.utf8)]
        var examples: [TaggedTokens] = []
        var interner = LabelInterner()
        try scanner.forEachRecord(layout: layout) { scanner, record in
            let start = scanner.position
            let (tokens, labels) = try scanner.readRecord(keys: keys, first: { try $0.readStringArrayField() },
                                                          second: { try $0.readLabelArrayField(&interner) })
            let context = FieldContext(record: record, recordStart: start)
            let example = TaggedTokens(tokens: try scanner.require(tokens, named: fields.tokens, context),
                                       labels: try scanner.require(labels, named: fields.labels, context))
            guard example.tokens.count == example.labels.count else {
                throw scanner.error("\"\(fields.tokens)\" has \(example.tokens.count) items "
                                    + "but \"\(fields.labels)\" has \(example.labels.count)",
                                    at: start, record: record)
            }
            guard !example.tokens.isEmpty else {
                throw scanner.error("the row is empty: a sentence needs at least one token", at: start,
                                    record: record, field: fields.tokens)
            }
            examples.append(example)
        }
        return examples
    }
}

/// What a record held under one of the keys asked for.
enum FieldValue<Value> {
    /// The key did not occur.
    case missing
    /// The key's last value, of the expected type.
    case value(Value)
    /// The key's last value had the wrong type: the reason, and where the value starts.
    case wrongType(String, SourcePosition)
}

/// The record being read, for error messages.
struct FieldContext {
    /// The 0-based index of the record.
    var record: Int
    /// Where the record's opening brace is.
    var recordStart: SourcePosition
}

extension JSONScanner {
    /// Calls `body` at the opening brace of each record, with the record's 0-based index.
    /// `body` must consume the record.
    /// - Throws: "the file is empty" when there is nothing but whitespace.
    mutating func forEachRecord(layout: JSONRecords.Layout,
                                _ body: (inout JSONScanner, Int) throws -> Void) throws {
        skipWhitespace()
        guard !isAtEnd else {
            throw MLKitError(.invalidDataset, "the file is empty", at: file.map { .init(file: $0) })
        }
        switch layout {
        case .array: try forEachRecordInArray(body)
        case .lines: try forEachRecordInLines(body)
        }
    }

    private mutating func forEachRecordInArray(_ body: (inout JSONScanner, Int) throws -> Void) throws {
        guard current == JSONByte.openBracket else {
            throw error("expected a JSON array of objects, found \(describeValue())")
        }
        advance()
        var record = 0
        while try nextElement(isFirst: record == 0) {
            try checkRecordStart(record)
            try body(&self, record)
            record += 1
        }
        skipWhitespace()
        guard isAtEnd else { throw unexpected("end of file after the array") }
    }

    private mutating func forEachRecordInLines(_ body: (inout JSONScanner, Int) throws -> Void) throws {
        var record = 0
        while !isAtEnd {
            try checkRecordStart(record)
            try body(&self, record)
            record += 1
            skipSpacesInLine()
            guard isAtEnd || current == JSONByte.lineFeed else {
                throw unexpected("end of line after the record")
            }
            skipWhitespace()
        }
    }

    private func checkRecordStart(_ record: Int) throws {
        guard current == JSONByte.openBrace else {
            throw error("expected an object, found \(describeValue())", record: record)
        }
    }

    /// Reads the object at the next byte, keeping the last value of each of the two `keys`
    /// (so a repeated key's last value wins) and skipping every other member.
    /// - Parameters:
    ///   - first: Reads the value of the first key.
    ///   - second: Reads the value of the second key.
    mutating func readRecord<First, Second>(
        keys: [[UInt8]],
        first readFirst: (inout JSONScanner) throws -> FieldValue<First>,
        second readSecond: (inout JSONScanner) throws -> FieldValue<Second>
    ) throws -> (FieldValue<First>, FieldValue<Second>) {
        advance()
        var first = FieldValue<First>.missing
        var second = FieldValue<Second>.missing
        var isFirst = true
        while try nextMember(isFirst: isFirst) {
            isFirst = false
            switch try readKey(matching: keys) {
            case 0: first = try readFirst(&self)
            case 1: second = try readSecond(&self)
            default: try skipValue()
            }
        }
        return (first, second)
    }

    /// Reads a string value; any other value is skipped and reported as the wrong type.
    mutating func readStringField() throws -> FieldValue<String> {
        guard current == JSONByte.quote else { return try skipWrongType("a string") }
        return .value(try readString())
    }

    /// Reads a string value as one of the dataset's labels, so that equal labels share one
    /// `String`; any other value is skipped and reported as the wrong type.
    mutating func readLabelField(_ labels: inout LabelInterner) throws -> FieldValue<String> {
        guard current == JSONByte.quote else { return try skipWrongType("a string") }
        switch try scanString(keepingEscapedText: true) {
        case .raw(let range):
            let text = UnsafeBufferPointer(rebasing: bytes[range])
            return .value(labels.label(for: text) { bytes.string(range) })
        case .decoded(let text):
            return .value(labels.label(for: text))
        }
    }

    /// Reads an array of strings; any other value is skipped and reported as the wrong type.
    mutating func readStringArrayField() throws -> FieldValue<[String]> {
        try readStringArray { try $0.readString() }
    }

    /// Reads an array of labels, so that equal labels share one `String`; any other value is
    /// skipped and reported as the wrong type.
    mutating func readLabelArrayField(_ labels: inout LabelInterner) throws -> FieldValue<[String]> {
        try readStringArray { scanner in
            guard case .value(let label) = try scanner.readLabelField(&labels) else {
                preconditionFailure("an array element that starts with a quote is a string")
            }
            return label
        }
    }

    /// Reads an array whose elements are strings, each with `readElement` at its opening quote.
    private mutating func readStringArray(_ readElement: (inout JSONScanner) throws -> String) throws -> FieldValue<[String]> {
        guard current == JSONByte.openBracket else { return try skipWrongType("an array of strings") }
        advance()
        var strings: [String] = []
        var problem: FieldValue<[String]>?
        var index = 0
        while try nextElement(isFirst: index == 0) {
            if problem == nil && current == JSONByte.quote {
                strings.append(try readElement(&self))
            } else {
                if problem == nil {
                    let found = "\(describeValue()) at index \(index)"
                    problem = .wrongType("expected an array of strings, found \(found)", position)
                }
                try skipValue()
            }
            index += 1
        }
        return problem ?? .value(strings)
    }

    /// Skips a value of any type, for a caller that only asks whether a key is there.
    mutating func skipField() throws -> FieldValue<Void> {
        try skipValue()
        return .value(())
    }

    private mutating func skipWrongType<Value>(_ expected: String) throws -> FieldValue<Value> {
        let start = position
        let found = describeValue()
        try skipValue()
        return .wrongType("expected \(expected), found \(found)", start)
    }

    /// The value of a field, or the error for a missing field or a value of the wrong type.
    func require<Value>(_ field: FieldValue<Value>, named name: String,
                        _ context: FieldContext) throws -> Value {
        switch field {
        case .value(let value):
            return value
        case .missing:
            throw error("missing", code: .missingField, at: context.recordStart,
                        record: context.record, field: name)
        case .wrongType(let reason, let start):
            throw error(reason, code: .wrongType, at: start, record: context.record, field: name)
        }
    }
}

/// A byte-level JSON scanner (RFC 8259) that tracks the line and column of every error.
///
/// It reads a buffer that the caller keeps alive and moves through it one token at a time.
/// Everything it passes over is validated, including the values it skips: strings with all their
/// escapes and their UTF-8, numbers, `true`/`false`/`null`, and nested arrays and objects, to any
/// depth (skipping keeps its own small stack, so deep nesting cannot overflow the call stack).
///
/// Strings without escapes are never copied byte by byte: the scanner validates them in place and
/// makes a `String` from the whole slice at once.
struct JSONScanner {
    /// The input.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The file named in errors.
    let file: String?
    /// Whether ill-formed UTF-8 and unpaired surrogate escapes become U+FFFD instead of errors.
    let replacesInvalidText: Bool
    /// The offset of the next byte to read.
    private(set) var offset: Int
    /// The 1-based line of `offset`.
    private var line = 1
    /// The offset where the current line starts.
    private var lineStart: Int

    /// Creates a scanner at the start of `bytes`, after a UTF-8 byte-order mark if there is one.
    init(bytes: UnsafeBufferPointer<UInt8>, file: String?, replacesInvalidText: Bool) {
        self.bytes = bytes
        self.file = file
        self.replacesInvalidText = replacesInvalidText
        self.offset = bytes.offsetAfterByteOrderMark
        self.lineStart = offset
    }

    /// The line and column of the next byte.
    var position: SourcePosition { SourcePosition(line: line, column: offset - lineStart + 1) }

    /// The next byte, or `nil` at the end of the input.
    var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    /// Whether the whole input has been read.
    var isAtEnd: Bool { offset >= bytes.count }
}

// MARK: - Errors

extension JSONScanner {
    /// An error at `position` (by default, the next byte).
    func error(_ reason: String, code: MLKitError.Code = .malformedData,
               at position: SourcePosition? = nil, record: Int? = nil,
               field: String? = nil) -> MLKitError {
        let location = position ?? self.position
        return MLKitError(code, reason, at: .init(file: file, line: location.line, column: location.column,
                                                  record: record, field: field))
    }

    /// A syntax error at the next byte: `expected <expectation>, found <the next character>`.
    func unexpected(_ expectation: String) -> MLKitError {
        error("expected \(expectation), found \(bytes.describeCharacter(at: offset))")
    }

    /// Describes the value that starts at the next byte (`a string`, `an object`, ...), or the
    /// character there if no value starts there.
    func describeValue() -> String {
        guard let byte = current else { return "end of file" }
        switch byte {
        case JSONByte.quote: return "a string"
        case JSONByte.openBrace: return "an object"
        case JSONByte.openBracket: return "an array"
        case JSONByte.minus, JSONByte.zero...JSONByte.nine: return "a number"
        case UInt8(ascii: "t") where hasLiteral("true"), UInt8(ascii: "f") where hasLiteral("false"):
            return "a boolean"
        case UInt8(ascii: "n") where hasLiteral("null"): return "null"
        default: return bytes.describeCharacter(at: offset)
        }
    }

    private func hasLiteral(_ word: String) -> Bool {
        var index = offset
        for expected in word.utf8 {
            guard index < bytes.count, bytes[index] == expected else { return false }
            index += 1
        }
        return true
    }
}

// MARK: - Whitespace and structure

extension JSONScanner {
    /// Skips spaces, tabs, carriage returns and line feeds, counting lines.
    mutating func skipWhitespace() {
        var index = offset
        while index < bytes.count {
            let byte = bytes[index]
            if byte == JSONByte.space {
                index += 1
            } else if byte > JSONByte.space {
                break
            } else if byte == JSONByte.tab || byte == JSONByte.carriageReturn {
                index += 1
            } else if byte == JSONByte.lineFeed {
                index += 1
                line += 1
                lineStart = index
            } else {
                break
            }
        }
        offset = index
    }

    /// Skips spaces, tabs and carriage returns, stopping at a line feed.
    mutating func skipSpacesInLine() {
        while let byte = current,
              byte == JSONByte.space || byte == JSONByte.tab || byte == JSONByte.carriageReturn {
            offset += 1
        }
    }

    /// Consumes the byte at `offset`, which the caller has checked.
    mutating func advance() { offset += 1 }

    /// After an object's `{` or one of its members: moves to the next key's opening quote and
    /// returns `true`, or consumes the closing `}` and returns `false`.
    mutating func nextMember(isFirst: Bool) throws -> Bool {
        skipWhitespace()
        let byte = current
        if byte == JSONByte.closeBrace {
            offset += 1
            return false
        }
        if isFirst {
            guard byte == JSONByte.quote else { throw unexpected("a string key or '}'") }
            return true
        }
        guard byte == JSONByte.comma else { throw unexpected("',' or '}' after an object member") }
        offset += 1
        skipWhitespace()
        guard current == JSONByte.quote else { throw unexpected("a string key") }
        return true
    }

    /// After an array's `[` or one of its elements: moves to the next element and returns `true`,
    /// or consumes the closing `]` and returns `false`.
    mutating func nextElement(isFirst: Bool) throws -> Bool {
        skipWhitespace()
        let byte = current
        if byte == JSONByte.closeBracket {
            offset += 1
            return false
        }
        if isFirst {
            guard byte != nil else { throw unexpected("a value or ']'") }
            return true
        }
        guard byte == JSONByte.comma else { throw unexpected("',' or ']' after an array element") }
        offset += 1
        skipWhitespace()
        return true
    }

    /// At a key's opening quote: reads the key and the `:` after it, and moves to the value.
    /// - Returns: The index in `names` of the first name equal to the key, or `nil`.
    mutating func readKey(matching names: [[UInt8]]) throws -> Int? {
        let key = try scanString(keepingEscapedText: !names.isEmpty)
        skipWhitespace()
        guard current == JSONByte.colon else { throw unexpected("':' after an object key") }
        offset += 1
        skipWhitespace()
        switch key {
        case .raw(let range): return names.firstIndex { bytes.hasBytes(of: $0, at: range) }
        case .decoded(let text): return names.firstIndex { $0.elementsEqual(text.utf8) }
        }
    }
}

// MARK: - Values

extension JSONScanner {
    /// Validates and skips the value at the next byte, with everything nested in it.
    mutating func skipValue() throws {
        var containers: [Container] = []
        while true {
            if let opened = try skipScalarOrOpen() {
                containers.append(opened)
                if opened == .object { _ = try readKey(matching: []) }
                continue
            }
            while let container = containers.last {
                if container == .object {
                    if try nextMember(isFirst: false) { _ = try readKey(matching: []); break }
                } else if try nextElement(isFirst: false) {
                    break
                }
                containers.removeLast()
            }
            if containers.isEmpty { return }
        }
    }

    private enum Container { case object, array }

    /// Skips a scalar or an empty container and returns `nil`, or consumes the opening bracket of
    /// a non-empty container, moves to its first key or element, and returns its kind.
    private mutating func skipScalarOrOpen() throws -> Container? {
        guard let byte = current else { throw unexpected("a value") }
        switch byte {
        case JSONByte.openBrace:
            offset += 1
            return try nextMember(isFirst: true) ? .object : nil
        case JSONByte.openBracket:
            offset += 1
            return try nextElement(isFirst: true) ? .array : nil
        case JSONByte.quote: _ = try scanString(keepingEscapedText: false)
        case JSONByte.minus, JSONByte.zero...JSONByte.nine: try skipNumber()
        case UInt8(ascii: "t"): try skipLiteral("true")
        case UInt8(ascii: "f"): try skipLiteral("false")
        case UInt8(ascii: "n"): try skipLiteral("null")
        default: throw unexpected("a value")
        }
        return nil
    }

    /// Skips a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func skipNumber() throws {
        if current == JSONByte.minus { offset += 1 }
        if current == JSONByte.zero {
            offset += 1
        } else {
            try skipDigits()
        }
        if current == JSONByte.dot {
            offset += 1
            try skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            offset += 1
            if current == JSONByte.plus || current == JSONByte.minus { offset += 1 }
            try skipDigits()
        }
    }

    /// Skips one or more decimal digits.
    private mutating func skipDigits() throws {
        guard let first = current, JSONByte.isDigit(first) else {
            throw unexpected("a digit in a number")
        }
        offset += 1
        while let byte = current, JSONByte.isDigit(byte) { offset += 1 }
    }

    private mutating func skipLiteral(_ word: String) throws {
        for expected in word.utf8 {
            guard current == expected else { throw unexpected("'\(word)'") }
            offset += 1
        }
    }
}

// MARK: - Strings

extension JSONScanner {
    /// Where a scanned string's text lies.
    enum StringToken {
        /// The string had no escapes: its text is these input bytes.
        case raw(Range<Int>)
        /// The string had escapes: its decoded text (empty when it was not kept).
        case decoded(String)
    }

    /// Reads the string at the next byte (its opening quote) as a `String`.
    mutating func readString() throws -> String {
        switch try scanString(keepingEscapedText: true) {
        case .raw(let range): return bytes.string(range)
        case .decoded(let text): return text
        }
    }

    /// Scans the string at the next byte (its opening quote) and moves past its closing quote.
    /// - Parameter keep: Whether to build the decoded text of a string with escapes.
    mutating func scanString(keepingEscapedText keep: Bool) throws -> StringToken {
        let start = offset + 1
        offset = endOfPlainText(from: start)
        switch current {
        case JSONByte.quote:
            offset += 1
            return .raw(start ..< offset - 1)
        case JSONByte.backslash:
            guard keep else {
                try decodeEscapedText(from: start, into: nil)
                return .decoded("")
            }
            // The decoded text is never longer than the input up to the closing quote, so it is
            // decoded straight into the new string's storage.
            let capacity = JSONByte.endOfEscapedString(in: bytes, from: offset) - start
            let text = try String(unsafeUninitializedCapacity: capacity) { buffer in
                try decodeEscapedText(from: start, into: buffer.baseAddress)
            }
            return .decoded(text)
        default:
            throw plainTextError()
        }
    }

    /// Continues a string at its first backslash, decoding the text from `start` (the byte
    /// after the opening quote) into `output` when it is not `nil`, and moves past the closing quote.
    /// - Returns: The number of bytes written to `output`.
    @discardableResult
    private mutating func decodeEscapedText(from start: Int, into output: UnsafeMutablePointer<UInt8>?) throws -> Int {
        var written = 0
        var runStart = start
        while true {
            let byte = current
            guard byte == JSONByte.quote || byte == JSONByte.backslash else { throw plainTextError() }
            if let output, offset > runStart {
                (output + written).update(from: bytes.baseAddress! + runStart, count: offset - runStart)
                written += offset - runStart
            }
            if byte == JSONByte.quote {
                offset += 1
                return written
            }
            // `\/`, `\"` and `\\` decode to their second byte; other escapes take the slow path.
            if offset + 1 < bytes.count, JSONByte.isSelfEscape(bytes[offset + 1]) {
                output?[written] = bytes[offset + 1]
                written += 1
                offset += 2
            } else {
                try decodeEscape(into: output, at: &written)
            }
            runStart = offset
            offset = endOfPlainText(from: offset)
        }
    }

    /// The offset of the first byte at or after `start` that ends a run of plain string text:
    /// a quote, a backslash, a control character, ill-formed UTF-8 (unless it is being replaced),
    /// or the end of the input.
    @inline(__always)
    private func endOfPlainText(from start: Int) -> Int {
        var index = start
        while true {
            index = JSONByte.endOfPlainRun(in: bytes, from: index)
            guard index < bytes.count, bytes[index] >= 0x80 else { return index }
            let length = UTF8Validation.sequenceLength(in: bytes, at: index)
            if length > 0 {
                index += length
            } else if replacesInvalidText {
                index += 1
            } else {
                return index
            }
        }
    }

    /// The error for the byte where plain text stopped, other than a quote or a backslash.
    private func plainTextError() -> MLKitError {
        guard let byte = current else { return unexpected("'\"' to end the string") }
        if byte >= 0x80 { return error("invalid UTF-8 (byte \(byte.hex))", code: .invalidUTF8) }
        return controlCharacterError()
    }

    private func controlCharacterError() -> MLKitError {
        let byte = bytes[offset]
        if byte == JSONByte.lineFeed || byte == JSONByte.carriageReturn {
            return unexpected("'\"' to end the string")
        }
        return error("control character \(byte.hex) must be escaped in a string")
    }

    /// Decodes the escape at the next byte (a backslash), writing its UTF-8 to `output` at
    /// `written` when `output` is not `nil`.
    private mutating func decodeEscape(into output: UnsafeMutablePointer<UInt8>?, at written: inout Int) throws {
        let escapeStart = offset
        offset += 1
        let decoded: UInt8
        switch current {
        case JSONByte.quote, JSONByte.backslash, JSONByte.slash: decoded = bytes[offset]
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = JSONByte.lineFeed
        case UInt8(ascii: "r"): decoded = JSONByte.carriageReturn
        case UInt8(ascii: "t"): decoded = JSONByte.tab
        case UInt8(ascii: "u"):
            offset += 1
            let scalar = try decodeUnicodeEscape(startingAt: escapeStart)
            if let output {
                UTF8.encode(scalar) { unit in
                    output[written] = unit
                    written += 1
                }
            }
            return
        default: throw unexpected("an escape character after '\\'")
        }
        offset += 1
        if let output {
            output[written] = decoded
            written += 1
        }
    }

    /// Decodes the four hex digits after `\u`, and a second `\uXXXX` when the first is a high
    /// surrogate.
    /// - Parameter escapeStart: The offset of the first escape's backslash, for the error.
    private mutating func decodeUnicodeEscape(startingAt escapeStart: Int) throws -> Unicode.Scalar {
        let unit = try readHexQuad()
        if (0xD800 ..< 0xDC00).contains(unit), offset + 1 < bytes.count,
           bytes[offset] == JSONByte.backslash, bytes[offset + 1] == UInt8(ascii: "u") {
            let secondEscape = offset
            offset += 2
            let low = try readHexQuad()
            if (0xDC00 ..< 0xE000).contains(low),
               let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) {
                return scalar
            }
            offset = secondEscape
        }
        if let scalar = Unicode.Scalar(unit) { return scalar }
        if replacesInvalidText { return "\u{FFFD}" }
        let digits = String(unit, radix: 16, uppercase: true)
        // A string holds no line break, so the escape is on the current line.
        throw error("unpaired surrogate \\u\(digits) in a string",
                    at: SourcePosition(line: line, column: escapeStart - lineStart + 1))
    }

    private mutating func readHexQuad() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0 ..< 4 {
            guard let byte = current, let digit = JSONByte.hexValue(byte) else {
                throw unexpected("4 hex digits after '\\u'")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }
}

/// The bytes that JSON's grammar names.
enum JSONByte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")

    static func isDigit(_ byte: UInt8) -> Bool { byte &- zero < 10 }

    /// Whether `\` and `byte` form an escape that stands for `byte` itself: `\/`, `\"` or `\\`.
    @inline(__always)
    static func isSelfEscape(_ byte: UInt8) -> Bool { byte == slash || byte == quote || byte == backslash }

    static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case zero...nine: return UInt32(byte - zero)
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// The offset of the first byte at or after `start` that is a quote, a backslash, a control
    /// character or not ASCII, or the end of the input. Checks eight bytes at a time.
    @inline(__always)
    static func endOfPlainRun(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let end = bytes.count
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= end {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if SWAR.hasSpecialByte(word) { break }
                index += 8
            }
        }
        while index < end {
            let byte = bytes[index]
            if byte == quote || byte == backslash || byte < 0x20 || byte >= 0x80 { break }
            index += 1
        }
        return index
    }
}

extension JSONByte {
    /// The offset of the closing quote of a string whose text continues at `start`, or the end
    /// of the input if it has none. Skips the byte after each backslash.
    static func endOfEscapedString(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let end = bytes.count
        while index < end {
            if let base = bytes.baseAddress {
                while index + 8 <= end,
                      !SWAR.hasQuoteOrBackslash(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                    index += 8
                }
            }
            guard index < end else { break }
            let byte = bytes[index]
            if byte == quote { return index }
            index += byte == backslash ? 2 : 1
        }
        return end
    }
}

/// Bit tricks over eight bytes packed in a `UInt64` ("SIMD within a register").
enum SWAR {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether any byte of `word` is `"`, `\`, below 0x20, or 0x80 and above.
    static func hasSpecialByte(_ word: UInt64) -> Bool {
        let quotes = word ^ (ones &* UInt64(JSONByte.quote))
        let backslashes = word ^ (ones &* UInt64(JSONByte.backslash))
        // A byte b has its high bit set in (b - k) & ~b only if b < k (for b < 0x80).
        let special = hasByteBelow(0x20, word) | hasZeroByte(quotes) | hasZeroByte(backslashes)
        return (special | word) & highs != 0
    }

    /// Whether any byte of `word` is a quote or a backslash.
    static func hasQuoteOrBackslash(_ word: UInt64) -> Bool {
        let quotes = word ^ (ones &* UInt64(JSONByte.quote))
        let backslashes = word ^ (ones &* UInt64(JSONByte.backslash))
        return (hasZeroByte(quotes) | hasZeroByte(backslashes)) != 0
    }

    /// Sets the high bit of each byte that is zero (exact when no byte has its high bit set,
    /// and never misses a zero byte otherwise).
    private static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highs
    }

    private static func hasByteBelow(_ limit: UInt8, _ word: UInt64) -> UInt64 {
        (word &- ones &* UInt64(limit)) & ~word & highs
    }
}

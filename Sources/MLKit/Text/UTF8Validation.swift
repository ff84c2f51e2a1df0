/// UTF-8 checks shared by the dataset readers and the tokenizer, on top of
/// ``UTF8Decoding``'s rules (Unicode 15, table 3-7: no overlong forms, no surrogates, nothing
/// above U+10FFFF).
enum UTF8Validation {
    /// The length of the well-formed UTF-8 sequence that starts at `offset`, or 0 if the bytes
    /// there do not start one.
    /// - Complexity: O(1).
    @inline(__always)
    static func sequenceLength(in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int {
        guard offset < bytes.count, let base = bytes.baseAddress else { return 0 }
        let (value, length) = UTF8Decoding.decode(base, at: offset, end: bytes.count)
        return value == UTF8Decoding.invalid ? 0 : length
    }

    /// The offset of the first byte in `range` that does not start or continue well-formed UTF-8,
    /// or `nil` if the whole range is valid.
    /// - Complexity: O(*n*), eight bytes at a time over ASCII.
    static func firstInvalidOffset(in bytes: UnsafeBufferPointer<UInt8>,
                                   range: Range<Int>) -> Int? {
        var offset = range.lowerBound
        while offset < range.upperBound {
            offset = ASCIIRun.end(in: bytes, from: offset, to: range.upperBound)
            guard offset < range.upperBound else { return nil }
            let length = sequenceLength(in: bytes, at: offset)
            if length == 0 || offset + length > range.upperBound { return offset }
            offset += length
        }
        return nil
    }
}

/// Word-at-a-time scanning over ASCII bytes.
enum ASCIIRun {
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The offset of the first byte at or after `start` (and before `end`) that is not ASCII,
    /// or `end`.
    static func end(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int {
        var offset = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while offset + 8 <= end {
                let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                if word & highBits != 0 { break }
                offset += 8
            }
        }
        while offset < end && bytes[offset] < 0x80 { offset += 1 }
        return offset
    }
}

/// A 1-based line and byte column in a text input.
struct SourcePosition: Sendable, Hashable {
    /// The 1-based line.
    var line: Int
    /// The 1-based column, in bytes.
    var column: Int

    /// The position of `offset`, found by counting the line breaks before it.
    /// - Complexity: O(*n*) in `offset`; meant for error paths only.
    init(of offset: Int, in bytes: UnsafeBufferPointer<UInt8>, firstByte: Int = 0) {
        var line = 1
        var lineStart = firstByte
        for index in firstByte ..< max(firstByte, min(offset, bytes.count)) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        self.line = line
        self.column = offset - lineStart + 1
    }

    init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// The offset of the first byte after a UTF-8 byte-order mark, if the bytes start with one.
    var offsetAfterByteOrderMark: Int {
        count >= 3 && self[0] == 0xEF && self[1] == 0xBB && self[2] == 0xBF ? 3 : 0
    }

    /// Whether the bytes in `range` equal `expected`.
    func hasBytes(of expected: [UInt8], at range: Range<Int>) -> Bool {
        guard expected.count == range.count else { return false }
        var index = range.lowerBound
        for byte in expected {
            guard self[index] == byte else { return false }
            index += 1
        }
        return true
    }

    /// A string made of the bytes in `range`; ill-formed UTF-8 becomes U+FFFD.
    func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: self[range]), as: UTF8.self)
    }

    /// Describes the character at `offset` for an error message: `'"'`, `'é'`, `end of line`,
    /// `end of file`, or `byte 0xFF` when it is not printable or not valid UTF-8.
    func describeCharacter(at offset: Int) -> String {
        guard offset < count else { return "end of file" }
        let byte = self[offset]
        switch byte {
        case 0x0A, 0x0D: return "end of line"
        case 0x20...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
        case 0x80...:
            let length = UTF8Validation.sequenceLength(in: self, at: offset)
            return length > 0 ? "'\(string(offset ..< offset + length))'" : "byte \(byte.hex)"
        default: return "byte \(byte.hex)"
        }
    }
}

extension UInt8 {
    /// The byte as `0x0A`.
    var hex: String {
        let digits = String(self, radix: 16, uppercase: true)
        return "0x" + (digits.count == 1 ? "0" + digits : digits)
    }
}

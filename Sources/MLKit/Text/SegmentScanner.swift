/// Finds sentences, paragraphs or the whole document in UTF-8 bytes.
///
/// - A paragraph ends at a line break (LF, CR, CR LF, NEL, U+2028, U+2029), as in NLTokenizer.
/// - A sentence also ends after `.`, `!`, `?`, `…` or `؟` (with any closing quotes and
///   brackets after them) when whitespace or the end of the text follows, unless the next word
///   starts with a lowercase letter or a digit (`e.g. this`); and at once after the full-width
///   terminators `。`, `！`, `？` and `｡`, which need no space.
/// - A period after a common English title or abbreviation (`Mr.`, `Dr.`, `etc.`) does not end
///   a sentence.
/// - Every segment is trimmed of surrounding whitespace, and blank segments are skipped.
struct SegmentScanner {
    let bytes: UnsafePointer<UInt8>
    let end: Int
    let unit: TokenUnit
    var position = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>, unit: TokenUnit) {
        self.bytes = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.end = buffer.count
        self.unit = unit
    }

    private func scalar(at index: Int) -> (value: UInt32, length: Int) {
        UTF8Decoding.decode(bytes, at: index, end: end)
    }

    private static func isWhitespace(_ value: UInt32) -> Bool {
        if value < 0x80 { return value == 0x20 || (0x09...0x0D).contains(value) }
        guard let scalar = Unicode.Scalar(value) else { return false }
        return scalar.properties.isWhitespace
    }

    private static func isLineBreak(_ value: UInt32) -> Bool {
        value == 0x0A || value == 0x0D || value == 0x0B || value == 0x0C
            || value == 0x85 || value == 0x2028 || value == 0x2029
    }

    private static func isTerminator(_ value: UInt32) -> Bool {
        switch value {
        case 0x21, 0x2E, 0x3F, 0x2026, 0x061F, 0x06D4, 0x0964, 0x0965, 0x203C, 0x2047...0x2049: return true
        default: return false
        }
    }

    private static func isFullWidthTerminator(_ value: UInt32) -> Bool {
        value == 0x3002 || value == 0xFF01 || value == 0xFF1F || value == 0xFF61
    }

    private static func isCloser(_ value: UInt32) -> Bool {
        switch value {
        case 0x22, 0x27, 0x29, 0x5D, 0x7D, 0x2019, 0x201D, 0x00BB, 0x203A, 0x300D, 0x300F, 0xFF09, 0x3011: return true
        default: return false
        }
    }

    /// Returns the next segment, or `nil` at the end.
    mutating func next() -> Token? {
        // Skip leading whitespace (including blank lines).
        while position < end {
            let (value, length) = scalar(at: position)
            guard value != UTF8Decoding.invalid, Self.isWhitespace(value) else { break }
            position += length
        }
        guard position < end else { return nil }
        let start = position
        let stop = unit == .document ? end : findSegmentEnd(from: start)
        position = stop
        return Token(range: start..<trimTrailingWhitespace(start, stop), kind: .segment)
    }

    /// The index just past the segment that starts at `start`.
    private func findSegmentEnd(from start: Int) -> Int {
        var index = start
        while index < end {
            let (value, length) = scalar(at: index)
            if Self.isLineBreak(value) { return index }
            index += length
            guard unit == .sentence else { continue }
            if Self.isFullWidthTerminator(value) {
                return skipClosers(from: index)
            }
            if Self.isTerminator(value) {
                // A run of terminators and closers, then whitespace or the end.
                var after = index
                while after < end {
                    let (next, nextLength) = scalar(at: after)
                    guard Self.isTerminator(next) || Self.isCloser(next) else { break }
                    after += nextLength
                }
                if after == end { return end }
                let (next, _) = scalar(at: after)
                guard next != UTF8Decoding.invalid, Self.isWhitespace(next) else { continue }
                if value == 0x2E, continuesSentence(afterSpaceAt: after) || isAbbreviation(endingAt: index - 1) {
                    index = after
                    continue
                }
                return after
            }
        }
        return end
    }

    private func skipClosers(from index: Int) -> Int {
        var index = index
        while index < end {
            let (value, length) = scalar(at: index)
            guard Self.isCloser(value) || Self.isFullWidthTerminator(value) else { break }
            index += length
        }
        return index
    }

    /// Whether the first word after the spaces at `index` starts with a lowercase letter or a
    /// digit, which means a period was an abbreviation (`e.g. this`, `p. 12`).
    private func continuesSentence(afterSpaceAt index: Int) -> Bool {
        var index = index
        while index < end {
            let (value, length) = scalar(at: index)
            if Self.isLineBreak(value) { return false }
            if value != UTF8Decoding.invalid, Self.isWhitespace(value) { index += length; continue }
            guard let scalar = Unicode.Scalar(value) else { return false }
            return scalar.properties.isLowercase || (0x30...0x39).contains(value)
        }
        return false
    }

    /// Titles and abbreviations after which a period does not end an English sentence.
    private static let abbreviations: Set<String> = [
        "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "inc", "ltd", "co", "no", "fig", "gen", "rev",
    ]

    /// Whether the letters just before the period at `period` form a known abbreviation.
    private func isAbbreviation(endingAt period: Int) -> Bool {
        var start = period
        while start > 0, start > period - 5, ScalarClassifier.byteTable[Int(bytes[start - 1])] == .letter {
            start -= 1
        }
        guard start < period, start == 0 || ScalarClassifier.byteTable[Int(bytes[start - 1])] != .letter
        else { return false }
        let word = String(decoding: UnsafeBufferPointer(start: bytes + start, count: period - start), as: UTF8.self)
        return Self.abbreviations.contains(word.lowercased())
    }

    private func trimTrailingWhitespace(_ start: Int, _ stop: Int) -> Int {
        // Whitespace is ASCII or a few BMP scalars; step back over whole scalars.
        var stop = stop
        while stop > start {
            var lead = stop - 1
            while lead > start && (bytes[lead] & 0xC0) == 0x80 { lead -= 1 }
            let (value, _) = scalar(at: lead)
            guard value != UTF8Decoding.invalid, Self.isWhitespace(value) else { break }
            stop = lead
        }
        return stop
    }
}

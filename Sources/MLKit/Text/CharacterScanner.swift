/// Finds single characters in UTF-8 bytes: every scalar but whitespace, with the combining
/// marks, variation selectors and joiners that follow it. The tokens of ``TokenUnit/character``,
/// which a character-level word tagger (a Chinese word segmenter) reads.
///
/// A token's kind is `ideographic` for a Han, kana or Thai character, `word` for another
/// letter, `number` for a digit, `emoji` for an emoji, and `punctuation` for anything else.
/// Ill-formed bytes are skipped, as the word scanner skips them.
struct CharacterScanner {
    let bytes: UnsafePointer<UInt8>
    let end: Int
    var position = 0

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        self.bytes = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.end = buffer.count
    }

    /// Returns the next character, or `nil` at the end.
    mutating func next() -> Token? {
        while position < end {
            let start = position
            let (value, length) = UTF8Decoding.decode(bytes, at: position, end: end)
            position += length
            guard value != UTF8Decoding.invalid, !Self.isWhitespace(value) else { continue }
            while position < end {
                let (next, nextLength) = UTF8Decoding.decode(bytes, at: position, end: end)
                guard next != UTF8Decoding.invalid else { break }
                let nextClass = ScalarClassifier.classify(next)
                guard nextClass == .extend || nextClass == .zeroWidthJoiner else { break }
                position += nextLength
            }
            return Token(range: start..<position, kind: Self.kind(of: value))
        }
        return nil
    }

    private static func kind(of value: UInt32) -> Token.Kind {
        switch ScalarClassifier.classify(value) {
        case .cluster: return .ideographic
        case .letter: return .word
        case .digit: return .number
        case .emoji, .regionalIndicator: return .emoji
        default: return .punctuation
        }
    }

    static func isWhitespace(_ value: UInt32) -> Bool {
        if value < 0x80 { return value == 0x20 || (0x09...0x0D).contains(value) }
        guard let scalar = Unicode.Scalar(value) else { return false }
        return scalar.properties.isWhitespace
    }
}

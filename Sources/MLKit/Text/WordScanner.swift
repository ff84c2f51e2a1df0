/// Finds word tokens in UTF-8 bytes, one at a time, without allocating.
///
/// The rules, which `docs/tokenization.md` documents with examples:
/// - Runs of letters, marks and digits of any script form a token.
/// - Inside a token, `'` and `’` join two letters (`don't`); `.` joins two letters or two
///   digits (`U.S`, `3.14`); `-` and `_` join two letters or digits (`e-mail`, `covid-19`);
///   `,` joins two digits (`1,000`). At the edge of a token they are separators.
/// - Each Han, Hiragana, Katakana or Bopomofo character, and each Thai, Lao, Khmer or Myanmar
///   letter, is a token of its own together with the marks that follow it.
/// - An emoji sequence (with modifiers, variation selectors, ZWJ joins, keycaps and tag
///   sequences) is one token, and so is a flag (a pair of regional indicators).
/// - Whitespace, punctuation, other symbols and ill-formed bytes are not tokens.
@usableFromInline
struct WordScanner {
    @usableFromInline let bytes: UnsafePointer<UInt8>
    @usableFromInline let end: Int
    @usableFromInline var position: Int
    /// ``ScalarClassifier/byteTable``, copied once.
    @usableFromInline let byteClass: UnsafePointer<ScalarClass>
    /// Whether the last token ``next()`` returned has a joiner inside it (`open-source`,
    /// `don't`, `3.14`): the featurizer splits only those into parts, without looking for
    /// joiners in every token again.
    @usableFromInline var joined = false
    /// Whether the last token ``next()`` returned is all ASCII: the featurizer then lowercases
    /// and hashes its bytes without testing them again.
    @usableFromInline var ascii = true

    @inlinable
    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        // An empty buffer may have no base address; any non-null pointer serves, as end is 0.
        self.bytes = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.end = buffer.count
        self.position = 0
        self.byteClass = ScalarClassifier.byteTable
        self.joined = false
        self.ascii = true
    }

    /// The class and byte length of the scalar at `index`.
    @inlinable @inline(__always)
    func peek(_ index: Int) -> (ScalarClass, Int) {
        let lead = bytes[index]
        if lead < 0x80 { return (byteClass[Int(lead)], 1) }
        return peekMultibyte(index, lead: lead)
    }

    /// ``peek(_:)`` for a non-ASCII lead byte, kept out of line so the ASCII loops stay small.
    @usableFromInline @inline(never)
    func peekMultibyte(_ index: Int, lead: UInt8) -> (ScalarClass, Int) {
        let (value, length) = UTF8Decoding.decodeMultibyte(bytes, at: index, end: end, lead: lead)
        if value == UTF8Decoding.invalid { return (.separator, 1) }
        return (ScalarClassifier.classify(value), length)
    }

    /// Returns the next token, or `nil` at the end of the text.
    @inlinable @inline(__always)
    mutating func next() -> Token? {
        joined = false
        ascii = true
        var index = position
        while index < end {
            // ASCII fast path for the bytes between words.
            let byteClass = self.byteClass[Int(bytes[index])]
            if byteClass.isAlphanumeric {
                ascii = true  // a skipped multibyte scalar before this word may have cleared it
                return scanWord(from: index, first: byteClass, length: 1)
            }
            if byteClass != .multibyte {
                index += 1
                continue
            }
            // A token that starts here starts with a multibyte scalar.
            ascii = false
            if isCJKIdeograph(at: index) {
                // The CJK Unified Ideographs block, the bulk of Chinese and Japanese text.
                let stop = skipExtenders(from: index + 3)
                position = stop
                return Token(range: index..<stop, kind: .ideographic)
            }
            let (scalarClass, length) = peek(index)
            switch scalarClass {
            case .letter, .digit:
                return scanWord(from: index, first: scalarClass, length: length)
            case .cluster:
                let stop = skipExtenders(from: index + length)
                position = stop
                return Token(range: index..<stop, kind: .ideographic)
            case .emoji:
                return scanEmoji(from: index, length: length)
            case .textEmoji:
                // ©, ™ and the like are emoji only with U+FE0F after them.
                if index + length + 3 <= end, bytes[index + length] == 0xEF,
                   bytes[index + length + 1] == 0xB8, bytes[index + length + 2] == 0x8F {
                    return scanEmoji(from: index, length: length)
                }
                index += length
            case .regionalIndicator:
                var stop = index + length
                if stop < end, case (.regionalIndicator, let second) = peek(stop) { stop += second }
                stop = skipExtenders(from: stop)
                position = stop
                return Token(range: index..<stop, kind: .emoji)
            default:
                index += length
            }
        }
        position = end
        return nil
    }

    /// Scans a word or number that starts at `start`.
    @inlinable @inline(__always)
    mutating func scanWord(from start: Int, first: ScalarClass, length: Int) -> Token {
        var index = start + length
        var last = first  // the class of the last letter or digit taken
        var seen = first.rawValue  // letter (1) and digit (2) bits seen
        while true {
            // ASCII letters and digits, the common case: eight bytes at a time, then one by one.
            while index + 8 <= end {
                let word = UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)
                let (letters, digits) = Self.asciiLettersAndDigits(word)
                let stops = ~(letters | digits) & Self.highBits
                let taken = stops == 0 ? 8 : stops.trailingZeroBitCount >> 3
                guard taken > 0 else { break }
                let prefix: UInt64 = taken == 8 ? ~0 : (1 << UInt64(taken * 8)) &- 1
                if letters & prefix != 0 { seen |= ScalarClass.letter.rawValue }
                if digits & prefix != 0 { seen |= ScalarClass.digit.rawValue }
                index += taken
                last = byteClass[Int(bytes[index - 1])]
                if taken < 8 { break }
            }
            while index < end {
                let scalarClass = byteClass[Int(bytes[index])]
                guard scalarClass.isAlphanumeric else { break }
                last = scalarClass
                seen |= scalarClass.rawValue
                index += 1
            }
            guard index < end else { break }
            let (scalarClass, length) = peek(index)
            if scalarClass.isAlphanumeric {
                last = scalarClass
                seen |= scalarClass.rawValue
                if length > 1 { ascii = false }
                index += length
            } else if scalarClass == .extend || scalarClass == .zeroWidthJoiner {
                ascii = false  // both are multibyte
                index += length
            } else if scalarClass.isJoiner, index + length < end {
                let (nextClass, nextLength) = peek(index + length)
                guard Self.joins(scalarClass, between: last, and: nextClass) else { break }
                joined = true
                if length > 1 || nextLength > 1 { ascii = false }
                last = nextClass
                seen |= nextClass.rawValue
                index += length + nextLength
            } else {
                break
            }
        }
        position = index
        return Token(range: start..<index, kind: seen & ScalarClass.letter.rawValue != 0 ? .word : .number)
    }

    @usableFromInline static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Marks the ASCII letters and the ASCII digits among eight bytes, with the high bit of
    /// each byte (SWAR). No byte's arithmetic carries into the next: the 7-bit values plus the
    /// offsets stay below 0x100.
    @inlinable @inline(__always)
    static func asciiLettersAndDigits(_ word: UInt64) -> (letters: UInt64, digits: UInt64) {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let ascii = ~word & highBits  // high bit set where the byte is ASCII
        let low = word & ~highBits
        let folded = low | (0x20 &* ones)  // A–Z → a–z
        let letters = ((folded &+ (0x80 - 0x61) &* ones) & ~(folded &+ (0x80 - 0x7B) &* ones)) & ascii
        let digits = ((low &+ (0x80 - 0x30) &* ones) & ~(low &+ (0x80 - 0x3A) &* ones)) & ascii
        return (letters & highBits, digits & highBits)
    }

    /// Whether a joiner stays inside a token between a `left` and a `right` character.
    @inlinable @inline(__always)
    static func joins(_ joiner: ScalarClass, between left: ScalarClass, and right: ScalarClass) -> Bool {
        switch joiner {
        case .apostrophe: return left == .letter && right == .letter
        case .period: return left == right && right.isAlphanumeric
        case .hyphen: return right.isAlphanumeric
        case .numericSeparator: return left == .digit && right == .digit
        default: return false
        }
    }

    /// Scans an emoji sequence whose first scalar, `length` bytes long, starts at `start`.
    @usableFromInline
    mutating func scanEmoji(from start: Int, length: Int) -> Token {
        var index = skipExtenders(from: start + length)
        while index < end {
            let (scalarClass, joinerLength) = peek(index)
            guard scalarClass == .zeroWidthJoiner, index + joinerLength < end else { break }
            let (nextClass, nextLength) = peek(index + joinerLength)
            guard nextClass == .emoji || nextClass == .textEmoji else { break }
            index = skipExtenders(from: index + joinerLength + nextLength)
        }
        position = index
        return Token(range: start..<index, kind: .emoji)
    }

    /// Whether the scalar at `index` is in U+4E00...U+9FFF (lead bytes E4...E9).
    @inlinable @inline(__always)
    func isCJKIdeograph(at index: Int) -> Bool {
        let lead = bytes[index]
        guard lead >= 0xE4 && lead <= 0xE9 && index + 2 < end else { return false }
        let b1 = bytes[index + 1], b2 = bytes[index + 2]
        // E4 starts at U+4000: the ideographs begin at E4 B8 80 (U+4E00).
        return b1 & 0xC0 == 0x80 && b2 & 0xC0 == 0x80 && (lead > 0xE4 || b1 >= 0xB8)
    }

    /// The index after the marks, modifiers and variation selectors that start at `index`.
    @inlinable @inline(__always)
    func skipExtenders(from index: Int) -> Int {
        var index = index
        // Most tokens are followed by ASCII or by another ideograph: neither extends.
        if index < end && (bytes[index] < 0x80 || isCJKIdeograph(at: index)) { return index }
        while index < end {
            let (scalarClass, length) = peek(index)
            guard scalarClass == .extend else { break }
            index += length
        }
        return index
    }
}

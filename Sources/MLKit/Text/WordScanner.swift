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
struct WordScanner {
    let bytes: UnsafePointer<UInt8>
    let end: Int
    var position: Int

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        // An empty buffer may have no base address; any non-null pointer serves, as end is 0.
        self.bytes = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        self.end = buffer.count
        self.position = 0
    }

    /// The class and byte length of the scalar at `index`.
    @inline(__always)
    func peek(_ index: Int) -> (ScalarClass, Int) {
        let lead = bytes[index]
        if lead < 0x80 { return (ScalarClassifier.ascii[Int(lead)], 1) }
        let (value, length) = UTF8Decoding.decodeMultibyte(bytes, at: index, end: end, lead: lead)
        if value == UTF8Decoding.invalid { return (.separator, 1) }
        return (ScalarClassifier.classify(value), length)
    }

    /// Returns the next token, or `nil` at the end of the text.
    mutating func next() -> Token? {
        var index = position
        while index < end {
            let lead = bytes[index]
            // ASCII fast path for the bytes between words.
            if lead < 0x80 {
                let scalarClass = ScalarClassifier.ascii[Int(lead)]
                if scalarClass.isAlphanumeric { return scanWord(from: index, first: scalarClass, length: 1) }
                index += 1
                continue
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
    mutating func scanWord(from start: Int, first: ScalarClass, length: Int) -> Token {
        var index = start + length
        var last = first  // the class of the last letter or digit taken
        var sawLetter = first == .letter
        while index < end {
            let lead = bytes[index]
            // ASCII letters and digits: the common case, in a tight loop.
            if lead < 0x80 {
                let scalarClass = ScalarClassifier.ascii[Int(lead)]
                if scalarClass.isAlphanumeric {
                    last = scalarClass
                    sawLetter = sawLetter || scalarClass == .letter
                    index += 1
                    continue
                }
            }
            let (scalarClass, length) = peek(index)
            switch scalarClass {
            case .letter, .digit:
                last = scalarClass
                sawLetter = sawLetter || scalarClass == .letter
                index += length
                continue
            case .extend, .zeroWidthJoiner:
                index += length
                continue
            case .apostrophe, .period, .hyphen, .numericSeparator:
                let after = index + length
                guard after < end else { break }
                let (nextClass, nextLength) = peek(after)
                if Self.joins(scalarClass, between: last, and: nextClass) {
                    last = nextClass
                    sawLetter = sawLetter || nextClass == .letter
                    index = after + nextLength
                    continue
                }
            default:
                break
            }
            break
        }
        position = index
        return Token(range: start..<index, kind: sawLetter ? .word : .number)
    }

    /// Whether a joiner stays inside a token between a `left` and a `right` character.
    @inline(__always)
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

    /// The index after the marks, modifiers and variation selectors that start at `index`.
    func skipExtenders(from index: Int) -> Int {
        var index = index
        while index < end {
            let (scalarClass, length) = peek(index)
            guard scalarClass == .extend else { break }
            index += length
        }
        return index
    }
}

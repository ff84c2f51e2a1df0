/// Finds the runs of punctuation marks and symbols between the word tokens of a text, which the
/// featurizer counts as tokens of their own when ``FeaturizerConfiguration/punctuation`` is on.
///
/// A run is a maximal sequence of scalars of general category P* (punctuation) or S* (symbols):
/// `!!!`, `:)`, `("`, `--`, `…`, `」。`. Whitespace, controls, format characters, stray combining
/// marks and ill-formed bytes end a run and belong to none. A run that is one full stop or one
/// comma alone (`.`, `,`, `。`, `、`, `，`, `．`) does not count: those end most sentences and
/// clauses, so they are the most frequent runs and tell classes apart the least. Skipping them
/// keeps most of the accuracy that punctuation adds, for half the extra features
/// (`docs/features.md`).
enum PunctuationScanner {
    /// The byte range of the first run in `bytes[range]` that counts, or `nil` if there is none.
    /// `range` must start and end at scalar boundaries (between two tokens, or at either end of
    /// the text).
    @inline(__always)
    static func firstRun(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int>? {
        guard let base = bytes.baseAddress else { return nil }
        let end = range.upperBound
        var index = range.lowerBound
        var start = -1
        while index < end {
            let byte = base[index]
            var length = 1
            let member: Bool
            if byte < 0x80 {
                member = (0x21...0x7E).contains(byte) && !ScalarClassifier.byteTable[Int(byte)].isAlphanumeric
            } else {
                let (value, scalarLength) = UTF8Decoding.decodeMultibyte(base, at: index, end: end, lead: byte)
                length = scalarLength
                member = value != UTF8Decoding.invalid && isPunctuationOrSymbol(value)
            }
            if member {
                if start < 0 { start = index }
            } else if start >= 0 {
                if !isLoneStop(base + start, count: index - start) { return start..<index }
                start = -1
            }
            index += length
        }
        return start >= 0 && !isLoneStop(base + start, count: end - start) ? start..<end : nil
    }

    /// Whether `bytes[range]` may hold a run: whether any byte is above the space. Most gaps
    /// between two words are a space or a few whitespace bytes, and this inlined test lets them
    /// skip the call to ``firstRun(in:_:)`` (6 % of a prediction pass on short texts).
    @inline(__always)
    static func mayHoldRun(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        for index in range where base[index] > 0x20 { return true }
        return false
    }

    /// Whether the run of `count` bytes at `run` is one full stop or comma alone: `.` or `,`,
    /// or one of `。` (U+3002), `、` (U+3001), `，` (U+FF0C) and `．` (U+FF0E).
    @inline(__always)
    static func isLoneStop(_ run: UnsafePointer<UInt8>, count: Int) -> Bool {
        switch count {
        case 1:
            return run[0] == UInt8(ascii: ".") || run[0] == UInt8(ascii: ",")
        case 3:
            return (run[0] == 0xE3 && run[1] == 0x80 && (run[2] == 0x81 || run[2] == 0x82))
                || (run[0] == 0xEF && run[1] == 0xBC && (run[2] == 0x8C || run[2] == 0x8E))
        default:
            return false
        }
    }

    /// Whether the scalar with this value is punctuation or a symbol (general category P* or S*).
    @inline(never)
    static func isPunctuationOrSymbol(_ value: UInt32) -> Bool {
        guard let scalar = Unicode.Scalar(value) else { return false }
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
             .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            return true
        default:
            return false
        }
    }
}

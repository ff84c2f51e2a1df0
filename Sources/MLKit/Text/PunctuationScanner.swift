/// Finds the runs of punctuation marks and symbols between the word tokens of a text, which the
/// featurizer counts as tokens of their own when ``FeaturizerConfiguration/punctuation`` is on.
///
/// A run is a maximal sequence of scalars of general category P* (punctuation) or S* (symbols):
/// `!!!`, `:)`, `("`, `--`, `…`, `。`. Whitespace, controls, format characters, stray combining
/// marks and ill-formed bytes end a run and belong to none.
enum PunctuationScanner {
    /// The byte range of the first run in `bytes[range]`, which must start and end at scalar
    /// boundaries (between two tokens, or at either end of the text), or `nil` if it has none.
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
                return start..<index
            }
            index += length
        }
        return start >= 0 ? start..<end : nil
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

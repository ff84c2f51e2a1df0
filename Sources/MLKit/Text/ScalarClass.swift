/// What the word scanner needs to know about one Unicode scalar.
///
/// The classes follow the word-boundary rules of UAX #29 closely, with two documented
/// differences (hyphens join words; each character of a script without spaces is a token).
/// `docs/tokenization.md` lists them.
@usableFromInline
enum ScalarClass: UInt8, Sendable {
    /// Whitespace, punctuation, symbols, controls and unassigned code points.
    case separator = 0
    /// Letters of scripts that separate words with spaces (general category L*).
    case letter
    /// Digits and other numerals (general category N*).
    case digit
    /// Combining marks, format characters, variation selectors and emoji modifiers:
    /// they extend whatever token precedes them.
    case extend
    /// U+200D ZERO WIDTH JOINER: extends a word, and joins emoji into one sequence.
    case zeroWidthJoiner
    /// A letter of a script written without spaces (Han, Hiragana, Katakana, Bopomofo, Thai,
    /// Lao, Khmer, Myanmar): each one, with its marks, is a token of its own.
    case cluster
    /// A pictographic emoji that starts an emoji token on its own.
    case emoji
    /// A symbol that is an emoji only when U+FE0F follows it (©, ®, ™, ‼).
    case textEmoji
    /// A regional indicator: two of them make a flag.
    case regionalIndicator
    /// ' and ’: inside a word between two letters (`don't`).
    case apostrophe
    /// `.`: inside a token between two letters (`U.S`) or two digits (`3.14`).
    case period
    /// `-`, `_`, U+2010 and U+2011: inside a token between two letters or digits (`e-mail`).
    case hyphen
    /// `,` and the Arabic decimal and thousands separators: inside a number (`1,000`).
    case numericSeparator
    /// Line and paragraph separators (LF, CR, NEL, U+2028, U+2029).
    case newline
    /// A byte at or above 0x80 in the byte table: decode the scalar to learn its class.
    case multibyte

    /// Whether a token can start with this class.
    @inlinable var startsToken: Bool {
        switch self {
        case .letter, .digit, .cluster, .emoji, .regionalIndicator: return true
        default: return false
        }
    }

    /// Whether this class continues a word or number.
    @inlinable @inline(__always) var isAlphanumeric: Bool { self == .letter || self == .digit }

    /// Whether this class joins two parts of a word or number (`'`, `.`, `-`, `,`).
    @inlinable @inline(__always) var isJoiner: Bool {
        self == .apostrophe || self == .period || self == .hyphen || self == .numericSeparator
    }
}

/// Classifies scalars: ASCII by a 128-entry table, the rest of the BMP by a 64 KiB table built
/// on first use from the standard library's Unicode properties, and the supplementary planes
/// by range checks and those properties.
@usableFromInline
enum ScalarClassifier {
    /// The class of each byte: ASCII bytes by their scalar, and ``ScalarClass/multibyte`` for
    /// the rest. An immortal table: scanners copy the pointer once, so their inner loops index
    /// it with one load, no bounds check, no reference counting and no lazy-initialization check.
    @usableFromInline nonisolated(unsafe) static let byteTable: UnsafePointer<ScalarClass> = {
        let table = UnsafeMutablePointer<ScalarClass>.allocate(capacity: 256)
        for byte in 0..<256 { table[byte] = byte < 0x80 ? asciiClass(UInt8(byte)) : .multibyte }
        return UnsafePointer(table)
    }()

    /// The class of each BMP scalar, built on first use (about 10 ms), immortal like ``byteTable``.
    @usableFromInline nonisolated(unsafe) static let basicPlaneTable: UnsafePointer<ScalarClass> = {
        let table = UnsafeMutablePointer<ScalarClass>.allocate(capacity: 0x10000)
        for value in 0..<0x10000 {
            table[value] = value < 0x80 ? asciiClass(UInt8(value))
                : Unicode.Scalar(UInt32(value)).map(classifyByProperties) ?? .separator
        }
        return UnsafePointer(table)
    }()

    private static func asciiClass(_ byte: UInt8) -> ScalarClass {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): return .letter
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return .digit
        case UInt8(ascii: "'"): return .apostrophe
        case UInt8(ascii: "."): return .period
        case UInt8(ascii: "-"), UInt8(ascii: "_"): return .hyphen
        case UInt8(ascii: ","): return .numericSeparator
        case 0x0A, 0x0B, 0x0C, 0x0D: return .newline
        default: return .separator
        }
    }

    /// The class of `value`, which must be a valid scalar value.
    @inlinable
    static func classify(_ value: UInt32) -> ScalarClass {
        if value >= 0x4E00 && value <= 0x9FFF { return .cluster }  // CJK Unified Ideographs
        if value < 0x10000 { return basicPlaneTable[Int(value)] }
        return classifySupplementary(value)
    }

    @usableFromInline @inline(never)
    static func classifySupplementary(_ value: UInt32) -> ScalarClass {
        switch value {
        case 0x1F1E6...0x1F1FF: return .regionalIndicator
        case 0x1F3FB...0x1F3FF: return .extend  // emoji skin-tone modifiers
        case 0xE0000...0xE0FFF: return .extend  // tags (subdivision flags) and variation selectors
        case 0x20000...0x3FFFF:  // CJK Unified Ideographs Extensions B–H, compatibility supplement
            guard let scalar = Unicode.Scalar(value) else { return .separator }
            return isLetter(scalar.properties.generalCategory) ? .cluster : .separator
        default:
            guard let scalar = Unicode.Scalar(value) else { return .separator }
            return classifyByProperties(scalar)
        }
    }

    /// The classification from first principles, used to build the tables.
    static func classifyByProperties(_ scalar: Unicode.Scalar) -> ScalarClass {
        let value = scalar.value
        switch value {
        case 0x2019: return .apostrophe  // ’ RIGHT SINGLE QUOTATION MARK
        case 0x2010, 0x2011: return .hyphen
        case 0x066B, 0x066C: return .numericSeparator
        case 0x0085, 0x2028, 0x2029: return .newline
        case 0x200D: return .zeroWidthJoiner
        case 0x20E3: return .extend  // COMBINING ENCLOSING KEYCAP
        default: break
        }
        let properties = scalar.properties
        let category = properties.generalCategory
        if isWithoutSpaces(value) {
            if isLetter(category) { return .cluster }
            if isMark(category) { return .extend }
            if isNumber(category) { return .digit }
            return .separator
        }
        if value >= 0x1F000 || (0x2300...0x2BFF).contains(value) {
            // Pictographs in the symbol blocks are emoji with or without U+FE0F (❤, ☀, ✔).
            let pictographic = value >= 0x1F000 || (0x2600...0x27BF).contains(value)
            if properties.isEmojiPresentation || (properties.isEmoji && pictographic) { return .emoji }
            if properties.isEmoji { return .textEmoji }
        } else if properties.isEmoji && value >= 0x80 && !isLetter(category) && !isNumber(category) {
            return properties.isEmojiPresentation ? .emoji : .textEmoji
        }
        if isLetter(category) { return .letter }
        if isMark(category) || category == .format { return .extend }
        if isNumber(category) { return .digit }
        return .separator
    }

    /// Scripts written without spaces between words.
    static func isWithoutSpaces(_ value: UInt32) -> Bool {
        switch value {
        case 0x0E00...0x0EFF,  // Thai, Lao
             0x1000...0x109F, 0xA9E0...0xA9FF, 0xAA60...0xAA7F,  // Myanmar
             0x1780...0x17FF, 0x19E0...0x19FF,  // Khmer
             0x2E80...0x2FDF,  // CJK radicals, Kangxi radicals
             0x3005, 0x3007, 0x3021...0x3029, 0x3038...0x303B,  // ideographic iteration, numerals
             0x3040...0x30FF,  // Hiragana, Katakana
             0x3100...0x312F, 0x31A0...0x31BF,  // Bopomofo
             0x31F0...0x31FF,  // Katakana phonetic extensions
             0x3400...0x4DBF, 0x4E00...0x9FFF,  // CJK Extension A, CJK Unified Ideographs
             0xF900...0xFAFF,  // CJK compatibility ideographs
             0xFF66...0xFF9F:  // halfwidth Katakana
            return true
        default:
            return false
        }
    }

    static func isLetter(_ category: Unicode.GeneralCategory) -> Bool {
        switch category {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return true
        default: return false
        }
    }

    static func isMark(_ category: Unicode.GeneralCategory) -> Bool {
        switch category {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    static func isNumber(_ category: Unicode.GeneralCategory) -> Bool {
        switch category {
        case .decimalNumber, .letterNumber, .otherNumber: return true
        default: return false
        }
    }
}

#if MLKIT_ICU
internal import CICU
#endif

/// Dictionary word segmentation through the system ICU (`ubrk` over `utext_openUTF8`).
///
/// ICU returns every segment with a rule status. Segments ICU calls words (letters, numbers,
/// kana, ideographs) become tokens; of the rest, only emoji sequences and flags are kept,
/// found with the standard scanner, so emoji are tokens with either segmentation.
@usableFromInline
enum ICUWordSegmenter {
    /// Whether this build links ICU.
    static var isAvailable: Bool {
        #if MLKIT_ICU
        return true
        #else
        return false
        #endif
    }

    /// The ICU version this build uses, or `nil` without ICU.
    static var version: String? {
        #if MLKIT_ICU
        return String(cString: mlkit_icu_version())
        #else
        return nil
        #endif
    }

    /// Calls `body` with each word of `bytes`. Without ICU, falls back to standard segmentation
    /// (``Tokenizer/validate()`` reports that case to callers that check).
    @usableFromInline
    static func enumerateWords(in bytes: UnsafeBufferPointer<UInt8>, locale: String?,
                               _ body: (Token) throws -> Void) rethrows {
        #if MLKIT_ICU
        if let segments = segments(of: bytes, locale: locale) {
            for index in stride(from: 0, to: segments.count, by: 3) {
                let range = Int(segments[index])..<Int(segments[index + 1])
                if segments[index + 2] >= 100 {
                    try body(Token(range: range, kind: kind(of: bytes, range)))
                } else {
                    try enumerateEmoji(in: bytes, range: range, body)
                }
            }
            return
        }
        #endif
        var scanner = WordScanner(bytes)
        while let token = scanner.next() { try body(token) }
    }

    #if MLKIT_ICU
    /// Start, end and rule status of each ICU segment, or `nil` if ICU failed.
    private static func segments(of bytes: UnsafeBufferPointer<UInt8>, locale: String?) -> [Int32]? {
        guard bytes.count < Int(Int32.max) else { return nil }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return [] }
        var capacity = max(16, bytes.count / 2)
        while true {
            var triples = [Int32](repeating: 0, count: 3 * capacity)
            let found = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
                triples.withUnsafeMutableBufferPointer { output in
                    mlkit_icu_word_segments(text, Int32(bytes.count), locale ?? "", output.baseAddress,
                                            Int32(capacity), nil)
                }
            }
            if found < 0 { return nil }
            if Int(found) <= capacity { return Array(triples[0..<(3 * Int(found))]) }
            capacity = Int(found)
        }
    }
    #endif

    /// Emoji tokens inside a segment ICU did not call a word.
    private static func enumerateEmoji(in bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>,
                                       _ body: (Token) throws -> Void) rethrows {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        var scanner = WordScanner(slice)
        while let token = scanner.next() {
            guard token.kind == .emoji else { continue }
            try body(Token(range: (token.range.lowerBound + range.lowerBound)..<(token.range.upperBound + range.lowerBound),
                           kind: .emoji))
        }
    }

    /// The kind of an ICU word, judged by its scalars.
    private static func kind(of bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Token.Kind {
        guard let base = bytes.baseAddress else { return .word }
        var index = range.lowerBound
        var sawDigit = false
        while index < range.upperBound {
            let (value, length) = UTF8Decoding.decode(base, at: index, end: range.upperBound)
            index += length
            guard value != UTF8Decoding.invalid else { continue }
            switch ScalarClassifier.classify(value) {
            case .cluster: return .ideographic
            case .letter: return .word
            case .digit: sawDigit = true
            default: continue
            }
        }
        return sawDigit ? .number : .word
    }
}

public import Foundation

/// The unit a tokenizer splits text into, as in NaturalLanguage's `NLTokenUnit`.
public enum TokenUnit: String, Sendable, Hashable, Codable, CaseIterable {
    /// Words, numbers, emoji, and single characters of scripts written without spaces.
    case word
    /// Sentences.
    case sentence
    /// Paragraphs: text between line breaks.
    case paragraph
    /// The whole text, trimmed.
    case document
    /// Single characters: every character but whitespace, each with the combining marks that
    /// follow it, punctuation included. The tokens of a character-level word tagger, such as
    /// a Chinese word segmenter.
    case character
}

/// How word boundaries are found.
public enum WordSegmentation: String, Sendable, Hashable, Codable, CaseIterable {
    /// mlkit's own rules (UAX #29 with documented changes): fast, the same on every platform,
    /// and one token per character in Chinese, Japanese, Thai, Lao, Khmer and Myanmar.
    case standard
    /// ICU's dictionary-based word break iterator, which finds words in Chinese, Japanese,
    /// Thai and other scripts without spaces. Needs the `ICU` package trait (on by default).
    case icu
    /// A trained word segmenter: a ``WordTagger`` whose labels are B, M, E and S
    /// (``Tokenizer/init(segmenter:normalization:)``). The segmenter lives in memory only: a
    /// tokenizer read from a model file never has one.
    case model
}

/// One token: where it is in the text, and what kind of token it is.
public struct Token: Sendable, Hashable {
    /// What a token holds.
    public enum Kind: UInt8, Sendable, Hashable {
        /// Letters, possibly with digits and joiners (`don't`, `covid-19`).
        case word
        /// Digits and numeric joiners only (`3.14`, `1,000`).
        case number
        /// An emoji, an emoji sequence, or a flag.
        case emoji
        /// One character of a script written without spaces (`北`, `ก`).
        case ideographic
        /// A sentence, paragraph or document.
        case segment
        /// A run of punctuation marks and symbols between words (`!!!`, `:)`, `("`). The word
        /// tokenizer never returns one; the featurizer counts them as tokens when
        /// ``FeaturizerConfiguration/punctuation`` is on. The ``TokenUnit/character`` unit
        /// returns each punctuation character or symbol as one.
        case punctuation
    }

    /// The token's position, as byte offsets into the text's UTF-8 encoding.
    public var range: Range<Int>
    /// The kind of token.
    public var kind: Kind

    /// Creates a token.
    /// - Parameters:
    ///   - range: Byte offsets into the UTF-8 text.
    ///   - kind: The kind of token.
    public init(range: Range<Int>, kind: Kind) {
        self.range = range
        self.kind = kind
    }
}

/// Splits text into words, sentences, paragraphs or the document.
///
/// A tokenizer is a small value: configure it, save it in a model file with `Codable`, and
/// share it between threads. Enumeration walks the UTF-8 bytes once, and allocates nothing
/// per token; ``tokens(for:)`` builds strings for callers that want them.
///
/// ```swift
/// let tokenizer = Tokenizer()
/// tokenizer.tokens(for: "Don't split e-mail 3.14")  // ["don't", "split", "e-mail", "3.14"]
/// ```
public struct Tokenizer: Sendable, Hashable, Codable {
    /// The unit to split into.
    public var unit: TokenUnit
    /// How word boundaries are found (words only).
    public var segmentation: WordSegmentation
    /// The locale for ICU segmentation, such as `ja` or `th` (the root locale when `nil`).
    public var locale: String?
    /// How token text is normalized by ``tokens(for:)`` and by the featurizer.
    public var normalization: TextNormalization
    /// The trained segmenter of ``WordSegmentation/model``, compared by identity; never encoded.
    @usableFromInline var trainedSegmenter: SegmenterReference?

    private enum CodingKeys: String, CodingKey {
        case unit, segmentation, locale, normalization
    }

    /// Creates a tokenizer.
    /// - Parameters:
    ///   - unit: The unit to split into (default: words).
    ///   - segmentation: The word segmentation (default: ``WordSegmentation/standard``).
    ///   - locale: The locale for ICU segmentation.
    ///   - normalization: How token text is normalized (default: lowercase only).
    public init(unit: TokenUnit = .word, segmentation: WordSegmentation = .standard,
                locale: String? = nil, normalization: TextNormalization = TextNormalization()) {
        self.unit = unit
        self.segmentation = segmentation
        self.locale = locale
        self.normalization = normalization
        self.trainedSegmenter = nil
    }

    /// Creates a word tokenizer that finds words with a trained segmenter, as
    /// `mlkit tokenize --tokenizer model:FILE` does.
    /// - Parameters:
    ///   - segmenter: A word tagger whose labels are B, M, E and S (``WordTagger/isSegmenter``).
    ///   - normalization: How token text is normalized (default: lowercase only).
    /// - Throws: ``MLKitError`` with code `invalidParameter` when the tagger is not a segmenter.
    public init(segmenter: WordTagger, normalization: TextNormalization = TextNormalization()) throws {
        guard segmenter.isSegmenter else {
            throw MLKitError.invalidParameter("segmenter", "a segmenter's labels are B, M, E and S, not "
                                              + segmenter.labels.prefix(8).joined(separator: ", "))
        }
        self.init(unit: .word, segmentation: .model, normalization: normalization)
        trainedSegmenter = SegmenterReference(segmenter)
    }

    /// The trained segmenter of ``WordSegmentation/model``.
    public var segmenter: WordTagger? { trainedSegmenter?.tagger }

    /// Whether this build can use ICU segmentation (the `ICU` package trait).
    public static var isICUAvailable: Bool { ICUWordSegmenter.isAvailable }

    /// Checks that this build supports the configuration.
    /// - Throws: ``MLKitError`` with code `unavailable` when ICU segmentation is asked for in a
    ///   build without the `ICU` trait.
    public func validate() throws {
        if unit == .word && segmentation == .icu && !Self.isICUAvailable {
            throw MLKitError(.unavailable, "the 'icu' tokenizer needs mlkit built with the ICU trait (libicu-dev)")
        }
        if unit == .word && segmentation == .model && trainedSegmenter == nil {
            throw MLKitError(.unavailable, "the 'model' tokenizer needs its trained segmenter (Tokenizer(segmenter:)), "
                             + "which a model file does not hold")
        }
    }

    /// Calls `body` with each token of `text`, in order.
    ///
    /// - Parameters:
    ///   - text: The text.
    ///   - body: Called with each token; its range indexes `text.utf8` by byte offset.
    /// - Complexity: O(n) in the length of the text; no allocation per token.
    @inlinable
    public func enumerateTokens(in text: String, _ body: (Token) throws -> Void) rethrows {
        try Self.withUTF8(text) { bytes in try enumerateTokens(inUTF8: bytes, body) }
    }

    /// Calls `body` with each token of UTF-8 bytes, which need not be valid: ill-formed
    /// sequences are treated as separators and never end up inside a token.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 text.
    ///   - body: Called with each token; its range is in byte offsets into `bytes`.
    @inlinable
    public func enumerateTokens(inUTF8 bytes: UnsafeBufferPointer<UInt8>,
                                _ body: (Token) throws -> Void) rethrows {
        switch unit {
        case .word where segmentation == .icu:
            try ICUWordSegmenter.enumerateWords(in: bytes, locale: locale, body)
        case .word where segmentation == .model && trainedSegmenter != nil:
            // Without its segmenter (a tokenizer decoded from a file, which `validate()` refuses),
            // words are found by the standard rules below.
            try trainedSegmenter!.tagger.enumerateWords(inUTF8: bytes, body)
        case .word:
            var scanner = WordScanner(bytes)
            while let token = scanner.next() { try body(token) }
        case .sentence, .paragraph, .document:
            try Self.enumerateSegments(in: bytes, unit: unit, body)
        case .character:
            try Self.enumerateCharacters(in: bytes, body)
        }
    }

    @usableFromInline
    static func enumerateCharacters(in bytes: UnsafeBufferPointer<UInt8>, _ body: (Token) throws -> Void) rethrows {
        var scanner = CharacterScanner(bytes)
        while let token = scanner.next() { try body(token) }
    }

    @usableFromInline
    static func enumerateSegments(in bytes: UnsafeBufferPointer<UInt8>, unit: TokenUnit,
                                  _ body: (Token) throws -> Void) rethrows {
        var scanner = SegmentScanner(bytes, unit: unit)
        while let token = scanner.next() { try body(token) }
    }

    /// The ranges of the tokens of `text`, like `NLTokenizer.tokens(for:)`.
    /// - Parameter text: The text.
    /// - Returns: One range of `text` per token, in order.
    public func tokenRanges(for text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        let utf8 = text.utf8
        enumerateTokens(in: text) { token in
            let lower = utf8.index(utf8.startIndex, offsetBy: token.range.lowerBound)
            let upper = utf8.index(lower, offsetBy: token.range.count)
            ranges.append(lower..<upper)
        }
        return ranges
    }

    /// The normalized text of each token of `text`.
    /// - Parameter text: The text.
    /// - Returns: Each token, normalized as ``normalization`` says (words and characters;
    ///   sentences, paragraphs and documents are returned as they stand in the text).
    public func tokens(for text: String) -> [String] {
        var result: [String] = []
        Self.withUTF8(text) { bytes in
            var scratch: [UInt8] = []
            enumerateTokens(inUTF8: bytes) { token in
                let slice = UnsafeBufferPointer(rebasing: bytes[token.range])
                guard unit == .word || unit == .character else {
                    result.append(String(decoding: slice, as: UTF8.self))
                    return
                }
                scratch.removeAll(keepingCapacity: true)
                normalization.forEachNormalizedByte(of: slice) { scratch.append($0) }
                result.append(String(decoding: scratch, as: UTF8.self))
            }
        }
        return result
    }

    /// Runs `body` over the UTF-8 bytes of `text` without copying when the string is native.
    @inlinable
    static func withUTF8<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return try copy.withUTF8(body)
    }

    /// Decodes UTF-8 bytes into a string, following `policy` for ill-formed bytes.
    /// - Parameters:
    ///   - data: The bytes.
    ///   - policy: Replace ill-formed sequences, or fail.
    ///   - source: A name for the input (a file path, `stdin`), used in the error message.
    /// - Returns: The text.
    /// - Throws: ``MLKitError`` with code `invalidUTF8`, naming the source, the line and
    ///   column, and the byte offset.
    public static func decodeText(_ data: Data, policy: InvalidUTF8Policy, source: String? = nil) throws -> String {
        try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            if policy == .fail, let offset = UTF8Validation.firstInvalidOffset(in: bytes, range: 0..<bytes.count) {
                let position = SourcePosition(of: offset, in: bytes)
                throw MLKitError(.invalidUTF8, "invalid UTF-8 (byte \(bytes[offset].hex) at offset \(offset))",
                                 at: .init(file: source, line: position.line, column: position.column))
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

/// A trained segmenter held by a ``Tokenizer``: equal only to itself, so that two tokenizers
/// are equal when they share one segmenter.
@usableFromInline
final class SegmenterReference: Sendable, Hashable {
    @usableFromInline let tagger: WordTagger

    init(_ tagger: WordTagger) { self.tagger = tagger }

    @usableFromInline static func == (left: SegmenterReference, right: SegmenterReference) -> Bool { left === right }
    @usableFromInline func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// The features of a word tagger: for each token of a sentence, the keys of the attributes that
/// describe it and its neighbours, each hashed with ``FeatureHash`` as a classifier's features
/// are. `docs/word-tagger.md` lists the templates; they are part of the model file format (the
/// header's `features.templates` names their version).
///
/// For token `t` of a sentence, with `x` its text and `lower(x)` its lowercase form (Unicode's
/// full mappings, as ``TextNormalization`` lowercases):
///
/// | key | when |
/// |---|---|
/// | `bias` | always |
/// | `w=` x | when x has upper case, so differs from its lowercase form |
/// | `l=` lower(x) | always |
/// | `p1=`, `p2=`, `p3=`: the first 1, 2, 3 scalars of lower(x) | when x has more scalars than that |
/// | `s1=`, `s2=`, `s3=`: the last 1, 2, 3 scalars | likewise |
/// | `sh=` the word shape | always |
/// | `w-2=`, `w-1=`, `w+1=`, `w+2=`: lower() of the tokens around | always; U+0002 before the sentence, U+0003 after it |
/// | `c-1=`, `c+1=`: the last scalar of the token before, the first of the token after | x has a Han, kana or Thai character, and that neighbour has more than one scalar |
/// | `b-2=`, `b-1=`, `b+1=`, `b+2=`: the character bigrams before, across the left edge, across the right edge and after x | x has a Han, kana or Thai character |
/// | `b0=`: the characters on either side of x | likewise, and x is one scalar |
///
/// The characters of the last two rows are those of the lowercase tokens of the sentence joined
/// without spaces, with U+0002 before its start and U+0003 after its end. The word shape maps
/// each scalar of x to `C` (Han, Hiragana, Katakana or Thai), `X` (an upper-case letter, Lu),
/// `x` (another letter), `d` (a number, N*), nothing (a mark, M*) or `p` (anything else), joins
/// runs of one symbol into one, and keeps the first six symbols: `Apple` → `Xx`, `iOS` → `xX`,
/// `14` → `d`, `１９９８年` → `dC`, `I/O` → `XpX`.
enum TokenFeatures {
    /// The version of the templates above, stored in the model file.
    static let templates = 1

    /// Buffers reused from one sentence to the next: one per thread.
    struct Scratch {
        /// The lowercase bytes of every token, one after another.
        var lower: [UInt8] = []
        /// Token `t`'s lowercase bytes start at `tokenLower[t]`; one more entry marks the end.
        var tokenLower: [Int] = []
        /// The offset in ``lower`` of each scalar of the sentence, and one more for the end.
        var scalars: [Int] = []
        /// Token `t`'s scalars are `scalars[tokenScalars[t] ..< tokenScalars[t + 1]]`.
        var tokenScalars: [Int] = []
        /// The word shapes, one after another, and where each token's starts.
        var shapes: [UInt8] = []
        var tokenShape: [Int] = []
        /// Whether each token has upper case, and whether it has a Han, kana or Thai character.
        var cased: [Bool] = []
        var spaceless: [Bool] = []

        init() {}
    }

    /// The hashes of the fixed part of each key.
    private static let bias = FeatureHash.of("bias")
    private static let word = FeatureHash.of("w=")
    private static let lowercase = FeatureHash.of("l=")
    private static let prefixes = [FeatureHash.of("p1="), FeatureHash.of("p2="), FeatureHash.of("p3=")]
    private static let suffixes = [FeatureHash.of("s1="), FeatureHash.of("s2="), FeatureHash.of("s3=")]
    private static let shape = FeatureHash.of("sh=")
    private static let neighbours = [FeatureHash.of("w-2="), FeatureHash.of("w-1="), FeatureHash.of("w+1="), FeatureHash.of("w+2=")]
    private static let neighbourOffsets = [-2, -1, 1, 2]
    private static let characterBefore = FeatureHash.of("c-1=")
    private static let characterAfter = FeatureHash.of("c+1=")
    private static let bigramBefore = FeatureHash.of("b-2=")
    private static let bigramLeft = FeatureHash.of("b-1=")
    private static let bigramRight = FeatureHash.of("b+1=")
    private static let bigramAfter = FeatureHash.of("b+2=")
    private static let around = FeatureHash.of("b0=")
    /// The characters that stand for the positions before and after the sentence.
    static let beforeSentence: UInt8 = 0x02
    static let afterSentence: UInt8 = 0x03
    /// The most symbols a word shape keeps.
    static let shapeLength = 6

    /// Calls `body` with each token's index and the hash of each of its attribute keys.
    /// - Parameters:
    ///   - bytes: The UTF-8 bytes that the token ranges index; valid UTF-8.
    ///   - tokens: Each token's byte range, in sentence order.
    ///   - scratch: Buffers to reuse.
    static func forEachAttribute(of bytes: UnsafeBufferPointer<UInt8>, tokens: some RandomAccessCollection<Range<Int>>,
                                 scratch: inout Scratch, _ body: (_ token: Int, _ hash: UInt64) -> Void) {
        prepare(bytes, tokens, &scratch)
        let count = tokens.count
        scratch.lower.withUnsafeBufferPointer { lower in
            scratch.scalars.withUnsafeBufferPointer { scalars in
                let sentence = Sentence(lower: lower, tokenLower: scratch.tokenLower, scalars: scalars,
                                        tokenScalars: scratch.tokenScalars)
                var index = 0
                for range in tokens {
                    emit(token: index, count: count, raw: UnsafeBufferPointer(rebasing: bytes[range]), sentence: sentence,
                         scratch: scratch, body)
                    index += 1
                }
            }
        }
    }

    /// The lowercase text, the scalars, the shapes and the flags of every token.
    private static func prepare(_ bytes: UnsafeBufferPointer<UInt8>, _ tokens: some RandomAccessCollection<Range<Int>>,
                                _ scratch: inout Scratch) {
        let normalization = TextNormalization()
        scratch.lower.removeAll(keepingCapacity: true)
        scratch.tokenLower.removeAll(keepingCapacity: true)
        scratch.scalars.removeAll(keepingCapacity: true)
        scratch.tokenScalars.removeAll(keepingCapacity: true)
        scratch.shapes.removeAll(keepingCapacity: true)
        scratch.tokenShape.removeAll(keepingCapacity: true)
        scratch.cased.removeAll(keepingCapacity: true)
        scratch.spaceless.removeAll(keepingCapacity: true)
        for range in tokens {
            let raw = UnsafeBufferPointer(rebasing: bytes[range])
            let start = scratch.lower.count
            scratch.tokenLower.append(start)
            scratch.tokenScalars.append(scratch.scalars.count)
            normalization.forEachNormalizedByte(of: raw) { byte in
                if byte & 0xC0 != 0x80 { scratch.scalars.append(scratch.lower.count) }
                scratch.lower.append(byte)
            }
            scratch.cased.append(!raw.elementsEqual(scratch.lower[start...]))
            scratch.tokenShape.append(scratch.shapes.count)
            var symbols = 0
            var last: UInt8 = 0
            var spaceless = false
            forEachScalar(of: raw) { scalar in
                let symbol = shapeSymbol(of: scalar)
                if symbol == UInt8(ascii: "C") { spaceless = true }
                guard symbol != 0, symbol != last, symbols < shapeLength else { return }
                scratch.shapes.append(symbol)
                last = symbol
                symbols += 1
            }
            scratch.spaceless.append(spaceless)
        }
        scratch.tokenLower.append(scratch.lower.count)
        scratch.tokenScalars.append(scratch.scalars.count)
        scratch.scalars.append(scratch.lower.count)
        scratch.tokenShape.append(scratch.shapes.count)
    }

    /// A view of the sentence's lowercase text for one token's keys.
    private struct Sentence {
        let lower: UnsafeBufferPointer<UInt8>
        let tokenLower: [Int]
        /// The offset of each scalar in `lower`, and the end.
        let scalars: UnsafeBufferPointer<Int>
        let tokenScalars: [Int]

        var scalarCount: Int { scalars.count - 1 }

        /// Adds the lowercase bytes of token `t` to `hash`, or a marker outside the sentence.
        @inline(__always)
        func combineToken(_ t: Int, into hash: inout FeatureHash) {
            if t < 0 { hash.combine(TokenFeatures.beforeSentence); return }
            if t >= tokenLower.count - 1 { hash.combine(TokenFeatures.afterSentence); return }
            for offset in tokenLower[t]..<tokenLower[t + 1] { hash.combine(lower[offset]) }
        }

        /// Adds the bytes of the sentence's scalar `s` to `hash`, or a marker outside it.
        @inline(__always)
        func combineScalar(_ s: Int, into hash: inout FeatureHash) {
            if s < 0 { hash.combine(TokenFeatures.beforeSentence); return }
            if s >= scalarCount { hash.combine(TokenFeatures.afterSentence); return }
            for offset in scalars[s]..<scalars[s + 1] { hash.combine(lower[offset]) }
        }

        /// Adds the bytes of the scalars `range` (inside the sentence) to `hash`.
        @inline(__always)
        func combineScalars(_ range: Range<Int>, into hash: inout FeatureHash) {
            for offset in scalars[range.lowerBound]..<scalars[range.upperBound] { hash.combine(lower[offset]) }
        }
    }

    /// The keys of token `t`.
    @inline(__always)
    private static func emit(token t: Int, count: Int, raw: UnsafeBufferPointer<UInt8>, sentence: Sentence,
                             scratch: Scratch, _ body: (Int, UInt64) -> Void) {
        body(t, bias)
        if scratch.cased[t] {
            var hash = FeatureHash(continuing: word)
            for byte in raw { hash.combine(byte) }
            body(t, hash.value)
        }
        var lowerHash = FeatureHash(continuing: lowercase)
        sentence.combineToken(t, into: &lowerHash)
        body(t, lowerHash.value)
        let first = scratch.tokenScalars[t], end = scratch.tokenScalars[t + 1]
        let length = end - first
        for k in 1...3 where length > k {
            var prefix = FeatureHash(continuing: prefixes[k - 1])
            sentence.combineScalars(first..<(first + k), into: &prefix)
            body(t, prefix.value)
            var suffix = FeatureHash(continuing: suffixes[k - 1])
            sentence.combineScalars((end - k)..<end, into: &suffix)
            body(t, suffix.value)
        }
        var shapeHash = FeatureHash(continuing: shape)
        for offset in scratch.tokenShape[t]..<scratch.tokenShape[t + 1] { shapeHash.combine(scratch.shapes[offset]) }
        body(t, shapeHash.value)
        for index in 0..<4 {
            var hash = FeatureHash(continuing: neighbours[index])
            sentence.combineToken(t + neighbourOffsets[index], into: &hash)
            body(t, hash.value)
        }
        guard scratch.spaceless[t] else { return }
        if t > 0 && scratch.tokenScalars[t] - scratch.tokenScalars[t - 1] > 1 {
            var hash = FeatureHash(continuing: characterBefore)
            sentence.combineScalar(first - 1, into: &hash)
            body(t, hash.value)
        }
        if t + 1 < count && scratch.tokenScalars[t + 2] - scratch.tokenScalars[t + 1] > 1 {
            var hash = FeatureHash(continuing: characterAfter)
            sentence.combineScalar(end, into: &hash)
            body(t, hash.value)
        }
        @inline(__always) func bigram(_ key: UInt64, _ left: Int, _ right: Int) {
            var hash = FeatureHash(continuing: key)
            sentence.combineScalar(left, into: &hash)
            sentence.combineScalar(right, into: &hash)
            body(t, hash.value)
        }
        bigram(bigramBefore, first - 2, first - 1)
        bigram(bigramLeft, first - 1, first)
        bigram(bigramRight, end - 1, end)
        bigram(bigramAfter, end, end + 1)
        if length == 1 { bigram(around, first - 1, end) }
    }

    /// Calls `body` with each scalar of valid UTF-8 bytes.
    @inline(__always)
    static func forEachScalar(of bytes: UnsafeBufferPointer<UInt8>, _ body: (UInt32) -> Void) {
        var index = 0
        while index < bytes.count {
            let lead = UInt32(bytes[index])
            if lead < 0x80 {
                body(lead)
                index += 1
                continue
            }
            let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
            var value = lead & (0x7F >> UInt32(length))
            for offset in 1..<length where index + offset < bytes.count {
                value = (value << 6) | (UInt32(bytes[index + offset]) & 0x3F)
            }
            body(value)
            index += length
        }
    }

    /// Whether a scalar is Han, Hiragana, Katakana or Thai: the characters whose neighbours and
    /// bigrams become features.
    @inline(__always)
    static func isSpaceless(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x0E00...0x0E7F,  // Thai
             0x2E80...0x2FDF,  // CJK and Kangxi radicals
             0x3005, 0x3007, 0x3021...0x3029, 0x3038...0x303B,  // 々, 〇, Hangzhou numerals
             0x3040...0x30FF,  // Hiragana, Katakana
             0x31F0...0x31FF,  // Katakana phonetic extensions
             0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF,  // CJK ideographs
             0xFF66...0xFF9F,  // half-width Katakana
             0x20000...0x3FFFF:  // CJK ideographs, supplementary planes
            return true
        default:
            return false
        }
    }

    /// The symbol of a scalar in a word shape, or 0 for a mark, which adds none.
    @inline(__always)
    static func shapeSymbol(of scalar: UInt32) -> UInt8 {
        if scalar < 0x80 {
            switch UInt8(scalar) {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt8(ascii: "X")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt8(ascii: "x")
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt8(ascii: "d")
            default: return UInt8(ascii: "p")
            }
        }
        if isSpaceless(scalar) { return UInt8(ascii: "C") }
        guard let value = Unicode.Scalar(scalar) else { return UInt8(ascii: "p") }
        switch value.properties.generalCategory {
        case .uppercaseLetter: return UInt8(ascii: "X")
        case .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return UInt8(ascii: "x")
        case .decimalNumber, .letterNumber, .otherNumber: return UInt8(ascii: "d")
        case .nonspacingMark, .spacingMark, .enclosingMark: return 0
        default: return UInt8(ascii: "p")
        }
    }

    /// The keys of every token of a sentence as text, in order: for tests, for `docs/word-tagger.md`,
    /// and for the peer comparison, which checks that its own copy of the templates agrees.
    static func keys(of tokens: [String]) -> [[String]] {
        // The reference path: build each key as a string, then check it against the hashes.
        var keys = [[String]](repeating: [], count: tokens.count)
        let lower = tokens.map { token -> String in
            var bytes: [UInt8] = []
            var copy = token
            copy.withUTF8 { TextNormalization().forEachNormalizedByte(of: $0) { bytes.append($0) } }
            return String(decoding: bytes, as: UTF8.self)
        }
        let before = String(UnicodeScalar(beforeSentence)), after = String(UnicodeScalar(afterSentence))
        func neighbour(_ t: Int) -> String { t < 0 ? before : t >= tokens.count ? after : lower[t] }
        let characters = lower.flatMap { $0.unicodeScalars.map(String.init) }
        func character(_ s: Int) -> String { s < 0 ? before : s >= characters.count ? after : characters[s] }
        var position = 0
        for (t, token) in tokens.enumerated() {
            let scalars = lower[t].unicodeScalars.map(String.init)
            var row = ["bias"]
            if token != lower[t] { row.append("w=" + token) }
            row.append("l=" + lower[t])
            for k in 1...3 where scalars.count > k {
                row.append("p\(k)=" + scalars.prefix(k).joined())
                row.append("s\(k)=" + scalars.suffix(k).joined())
            }
            var shape: [UInt8] = []
            var spaceless = false
            var bytes = Array(token.utf8)
            bytes.withUnsafeMutableBufferPointer { buffer in
                forEachScalar(of: UnsafeBufferPointer(buffer)) { scalar in
                    let symbol = shapeSymbol(of: scalar)
                    if symbol == UInt8(ascii: "C") { spaceless = true }
                    if symbol != 0, symbol != shape.last, shape.count < shapeLength { shape.append(symbol) }
                }
            }
            row.append("sh=" + String(decoding: shape, as: UTF8.self))
            for offset in neighbourOffsets { row.append("w\(offset > 0 ? "+" : "")\(offset)=" + neighbour(t + offset)) }
            let first = position, end = position + scalars.count
            if spaceless {
                if t > 0 && lower[t - 1].unicodeScalars.count > 1 { row.append("c-1=" + character(first - 1)) }
                if t + 1 < tokens.count && lower[t + 1].unicodeScalars.count > 1 { row.append("c+1=" + character(end)) }
                row.append("b-2=" + character(first - 2) + character(first - 1))
                row.append("b-1=" + character(first - 1) + character(first))
                row.append("b+1=" + character(end - 1) + character(end))
                row.append("b+2=" + character(end) + character(end + 1))
                if scalars.count == 1 { row.append("b0=" + character(first - 1) + character(end)) }
            }
            keys[t] = row
            position = end
        }
        return keys
    }
}

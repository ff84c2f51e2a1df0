extension Featurizer {
    /// Calls `body` with the hash of every feature of `bytes`, in one pass over the text.
    ///
    /// Every n-gram order is hashed at once while the token's normalized bytes stream by:
    /// the hash of `"a b"` continues from the hash of `"a"`, so no string is ever built.
    /// ``forEachFeatureKey(in:scratch:_:)`` builds the keys themselves, and the tests check that
    /// their hashes agree. Inlined, so that `body` and the per-token work run inside the word
    /// scanner's loop rather than as a call per token.
    @inline(__always)
    func forEachFeatureHash(in bytes: UnsafeBufferPointer<UInt8>, scratch: inout FeatureScratch,
                            _ body: (UInt64) -> Void) {
        let configuration = self.configuration
        let normalization = configuration.tokenizer.normalization
        if configuration.maxWordNGram <= 2 && configuration.characterNGrams == nil {
            // Words, word bigrams if asked, and bigrams of adjacent ideographs: what `auto`
            // trains. The previous word's hash is kept, and this word's hash and the bigrams
            // that continue from it ("a b", then "ab" for two adjacent ideographs) take its
            // bytes in one pass.
            let wordBigrams = configuration.maxWordNGram == 2
            let scriptBigrams = configuration.scriptBigrams
            let wordParts = configuration.wordParts
            var previousWord: UInt64?
            var previousEnd = -1
            var previousWasIdeographic = false
            withUnsafeTemporaryAllocation(of: FeatureHash.self, capacity: 3) { storage in
                let states = storage.baseAddress!
                Self.forEachToken(of: configuration.tokenizer, punctuation: configuration.punctuation, in: bytes) { token, joined, ascii in
                    let slice = UnsafeBufferPointer(rebasing: bytes[token.range])
                    let isIdeographic = token.kind == .ideographic
                    states[0] = FeatureHash()
                    var count = 1
                    if let previous = previousWord {
                        if wordBigrams {
                            states[count] = FeatureHash(continuing: previous)
                            states[count].combine(0x20)
                            count += 1
                        }
                        if scriptBigrams && isIdeographic && previousWasIdeographic
                            && previousEnd == token.range.lowerBound {
                            states[count] = FeatureHash(continuing: previous)
                            count += 1
                        }
                    }
                    Self.combineNormalizedBytes(of: slice, ascii: ascii, normalization, into: states, count: count)
                    for index in 0..<count { body(states[index].value) }
                    previousWord = states[0].value
                    previousEnd = token.range.upperBound
                    previousWasIdeographic = isIdeographic
                    if wordParts && token.isWordOrNumber {
                        Self.forEachPartHash(of: slice, joined: joined, normalization, body)
                    }
                }
            }
            return
        }
        // history[k]: the hash of the (k+1)-gram ending at the previous token.
        // states[0]: this token; states[k]: the (k+1)-gram ending here; then the script bigram.
        let maxN = configuration.maxWordNGram
        let scriptBigrams = configuration.scriptBigrams
        let wordParts = configuration.wordParts
        let characterNGrams = configuration.characterNGrams
        let tokenizer = configuration.tokenizer
        withUnsafeTemporaryAllocation(of: FeatureHash.self, capacity: 2 * maxN + 1) { storage in
            let history = storage.baseAddress!
            let states = history + maxN
            var historyCount = 0
            var previousEnd = -1
            var previousWasIdeographic = false
            Self.forEachToken(of: tokenizer, punctuation: configuration.punctuation, in: bytes) { token, joined, ascii in
                let slice = UnsafeBufferPointer(rebasing: bytes[token.range])
                let isIdeographic = token.kind == .ideographic
                let ngrams = min(maxN, historyCount + 1)
                states[0] = FeatureHash()
                for order in 1..<ngrams {
                    states[order] = history[order - 1]
                    states[order].combine(0x20)
                }
                var stateCount = ngrams
                if scriptBigrams && isIdeographic && previousWasIdeographic
                    && previousEnd == token.range.lowerBound {
                    states[stateCount] = history[0]
                    stateCount += 1
                }
                Self.combineNormalizedBytes(of: slice, ascii: ascii, normalization, into: states, count: stateCount)
                for index in 0..<stateCount { body(states[index].value) }
                // The n-grams ending here are the history of the next token.
                historyCount = min(ngrams, max(1, maxN - 1))
                for order in 0..<historyCount { history[order] = states[order] }
                previousEnd = token.range.upperBound
                previousWasIdeographic = isIdeographic
                if wordParts && token.isWordOrNumber { Self.forEachPartHash(of: slice, joined: joined, normalization, body) }
                if let lengths = characterNGrams, token.isWordOrNumber {
                    Self.forEachCharacterNGramHash(of: slice, lengths: lengths, normalization, scratch: &scratch, body)
                }
            }
        }
    }

    /// Calls `body` with each token, whether it has joiners inside, and whether it is all ASCII
    /// (each `true`, `false`, or `nil` when unknown), running the standard word scanner's loop
    /// in place so that `body` is inlined into it; other tokenizers' tokens are gathered first
    /// from ``Tokenizer/enumerateTokens(inUTF8:_:)``, and do not know. With `punctuation`, the runs
    /// of punctuation and symbols before each token and after the last come too, in text order,
    /// as tokens of kind `punctuation`. `body` has two call sites, one per kind, so that the
    /// compiler inlines it and the scanner into one loop.
    @inline(__always)
    private static func forEachToken(of tokenizer: Tokenizer, punctuation: Bool, in bytes: UnsafeBufferPointer<UInt8>,
                                     _ body: (_ token: Token, _ joined: Bool?, _ ascii: Bool?) -> Void) {
        let standard = tokenizer.unit == .word && tokenizer.segmentation == .standard
        var gathered: [Token] = []
        if !standard { tokenizer.enumerateTokens(inUTF8: bytes) { gathered.append($0) } }
        var scanner = WordScanner(bytes)
        var taken = 0
        // Where the text not yet passed to `body` starts: the gap before the next token.
        var gapStart = 0
        while true {
            let next: Token?
            let joined: Bool?, ascii: Bool?
            if standard {
                next = scanner.next()
                joined = scanner.joined
                ascii = scanner.ascii
            } else {
                next = taken < gathered.count ? gathered[taken] : nil
                taken += 1
                joined = nil
                ascii = nil
            }
            if punctuation {
                let gapEnd = next?.range.lowerBound ?? bytes.count
                if PunctuationScanner.mayHoldRun(bytes, gapStart..<gapEnd) {
                    while let run = PunctuationScanner.firstRun(in: bytes, gapStart..<gapEnd) {
                        body(Token(range: run, kind: .punctuation), false, nil)
                        gapStart = run.upperBound
                    }
                }
            }
            guard let token = next else { return }
            body(token, joined, ascii)
            gapStart = token.range.upperBound
        }
    }

    /// Calls `body` with each part of a word or number that has joiners inside (`'`, `’`, `.`,
    /// `-`, `_`, U+2010, U+2011, and the numeric separators), the parts between its joiners:
    /// `open` and `source` for `open-source`. A token without joiners has no parts. One pass over
    /// the bytes rules out the rest: a joiner is an ASCII joiner byte, or starts with 0xE2
    /// (U+2010, U+2011, U+2019) or 0xD9 (U+066B, U+066C), so words of other scripts skip the
    /// scalar walk too.
    @inline(__always)
    static func forEachPart(of token: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let byteClass = ScalarClassifier.byteTable
        for byte in token where byteClass[Int(byte)].isJoiner || byte == 0xE2 || byte == 0xD9 {
            splitAtJoiners(token, body)
            return
        }
    }

    /// The work of ``forEachPart(of:_:)`` for a token that may have joiners, out of line.
    @inline(never)
    private static func splitAtJoiners(_ token: UnsafeBufferPointer<UInt8>,
                                       _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        let scanner = WordScanner(token)
        var start = 0
        var index = 0
        var split = false
        while index < token.count {
            let (scalarClass, length) = scanner.peek(index)
            if scalarClass.isJoiner {
                if index > start { body(UnsafeBufferPointer(rebasing: token[start..<index])) }
                start = index + length
                split = true
            }
            index += length
        }
        if split && index > start { body(UnsafeBufferPointer(rebasing: token[start..<index])) }
    }

    /// Calls `body` with the hash of each normalized part of a joined token.
    /// - Parameter joined: Whether the scanner found joiners inside the token: a token without
    ///   them has no parts, so its bytes need not be searched for them again; `nil` searches.
    @inline(__always)
    private static func forEachPartHash(of token: UnsafeBufferPointer<UInt8>, joined: Bool?,
                                        _ normalization: TextNormalization, _ body: (UInt64) -> Void) {
        let hashPart = { (part: UnsafeBufferPointer<UInt8>) in
            var hash = FeatureHash()
            normalization.forEachNormalizedByte(of: part) { hash.combine($0) }
            body(hash.value)
        }
        switch joined {
        case true?: splitAtJoiners(token, hashPart)
        case false?: return
        case nil: forEachPart(of: token, hashPart)
        }
    }

    /// Feeds the normalized bytes of `token` to the first `count` hash states (`ascii`: whether
    /// the token is known to be all ASCII, `nil` when unknown). Up to three
    /// states are kept in registers while the bytes stream by; the FNV step is a multiply
    /// whose latency would otherwise add a store and a load per byte.
    @inline(__always)
    private static func combineNormalizedBytes(of token: UnsafeBufferPointer<UInt8>, ascii: Bool?,
                                               _ normalization: TextNormalization,
                                               into states: UnsafeMutablePointer<FeatureHash>, count: Int) {
        switch count {
        case 1:
            var first = states[0]
            normalization.forEachNormalizedByte(of: token, ascii: ascii) { first.combine($0) }
            states[0] = first
        case 2:
            var first = states[0], second = states[1]
            normalization.forEachNormalizedByte(of: token, ascii: ascii) { byte in
                first.combine(byte)
                second.combine(byte)
            }
            states[0] = first
            states[1] = second
        case 3:
            var first = states[0], second = states[1], third = states[2]
            normalization.forEachNormalizedByte(of: token, ascii: ascii) { byte in
                first.combine(byte)
                second.combine(byte)
                third.combine(byte)
            }
            states[0] = first
            states[1] = second
            states[2] = third
        default:
            normalization.forEachNormalizedByte(of: token, ascii: ascii) { byte in
                for index in 0..<count { states[index].combine(byte) }
            }
        }
    }

    /// Hashes the character n-grams of one token, padded as `<token>`, with the key prefix `#`.
    private static func forEachCharacterNGramHash(of token: UnsafeBufferPointer<UInt8>, lengths: ClosedRange<Int>,
                                                  _ normalization: TextNormalization, scratch: inout FeatureScratch,
                                                  _ body: (UInt64) -> Void) {
        let scalarCount = scratch.pad { padded in normalization.forEachNormalizedByte(of: token) { padded.append($0) } }
        var prefix = FeatureHash()
        prefix.combine(UInt8(ascii: "#"))
        for length in lengths where length <= scalarCount {
            for start in 0...(scalarCount - length) {
                var hash = prefix
                for offset in scratch.scalarStarts[start]..<scratch.scalarStarts[start + length] {
                    hash.combine(scratch.padded[offset])
                }
                body(hash.value)
            }
        }
    }

    /// Calls `body` with the hash and the key of every feature of `bytes`, in the order of
    /// ``forEachFeatureHash(in:scratch:_:)``, until it returns `false`: the source of vocabulary
    /// terms, and the reference that the tests check the fast path against.
    ///
    /// The normalized tokens go into `scratch` one after another, each followed by a space, so
    /// the key of a word n-gram is one slice of it and no string is built; `body` decides which
    /// keys it keeps. The buffer it gets is valid only during the call. A key's hash continues
    /// from the hash of the n-gram one shorter, as in the fast path.
    @inline(__always)
    func forEachFeatureKey(in bytes: UnsafeBufferPointer<UInt8>, scratch: inout FeatureKeyScratch,
                           _ body: (_ hash: UInt64, _ key: UnsafeBufferPointer<UInt8>) -> Bool) {
        let configuration = self.configuration
        let normalization = configuration.tokenizer.normalization
        let maxN = configuration.maxWordNGram
        scratch.text.removeAll(keepingCapacity: true)
        scratch.tokens.removeAll(keepingCapacity: true)
        scratch.hashes.removeAll(keepingCapacity: true)
        scratch.text.reserveCapacity(2 * bytes.count + 16)
        var going = true
        Self.forEachToken(of: configuration.tokenizer, punctuation: configuration.punctuation, in: bytes) { token, _, ascii in
            guard going else { return }
            let start = scratch.text.count
            let position = scratch.tokens.count
            var word = FeatureHash()
            normalization.forEachNormalizedByte(of: UnsafeBufferPointer(rebasing: bytes[token.range]), ascii: ascii) { byte in
                scratch.text.append(byte)
                word.combine(byte)
            }
            let end = scratch.text.count
            scratch.text.append(0x20)
            scratch.tokens.append(FeatureKeyScratch.Word(start: start, end: end, kind: token.kind, source: token.range))
            // hashes[first + k]: the (k+1)-gram ending at this token, which continues from the
            // k-gram ending at the previous one.
            let first = scratch.hashes.count
            let grams = min(maxN, position + 1)
            scratch.hashes.append(word.value)
            for order in 1..<grams {
                var hash = FeatureHash(continuing: scratch.hashes[first - maxN + order - 1])
                hash.combine(0x20)
                for byte in scratch.text[start..<end] { hash.combine(byte) }
                scratch.hashes.append(hash.value)
            }
            for _ in grams..<maxN { scratch.hashes.append(0) }
            scratch.text.withUnsafeBufferPointer { text in
                // The word, then the n-grams ending with it: their keys run from an earlier
                // token's start to this token's end, spaces included.
                for order in 0..<grams where going {
                    going = body(scratch.hashes[first + order],
                                 UnsafeBufferPointer(rebasing: text[scratch.tokens[position - order].start..<end]))
                }
            }
            if going, configuration.scriptBigrams, position > 0, token.kind == .ideographic {
                let before = scratch.tokens[position - 1]
                if before.kind == .ideographic && before.source.upperBound == token.range.lowerBound {
                    scratch.key.removeAll(keepingCapacity: true)
                    scratch.key.append(contentsOf: scratch.text[before.start..<before.end])
                    scratch.key.append(contentsOf: scratch.text[start..<end])
                    var hash = FeatureHash(continuing: scratch.hashes[maxN * (position - 1)])
                    for byte in scratch.text[start..<end] { hash.combine(byte) }
                    going = scratch.key.withUnsafeBufferPointer { body(hash.value, $0) }
                }
            }
            if going, configuration.wordParts, token.isWordOrNumber {
                Self.forEachPart(of: UnsafeBufferPointer(rebasing: bytes[token.range])) { part in
                    guard going else { return }
                    scratch.key.removeAll(keepingCapacity: true)
                    normalization.forEachNormalizedByte(of: part) { scratch.key.append($0) }
                    going = scratch.key.withUnsafeBufferPointer { body(FeatureHash.of($0), $0) }
                }
            }
            if going, let lengths = configuration.characterNGrams, token.isWordOrNumber {
                // `#`, then n scalars of `<token>`.
                let word = scratch.text[start..<end]
                let scalarCount = scratch.characters.pad { $0.append(contentsOf: word) }
                let characters = scratch.characters
                for length in lengths where length <= scalarCount {
                    for first in 0...(scalarCount - length) where going {
                        scratch.key.removeAll(keepingCapacity: true)
                        scratch.key.append(UInt8(ascii: "#"))
                        scratch.key.append(contentsOf: characters.padded[characters.scalarStarts[first]..<characters.scalarStarts[first + length]])
                        going = scratch.key.withUnsafeBufferPointer { body(FeatureHash.of($0), $0) }
                    }
                }
            }
        }
    }

    /// The key of every feature of `text`, as strings (`love`, `i love`, `北京`, `#<lo`), one
    /// per occurrence, in the order of ``forEachFeatureKey(in:scratch:_:)``.
    func featureKeys(for text: String) -> [String] {
        var keys: [String] = []
        var scratch = FeatureKeyScratch()
        Tokenizer.withUTF8(text) { bytes in
            forEachFeatureKey(in: bytes, scratch: &scratch) { _, key in
                keys.append(String(decoding: key, as: UTF8.self))
                return true
            }
        }
        return keys
    }
}

/// Scratch storage for ``Featurizer/forEachFeatureKey(in:scratch:_:)``, reused across texts.
struct FeatureKeyScratch {
    /// One token of the text.
    struct Word {
        /// Where its normalized bytes start and end in ``text``.
        var start: Int
        var end: Int
        var kind: Token.Kind
        /// Its byte range in the source text, to tell adjacent characters apart.
        var source: Range<Int>
    }

    /// The normalized tokens so far, each followed by one space.
    var text: [UInt8] = []
    /// The tokens so far.
    var tokens: [Word] = []
    /// `maxWordNGram` hashes per token: of the word, then of each longer n-gram ending with it.
    var hashes: [UInt64] = []
    /// A key that is not one slice of ``text``: a script bigram, a word part or a character n-gram.
    var key: [UInt8] = []
    /// The padded token of character n-grams.
    var characters = FeatureScratch()
}

extension Token {
    /// Whether the token is a word or a number, the kinds that have parts and character n-grams.
    /// Inlined: the compiler left it a call per token in the featurizer's loop.
    var isWordOrNumber: Bool {
        @inline(__always) get { kind == .word || kind == .number }
    }
}

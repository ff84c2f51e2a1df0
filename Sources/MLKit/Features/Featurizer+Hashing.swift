extension Featurizer {
    /// Calls `body` with the hash of every feature of `bytes`, in one pass over the text.
    ///
    /// Every n-gram order is hashed at once while the token's normalized bytes stream by:
    /// the hash of `"a b"` continues from the hash of `"a"`, so no string is ever built.
    /// ``featureKeys(for:)`` is the same computation written plainly, and the tests check that
    /// the two agree. Inlined, so that `body` and the per-token work run inside the word
    /// scanner's loop rather than as a call per token.
    @inline(__always)
    func forEachFeatureHash(in bytes: UnsafeBufferPointer<UInt8>, scratch: inout FeatureScratch,
                            _ body: (UInt64) -> Void) {
        let configuration = self.configuration
        let normalization = configuration.tokenizer.normalization
        if configuration.maxWordNGram == 1 && configuration.characterNGrams == nil {
            // Words, and bigrams of adjacent ideographs: the default. The word's hash stays in a
            // register; a script bigram continues from the previous ideograph's hash.
            let scriptBigrams = configuration.scriptBigrams
            var previousEnd = -1
            var previousIdeograph: UInt64?
            Self.forEachToken(of: configuration.tokenizer, in: bytes) { token in
                let slice = UnsafeBufferPointer(rebasing: bytes[token.range])
                var hash = FeatureHash()
                guard scriptBigrams && token.kind == .ideographic else {
                    normalization.forEachNormalizedByte(of: slice) { hash.combine($0) }
                    body(hash.value)
                    previousIdeograph = nil
                    return
                }
                if let previous = previousIdeograph, previousEnd == token.range.lowerBound {
                    var bigram = FeatureHash(continuing: previous)
                    normalization.forEachNormalizedByte(of: slice) { byte in
                        hash.combine(byte)
                        bigram.combine(byte)
                    }
                    body(hash.value)
                    body(bigram.value)
                } else {
                    normalization.forEachNormalizedByte(of: slice) { hash.combine($0) }
                    body(hash.value)
                }
                previousIdeograph = hash.value
                previousEnd = token.range.upperBound
            }
            return
        }
        // history[k]: the hash of the (k+1)-gram ending at the previous token.
        // states[0]: this token; states[k]: the (k+1)-gram ending here; then the script bigram.
        let maxN = configuration.maxWordNGram
        let scriptBigrams = configuration.scriptBigrams
        let characterNGrams = configuration.characterNGrams
        let tokenizer = configuration.tokenizer
        withUnsafeTemporaryAllocation(of: FeatureHash.self, capacity: 2 * maxN + 1) { storage in
            let history = storage.baseAddress!
            let states = history + maxN
            var historyCount = 0
            var previousEnd = -1
            var previousWasIdeographic = false
            Self.forEachToken(of: tokenizer, in: bytes) { token in
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
                Self.combineNormalizedBytes(of: slice, normalization, into: states, count: stateCount)
                for index in 0..<stateCount { body(states[index].value) }
                // The n-grams ending here are the history of the next token.
                historyCount = min(ngrams, max(1, maxN - 1))
                for order in 0..<historyCount { history[order] = states[order] }
                previousEnd = token.range.upperBound
                previousWasIdeographic = isIdeographic
                if let lengths = characterNGrams, token.kind == .word || token.kind == .number {
                    forEachCharacterNGramHash(of: slice, lengths: lengths, scratch: &scratch, body)
                }
            }
        }
    }

    /// Calls `body` with each token, running the standard word scanner's loop in place so that
    /// `body` is inlined into it; other tokenizers go through ``Tokenizer/enumerateTokens(inUTF8:_:)``.
    @inline(__always)
    private static func forEachToken(of tokenizer: Tokenizer, in bytes: UnsafeBufferPointer<UInt8>,
                                     _ body: (Token) -> Void) {
        guard tokenizer.unit == .word && tokenizer.segmentation == .standard else {
            tokenizer.enumerateTokens(inUTF8: bytes, body)
            return
        }
        var scanner = WordScanner(bytes)
        while let token = scanner.next() { body(token) }
    }

    /// Feeds the normalized bytes of `token` to the first `count` hash states. Up to three
    /// states are kept in registers while the bytes stream by; the FNV step is a multiply
    /// whose latency would otherwise add a store and a load per byte.
    @inline(__always)
    private static func combineNormalizedBytes(of token: UnsafeBufferPointer<UInt8>, _ normalization: TextNormalization,
                                               into states: UnsafeMutablePointer<FeatureHash>, count: Int) {
        switch count {
        case 1:
            var first = states[0]
            normalization.forEachNormalizedByte(of: token) { first.combine($0) }
            states[0] = first
        case 2:
            var first = states[0], second = states[1]
            normalization.forEachNormalizedByte(of: token) { byte in
                first.combine(byte)
                second.combine(byte)
            }
            states[0] = first
            states[1] = second
        case 3:
            var first = states[0], second = states[1], third = states[2]
            normalization.forEachNormalizedByte(of: token) { byte in
                first.combine(byte)
                second.combine(byte)
                third.combine(byte)
            }
            states[0] = first
            states[1] = second
            states[2] = third
        default:
            normalization.forEachNormalizedByte(of: token) { byte in
                for index in 0..<count { states[index].combine(byte) }
            }
        }
    }

    /// Hashes the character n-grams of one token, padded as `<token>`, with the key prefix `#`.
    private func forEachCharacterNGramHash(of token: UnsafeBufferPointer<UInt8>, lengths: ClosedRange<Int>,
                                           scratch: inout FeatureScratch, _ body: (UInt64) -> Void) {
        scratch.padded.removeAll(keepingCapacity: true)
        scratch.padded.append(UInt8(ascii: "<"))
        configuration.tokenizer.normalization.forEachNormalizedByte(of: token) { scratch.padded.append($0) }
        scratch.padded.append(UInt8(ascii: ">"))
        scratch.scalarStarts.removeAll(keepingCapacity: true)
        for (offset, byte) in scratch.padded.enumerated() where byte & 0xC0 != 0x80 {
            scratch.scalarStarts.append(offset)
        }
        let scalarCount = scratch.scalarStarts.count
        scratch.scalarStarts.append(scratch.padded.count)
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

    /// The key of every feature of `text`, built as strings: the reference for
    /// ``forEachFeatureHash(in:scratch:_:)`` and the source of vocabulary terms.
    /// - Parameter text: The text.
    /// - Returns: One key per feature occurrence (`love`, `i love`, `北京`, `#<lo`).
    func featureKeys(for text: String) -> [String] {
        let tokenizer = configuration.tokenizer
        var words: [(text: String, kind: Token.Kind, range: Range<Int>)] = []
        Tokenizer.withUTF8(text) { bytes in
            tokenizer.enumerateTokens(inUTF8: bytes) { token in
                var normalized: [UInt8] = []
                tokenizer.normalization.forEachNormalizedByte(of: UnsafeBufferPointer(rebasing: bytes[token.range])) {
                    normalized.append($0)
                }
                words.append((String(decoding: normalized, as: UTF8.self), token.kind, token.range))
            }
        }
        var keys: [String] = []
        for (position, word) in words.enumerated() {
            keys.append(word.text)
            if position > 0 {
                for order in 2...max(2, configuration.maxWordNGram) where order <= configuration.maxWordNGram && position + 1 >= order {
                    keys.append(words[(position + 1 - order)...position].map(\.text).joined(separator: " "))
                }
            }
            if configuration.scriptBigrams, position > 0, word.kind == .ideographic,
               words[position - 1].kind == .ideographic, words[position - 1].range.upperBound == word.range.lowerBound {
                keys.append(words[position - 1].text + word.text)
            }
            if let lengths = configuration.characterNGrams, word.kind == .word || word.kind == .number {
                let scalars = Array(("<" + word.text + ">").unicodeScalars)
                for length in lengths where length <= scalars.count {
                    for start in 0...(scalars.count - length) {
                        var key = "#"
                        key.unicodeScalars.append(contentsOf: scalars[start..<(start + length)])
                        keys.append(key)
                    }
                }
            }
        }
        return keys
    }
}

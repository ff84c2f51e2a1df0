extension Featurizer {
    /// Calls `body` with the hash of every feature of `bytes`, in one pass over the text.
    ///
    /// Every n-gram order is hashed at once while the token's normalized bytes stream by:
    /// the hash of `"a b"` continues from the hash of `"a"`, so no string is ever built.
    /// ``featureKeys(for:)`` is the same computation written plainly, and the tests check that
    /// the two agree.
    func forEachFeatureHash(in bytes: UnsafeBufferPointer<UInt8>, scratch: inout FeatureScratch,
                            _ body: (UInt64) -> Void) {
        let configuration = self.configuration
        let normalization = configuration.tokenizer.normalization
        let maxN = configuration.maxWordNGram
        let simple = maxN == 1 && !configuration.scriptBigrams && configuration.characterNGrams == nil
        scratch.history.removeAll(keepingCapacity: true)
        var previousEnd = -1
        var previousWasIdeographic = false
        var previousUnigram: UInt64 = 0

        configuration.tokenizer.enumerateTokens(inUTF8: bytes) { token in
            let slice = UnsafeBufferPointer(rebasing: bytes[token.range])
            if simple {
                var hash = FeatureHash()
                normalization.forEachNormalizedByte(of: slice) { hash.combine($0) }
                body(hash.value)
                return
            }
            let isIdeographic = token.kind == .ideographic
            let bigram = configuration.scriptBigrams && isIdeographic && previousWasIdeographic
                && previousEnd == token.range.lowerBound
            // states[0]: the word; states[k]: the (k+1)-gram; then the script bigram, if any.
            let ngrams = min(maxN, scratch.history.count + 1)
            scratch.states.removeAll(keepingCapacity: true)
            scratch.states.append(FeatureHash())
            for order in 1..<ngrams {
                var state = FeatureHash(continuing: scratch.history[order - 1])
                state.combine(0x20)
                scratch.states.append(state)
            }
            if bigram { scratch.states.append(FeatureHash(continuing: previousUnigram)) }
            scratch.states.withUnsafeMutableBufferPointer { states in
                normalization.forEachNormalizedByte(of: slice) { byte in
                    for index in states.indices { states[index].combine(byte) }
                }
                for state in states { body(state.value) }
            }
            // The n-grams ending here are the history of the next token.
            scratch.history.removeAll(keepingCapacity: true)
            for order in 0..<min(ngrams, maxN - 1) { scratch.history.append(scratch.states[order].value) }
            previousUnigram = scratch.states[0].value
            previousEnd = token.range.upperBound
            previousWasIdeographic = isIdeographic
            if let lengths = configuration.characterNGrams, token.kind == .word || token.kind == .number {
                forEachCharacterNGramHash(of: slice, lengths: lengths, scratch: &scratch, body)
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

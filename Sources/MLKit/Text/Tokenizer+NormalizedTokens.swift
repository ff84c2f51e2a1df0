extension Tokenizer {
    /// Calls `body` with the normalized UTF-8 bytes of each token of `text`, in order: what
    /// ``tokens(for:)`` returns, without a string per token. The buffer is valid only during
    /// the call, and reused from token to token.
    ///
    /// For the package's own modules (`MLKitCoreML` turns texts into word counts with it): not
    /// public API.
    package func forEachNormalizedToken(in text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        Self.withUTF8(text) { bytes in
            var scratch: [UInt8] = []
            enumerateTokens(inUTF8: bytes) { token in
                let slice = UnsafeBufferPointer(rebasing: bytes[token.range])
                guard unit == .word else { body(slice); return }
                scratch.removeAll(keepingCapacity: true)
                normalization.forEachNormalizedByte(of: slice) { scratch.append($0) }
                scratch.withUnsafeBufferPointer(body)
            }
        }
    }
}

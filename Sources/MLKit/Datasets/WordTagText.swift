/// Reads the `word/TAG` text of tagged corpora (the Penn Treebank's `.pos` files, the People's
/// Daily corpus): one sentence per line, tokens separated by spaces or tabs, each token its word
/// and its tag joined by a slash. The tag follows the last slash, so `I/O/NNP` is the word `I/O`
/// tagged `NNP`. Blank lines are skipped; a line may end with `\r\n`.
enum WordTagText {
    /// Reads every sentence of `bytes`.
    /// - Parameters:
    ///   - file: The file named in errors.
    ///   - replacesInvalidUTF8: Whether ill-formed UTF-8 becomes U+FFFD instead of an error.
    /// - Throws: ``MLKitError`` naming the file, line, column and record (the sentence's 0-based
    ///   index): `malformedData` for a token without a slash, or with an empty word or tag;
    ///   `invalidUTF8`; `invalidDataset` for a file with no sentence.
    static func taggedTokens(in bytes: UnsafeBufferPointer<UInt8>, file: String?,
                             replacesInvalidUTF8: Bool) throws -> [TaggedTokens] {
        let start = bytes.offsetAfterByteOrderMark
        if !replacesInvalidUTF8, let offset = UTF8Validation.firstInvalidOffset(in: bytes, range: start..<bytes.count) {
            throw error("invalid UTF-8 (byte \(bytes[offset].hex) at offset \(offset))", code: .invalidUTF8,
                        at: offset, in: bytes, file: file)
        }
        var sentences: [TaggedTokens] = []
        var labels = LabelInterner()
        var lineStart = start
        var lineNumber = 1
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            let sentence = try readLine(bytes, lineStart..<lineEnd, line: lineNumber, record: sentences.count,
                                        labels: &labels, file: file)
            if let sentence { sentences.append(sentence) }
            lineStart = lineEnd + 1
            lineNumber += 1
        }
        guard !sentences.isEmpty else {
            throw MLKitError(.invalidDataset, "the file is empty", at: file.map { .init(file: $0) })
        }
        return sentences
    }

    /// The sentence on one line, or `nil` for a blank line.
    private static func readLine(_ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>, line number: Int, record: Int,
                                 labels: inout LabelInterner, file: String?) throws -> TaggedTokens? {
        var tokens: [String] = []
        var tags: [String] = []
        var index = line.lowerBound
        while index < line.upperBound {
            if isSpace(bytes[index]) {
                index += 1
                continue
            }
            var end = index
            var slash = -1
            while end < line.upperBound && !isSpace(bytes[end]) {
                if bytes[end] == UInt8(ascii: "/") { slash = end }
                end += 1
            }
            let token = bytes.string(index..<end)
            func fail(_ reason: String) -> MLKitError {
                MLKitError(.malformedData, "token \(tokens.count) (\"\(token)\") \(reason); expected word/TAG",
                           at: .init(file: file, line: number, column: index - line.lowerBound + 1, record: record))
            }
            guard slash >= 0 else { throw fail("has no tag") }
            guard slash > index else { throw fail("has an empty word") }
            guard slash + 1 < end else { throw fail("has an empty tag") }
            tokens.append(bytes.string(index..<slash))
            let tag = UnsafeBufferPointer(rebasing: bytes[(slash + 1)..<end])
            tags.append(labels.label(for: tag) { bytes.string((slash + 1)..<end) })
            index = end
        }
        return tokens.isEmpty ? nil : TaggedTokens(tokens: tokens, labels: tags)
    }

    /// Spaces, tabs and the carriage return of a `\r\n` line end separate tokens.
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }

    private static func error(_ reason: String, code: MLKitError.Code, at offset: Int,
                              in bytes: UnsafeBufferPointer<UInt8>, file: String?) -> MLKitError {
        let position = SourcePosition(of: offset, in: bytes, firstByte: bytes.offsetAfterByteOrderMark)
        return MLKitError(code, reason, at: .init(file: file, line: position.line, column: position.column))
    }
}

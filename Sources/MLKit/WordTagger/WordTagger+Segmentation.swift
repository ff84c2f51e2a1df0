extension WordTagger {
    /// Whether the tagger segments text into words: its labels are B (a word's first
    /// character), M (a middle one), E (its last) and S (a word of one character), and it reads
    /// single characters. Such a tagger is a tokenizer too: ``Tokenizer/init(segmenter:normalization:)``.
    public var isSegmenter: Bool {
        let labels = Set(storage.labels)
        return labels.contains("B") && labels.isSubset(of: ["B", "M", "E", "S"])
    }

    /// Calls `body` with each word of UTF-8 bytes, as this segmenter finds them: each line's
    /// characters (``TokenUnit/character``) are tagged together, and a word starts at a B or S
    /// character, after an E or S character, and after whitespace. Words of punctuation alone are
    /// skipped, as the word tokenizer skips punctuation.
    @usableFromInline
    func enumerateWords(inUTF8 bytes: UnsafeBufferPointer<UInt8>, _ body: (Token) throws -> Void) rethrows {
        let labels = storage.labels
        let starts = labels.map { $0 == "B" || $0 == "S" }, ends = labels.map { $0 == "E" || $0 == "S" }
        var words: [Token] = []
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            var characters: [Token] = []
            Tokenizer.enumerateCharacters(in: UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])) { character in
                characters.append(Token(range: (character.range.lowerBound + lineStart)..<(character.range.upperBound + lineStart),
                                        kind: character.kind))
            }
            if !characters.isEmpty {
                withBestPath(bytes, characters.map(\.range)) { path in
                    var first = 0
                    for index in 1...characters.count {
                        let boundary = index == characters.count || starts[Int(path[index])] || ends[Int(path[index - 1])]
                            || characters[index].range.lowerBound != characters[index - 1].range.upperBound
                        guard boundary else { continue }
                        if let word = Self.word(characters[first..<index]) { words.append(word) }
                        first = index
                    }
                }
            }
            lineStart = lineEnd + 1
        }
        for word in words { try body(word) }
    }

    /// The word made of consecutive characters, or `nil` when they are all punctuation.
    private static func word(_ characters: ArraySlice<Token>) -> Token? {
        let range = characters.first!.range.lowerBound..<characters.last!.range.upperBound
        if characters.count == 1 {
            let kind = characters.first!.kind
            return kind == .punctuation ? nil : Token(range: range, kind: kind)
        }
        if characters.allSatisfy({ $0.kind == .punctuation }) { return nil }
        return Token(range: range, kind: characters.allSatisfy { $0.kind == .number } ? .number : .word)
    }
}

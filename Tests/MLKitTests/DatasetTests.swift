import Foundation
import Testing
import TestSupport
@testable import MLKit

// MARK: - Helpers

/// Reads `text` with `reader`, returning the dataset.
private func read(_ text: String, _ format: DatasetFormat = .jsonArray, source: String = "x.json",
                  reader: DatasetReader = DatasetReader()) throws -> TextDataset {
    try reader.read(data: Data(text.utf8), format: format, source: source)
}

/// The error that `body` throws, or `nil` if it throws none (or a different type).
private func mlkitError(_ body: () throws -> some Any) -> MLKitError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? MLKitError
    }
}

/// The message of the error that reading `text` throws.
private func failure(_ text: String, _ format: DatasetFormat = .jsonArray, source: String = "x.json",
                     reader: DatasetReader = DatasetReader()) -> String? {
    mlkitError { try read(text, format, source: source, reader: reader) }?.description
}

private func failure(bytes: [UInt8], _ format: DatasetFormat = .jsonArray, source: String = "x.json",
                     reader: DatasetReader = DatasetReader()) -> MLKitError? {
    mlkitError { try reader.read(data: Data(bytes), format: format, source: source) }
}

private func pairs(_ dataset: TextDataset) -> [[String]] {
    dataset.examples.map { [$0.text, $0.label] }
}

/// A fresh folder under the temporary directory, removed by `body`'s caller.
private func withTemporaryFolder<T>(_ body: (URL) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory
        .appending(path: "mlkit-datasets-\(UUID().uuidString)", directoryHint: .isDirectory)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
}

private func write(_ bytes: some Sequence<UInt8>, to url: URL) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(),
                                            withIntermediateDirectories: true)
    try Data(bytes).write(to: url)
}

// MARK: - JSON

@Suite("JSON array reader", .onOwnThreads)
struct JSONArrayReaderTests {
    @Test("Reads Create ML's form in order, with its labels sorted")
    func createMLForm() throws {
        let dataset = try read(#"""
        [
          {"text": "Senate passes the bill", "label": "US Politics"},
          {"text": "A new phone ships", "label": "Tech"},
          {"text": "The court rules", "label": "US Politics"}
        ]
        """#)
        #expect(pairs(dataset) == [["Senate passes the bill", "US Politics"], ["A new phone ships", "Tech"],
                                   ["The court rules", "US Politics"]])
        #expect(dataset.labels == ["Tech", "US Politics"])
        #expect(dataset.count == 3)
    }

    @Test("Reads configured column names")
    func configuredColumns() throws {
        let reader = DatasetReader(textColumn: "headline", labelColumn: "category")
        let dataset = try read(#"[{"category": "Tech", "headline": "Chips", "text": "ignored"}]"#, reader: reader)
        #expect(pairs(dataset) == [["Chips", "Tech"]])
    }

    @Test("Decodes every escape, \\u escapes and surrogate pairs")
    func escapes() throws {
        let dataset = try read(#"""
        [{"text": "q\" b\\ s\/ \b\f\n\r\t \u00e9\u0041 \ud83d\ude00 \uD83D\uDE00!", "label": "caf\u00E9"}]
        """#)
        #expect(pairs(dataset) == [["q\" b\\ s/ \u{8}\u{C}\n\r\t éA 😀 😀!", "café"]])
    }

    @Test("A label written raw and with escapes is one label, and escaped keys match")
    func labelsAndEscapedKeys() throws {
        let dataset = try read(#"""
        [{"text": "a", "label": "café"}, {"t\u0065xt": "b", "label": "caf\u00e9"},
         {"text": "c", "l\u0061bel": "Tech\/AI"}, {"text": "d", "label": "Tech/AI"}]
        """#)
        #expect(pairs(dataset) == [["a", "café"], ["b", "café"], ["c", "Tech/AI"], ["d", "Tech/AI"]])
        #expect(dataset.labels == ["Tech/AI", "café"])
    }

    @Test("Collects hundreds of distinct labels, each example keeping its own")
    func manyLabels() throws {
        let names = (0..<300).map { "label \($0 % 150)" + String(repeating: "x", count: $0 % 7) }
        let records = names.enumerated().map { #"{"text": "t\#($0.offset)", "label": "\#($0.element)"}"# }
        let dataset = try read("[" + records.joined(separator: ",") + "]")
        #expect(dataset.examples.map(\.label) == names)
        #expect(dataset.labels == Set(names).sorted())
    }

    @Test("Keeps raw UTF-8 text, and strips a byte-order mark")
    func unicodeText() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"[{"text": "東京 Zürich 🚀", "label": "ü"}]"#.utf8)
        let dataset = try DatasetReader().read(data: Data(bytes), format: .jsonArray)
        #expect(pairs(dataset) == [["東京 Zürich 🚀", "ü"]])
    }

    @Test("Validates and skips other fields of every type")
    func otherFields() throws {
        let dataset = try read(#"""
        [{"id": -12.5e+3, "n": 0, "f": 1E-2, "ok": true, "no": false, "none": null, "tags": ["a", {"b": [[], {}]}],
          "meta": {"k": "v\u00e9", "deep": [1, [2, [3]]]}, "text": "t", "label": "l", "z": "\ud83d\ude00"}]
        """#)
        #expect(pairs(dataset) == [["t", "l"]])
    }

    @Test("The last of repeated keys wins, even over a wrong type")
    func duplicateKeys() throws {
        let dataset = try read(#"[{"text": 1, "label": "a", "text": "second", "label": "b"}]"#)
        #expect(pairs(dataset) == [["second", "b"]])
    }

    @Test("Matches keys written with escapes")
    func escapedKeys() throws {
        #expect(pairs(try read(#"[{"t\u0065xt": "x", "\u006cabel": "y"}]"#)) == [["x", "y"]])
    }

    @Test("An empty array is an empty dataset")
    func emptyArray() throws {
        #expect(try read(" [ ] \n").examples.isEmpty)
    }

    @Test("Skips values nested thousands deep without exhausting the stack")
    func deepNesting() throws {
        let depth = 100_000
        let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let dataset = try read(#"[{"deep": \#(nested), "text": "t", "label": "l"}]"#)
        #expect(dataset.count == 1)
        #expect(failure(#"[{"deep": "# + String(repeating: "[{\"a\":", count: depth))?
            .hasSuffix("expected a value, found end of file") == true)
    }
}

@Suite("JSON error messages", .onOwnThreads)
struct JSONErrorTests {
    @Test("A syntax error names what was expected and what was found")
    func malformed() {
        let text = """
        [
          {"text": "a", "label": "b"},
          {"text": "hi" "label": "Tech"}
        ]
        """
        #expect(failure(text, source: "bad.json")
                == #"bad.json:3:17: expected ',' or '}' after an object member, found '"'"#)
    }

    @Test("A missing field points at the record's opening brace")
    func missingField() {
        let text = """
        [
          {"text": "a", "label": "x"},
          {"text": "b", "label": "y"},
          {"text": "c"}
        ]
        """
        let error = mlkitError { try read(text, source: "texts.json") }
        #expect(error?.description == #"texts.json:4:3: record 2, field "label": missing"#)
        #expect(error?.code == .missingField)
    }

    @Test("A value of the wrong type points at the value")
    func wrongType() {
        let text = """
        [
          {"text": "a", "label": "x"},
          {"text": "b", "label": "y"},
          {"text": "c", "label": "z"},
          {"text": 42, "label": "z"}
        ]
        """
        let error = mlkitError { try read(text, source: "texts.json") }
        #expect(error?.description == #"texts.json:5:12: record 3, field "text": expected a string, found a number"#)
        #expect(error?.code == .wrongType)
    }

    @Test("Labels must be strings", arguments: [
        ("7", "a number"), ("true", "a boolean"), ("null", "null"), ("[]", "an array"), ("{}", "an object"),
    ])
    func labelTypes(value: String, found: String) {
        #expect(failure(#"[{"text": "a", "label": \#(value)}]"#)
                == #"x.json:1:25: record 0, field "label": expected a string, found \#(found)"#)
    }

    @Test("The top level must be an array")
    func topLevel() {
        #expect(failure(#"{"text": "a", "label": "b"}"#)
                == "x.json:1:1: expected a JSON array of objects, found an object")
        #expect(failure(#"  "text""#) == "x.json:1:3: expected a JSON array of objects, found a string")
        #expect(failure("[] []") == "x.json:1:4: expected end of file after the array, found '['")
    }

    @Test("Each record must be an object")
    func recordNotObject() {
        let text = """
        [{"text": "a", "label": "b"},
          "oops"]
        """
        #expect(failure(text) == "x.json:2:3: record 1: expected an object, found a string")
        #expect(failure(#"[{"text": "a", "label": "b"},]"#) == "x.json:1:30: record 1: expected an object, found ']'")
    }

    @Test("Invalid UTF-8 in a string names the byte")
    func invalidUTF8() {
        let bytes = Array("[\n  {\"text\": \"ab".utf8) + [0xFF] + Array("\", \"label\": \"l\"}]".utf8)
        let error = failure(bytes: bytes)
        #expect(error?.description == "x.json:2:15: invalid UTF-8 (byte 0xFF)")
        #expect(error?.code == .invalidUTF8)
    }

    @Test("Rejects overlong forms, encoded surrogates and truncated sequences", arguments: [
        [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80],
    ] as [[UInt8]])
    func illFormedSequences(sequence: [UInt8]) {
        let bytes = Array(#"[{"text": ""#.utf8) + sequence + Array(#"", "label": "l"}]"#.utf8)
        #expect(failure(bytes: bytes)?.description == "x.json:1:12: invalid UTF-8 (byte \(sequence[0].hex))")
    }

    @Test("An empty or blank file is reported as empty")
    func emptyFile() {
        #expect(failure("") == "x.json: the file is empty")
        #expect(failure(" \n\t ") == "x.json: the file is empty")
        #expect(failure("", .jsonLines) == "x.json: the file is empty")
        #expect(mlkitError { try read("") }?.code == .invalidDataset)
    }

    @Test("Malformed strings", arguments: [
        (#"[{"text": "a\x"}]"#, #"x.json:1:14: expected an escape character after '\', found 'x'"#),
        (#"[{"text": "\u12G4"}]"#, #"x.json:1:16: expected 4 hex digits after '\u', found 'G'"#),
        (#"[{"text": "a\ud83d", "label": "b"}]"#, #"x.json:1:13: unpaired surrogate \uD83D in a string"#),
        (#"[{"text": "\ude00x", "label": "b"}]"#, #"x.json:1:12: unpaired surrogate \uDE00 in a string"#),
        (#"[{"text": "\ud83d\u0041", "label": "b"}]"#, #"x.json:1:12: unpaired surrogate \uD83D in a string"#),
        ("[{\"text\": \"a\tb\"}]", "x.json:1:13: control character 0x09 must be escaped in a string"),
        ("[{\"text\": \"ab\n\"}]", #"x.json:1:14: expected '"' to end the string, found end of line"#),
        (#"[{"text": "ab"#, #"x.json:1:14: expected '"' to end the string, found end of file"#),
    ])
    func malformedStrings(text: String, message: String) {
        #expect(failure(text) == message)
    }

    @Test("Malformed numbers, literals and structure", arguments: [
        (#"[{"n": 01}]"#, "x.json:1:9: expected ',' or '}' after an object member, found '1'"),
        (#"[{"n": 1.}]"#, "x.json:1:10: expected a digit in a number, found '}'"),
        (#"[{"n": -}]"#, "x.json:1:9: expected a digit in a number, found '}'"),
        (#"[{"n": 1e+}]"#, "x.json:1:11: expected a digit in a number, found '}'"),
        (#"[{"n": +1}]"#, "x.json:1:8: expected a value, found '+'"),
        (#"[{"n": tru}]"#, "x.json:1:11: expected 'true', found '}'"),
        (#"[{"n": nul"#, "x.json:1:11: expected 'null', found end of file"),
        (#"[{"n" 1}]"#, "x.json:1:7: expected ':' after an object key, found '1'"),
        (#"[{n: 1}]"#, "x.json:1:3: expected a string key or '}', found 'n'"),
        (#"[{"n": 1,}]"#, "x.json:1:10: expected a string key, found '}'"),
        (#"[{"n": [1,]}]"#, "x.json:1:11: expected a value, found ']'"),
        (#"[{"n": [1 2]}]"#, "x.json:1:11: expected ',' or ']' after an array element, found '2'"),
        (#"[{"n": 'a'}]"#, "x.json:1:8: expected a value, found '''"),
        (#"[{"n": é}]"#, "x.json:1:8: expected a value, found 'é'"),
        (#"[{"text": "a", "label": "b"}"#, "x.json:1:29: expected ',' or ']' after an array element, found end of file"),
        ("[", "x.json:1:2: expected a value or ']', found end of file"),
    ])
    func malformedValues(text: String, message: String) {
        #expect(failure(text) == message)
    }

    @Test("Never crashes on a truncated or corrupted JSON or CSV document")
    func truncatedAndCorrupted() {
        let document = Array(#"""
        [{"text": "caf\u00e9 \ud83d\ude00 \"q\" 東京", "label": "Tech", "x": [1.5e3, -0, true, null, {"a": []}]},
         {"label": "Politics", "text": "ok"}]
        """#.utf8)
        for length in 0 ... document.count {
            _ = try? DatasetReader().read(data: Data(document.prefix(length)), format: .jsonArray)
        }
        for index in document.indices {
            for replacement: UInt8 in [0x00, 0x22, 0x5C, 0x7B, 0x5D, 0xFF, 0xC3] {
                var corrupted = document
                corrupted[index] = replacement
                _ = try? DatasetReader().read(data: Data(corrupted), format: .jsonArray)
                _ = try? DatasetReader(invalidUTF8: .replace).read(data: Data(corrupted), format: .jsonLines)
            }
        }
        let csv = Array("text,label\r\n\"a, \"\"b\"\"\nc\",x\r\nplain,y\n".utf8)
        for length in 0 ... csv.count {
            for replacement: UInt8 in [0x22, 0x2C, 0x0A, 0x0D, 0xFF] where length < csv.count {
                var corrupted = Array(csv.prefix(length + 1))
                corrupted[length] = replacement
                _ = try? DatasetReader().read(data: Data(corrupted), format: .csv)
                _ = try? DatasetReader(invalidUTF8: .replace).read(data: Data(corrupted), format: .csv)
            }
        }
    }
}

@Suite("Invalid UTF-8 handling", .onOwnThreads)
struct InvalidUTF8Tests {
    private let replacing = DatasetReader(invalidUTF8: .replace)

    @Test("Replace turns each ill-formed sequence into U+FFFD")
    func replaceInJSON() throws {
        let bytes = Array(#"[{"text": "a"#.utf8) + [0xFF, 0x62, 0xE2, 0x82] + Array(#"\n", "label": "l"#.utf8)
            + [0xC3] + Array(#""}]"#.utf8)
        let dataset = try replacing.read(data: Data(bytes), format: .jsonArray)
        #expect(pairs(dataset) == [["a\u{FFFD}b\u{FFFD}\n", "l\u{FFFD}"]])
    }

    @Test("Replace turns unpaired surrogate escapes into U+FFFD")
    func replaceSurrogates() throws {
        let dataset = try read(#"[{"text": "\ud83dx\ude00", "label": "l"}]"#, reader: replacing)
        #expect(pairs(dataset) == [["\u{FFFD}x\u{FFFD}", "l"]])
    }

    @Test("Replace applies to CSV too; fail names line and column")
    func csv() throws {
        let bytes = Array("text,label\nok,a\nb".utf8) + [0xFE] + Array("d,b\n".utf8)
        let dataset = try replacing.read(data: Data(bytes), format: .csv)
        #expect(pairs(dataset) == [["ok", "a"], ["b\u{FFFD}d", "b"]])
        let error = failure(bytes: bytes, .csv, source: "data.csv")
        #expect(error?.description == "data.csv:3:2: invalid UTF-8 (byte 0xFE)")
        #expect(error?.code == .invalidUTF8)
    }
}

@Suite("JSON Lines reader", .onOwnThreads)
struct JSONLinesReaderTests {
    @Test("Reads one object per line, skipping blank lines")
    func lines() throws {
        let dataset = try read("""
        {"text": "a", "label": "x"}

        {"text": "b", "label": "y"}\r
           \t
        {"text": "c", "label": "x"}
        """, .jsonLines)
        #expect(pairs(dataset) == [["a", "x"], ["b", "y"], ["c", "x"]])
    }

    @Test("Errors use real line numbers; records count non-blank lines")
    func lineNumbers() {
        let text = """
        {"text": "a", "label": "x"}

        {"text": "b", "label": "y"}

        {"text": "c"}
        """
        #expect(failure(text, .jsonLines, source: "x.jsonl") == #"x.jsonl:5:1: record 2, field "label": missing"#)
    }

    @Test("A record must end its line")
    func oneRecordPerLine() {
        #expect(failure(#"{"text": "a", "label": "x"} {"text": "b", "label": "y"}"#, .jsonLines)
                == "x.json:1:29: expected end of line after the record, found '{'")
        #expect(failure("[1]", .jsonLines) == "x.json:1:1: record 0: expected an object, found an array")
    }
}

// MARK: - Word tagger

@Suite("Word-tagger reader", .onOwnThreads)
struct TaggedTokensTests {
    @Test("Reads tokens and labels")
    func tokensAndLabels() throws {
        let rows = try DatasetReader().readTaggedTokens(data: Data(#"""
        [{"tokens": ["Apple", "ships", "iOS"], "labels": ["COMPANY", "NONE", "OPERATING_SYSTEM"]},
         {"labels": ["NONE"], "tokens": ["today"]}]
        """#.utf8))
        #expect(rows == [TaggedTokens(tokens: ["Apple", "ships", "iOS"], labels: ["COMPANY", "NONE", "OPERATING_SYSTEM"]),
                         TaggedTokens(tokens: ["today"], labels: ["NONE"])])
    }

    @Test("JSON Lines, and other field names")
    func jsonLinesAndColumns() throws {
        let data = Data("""
        {"words": ["Xcode", "12"], "tags": ["SOFTWARE", "NONE"]}

        {"tags": ["EVENT"], "words": ["WWDC"], "other": 1}
        """.utf8)
        let rows = try DatasetReader().readTaggedTokens(data: data, format: .jsonLines, tokensKey: "words", labelsKey: "tags")
        #expect(rows == [TaggedTokens(tokens: ["Xcode", "12"], labels: ["SOFTWARE", "NONE"]),
                         TaggedTokens(tokens: ["WWDC"], labels: ["EVENT"])])
        #expect(mlkitError { try DatasetReader().readTaggedTokens(data: data, format: .jsonLines) }?.description
                == #"line 1, column 1: record 0, field "tokens": missing"#)
    }

    @Test("word/TAG text: one sentence a line, the tag after the last slash")
    func wordTags() throws {
        let data = Data("\u{FEFF}Apple/COMPANY announced/NONE  iOS/OS\r\n\n  I/O/EVENT\t2020/NONE\n".utf8)
        let rows = try DatasetReader().readTaggedTokens(data: data, format: .wordTags)
        #expect(rows == [TaggedTokens(tokens: ["Apple", "announced", "iOS"], labels: ["COMPANY", "NONE", "OS"]),
                         TaggedTokens(tokens: ["I/O", "2020"], labels: ["EVENT", "NONE"])])
        let file = try TaggerFixtures.headlines()
        #expect(try DatasetReader().readTaggedTokens(contentsOf: TaggerFixtures.url("tech-headlines.txt")) == file)
    }

    @Test("word/TAG errors name the file, line, column, sentence and token")
    func wordTagErrors() {
        func failure(_ text: String) -> String? {
            mlkitError { try DatasetReader().readTaggedTokens(data: Data(text.utf8), format: .wordTags, source: "pos.txt") }?
                .description
        }
        #expect(failure("a/X b/Y\n\nc/X d e/Y\n") == #"pos.txt:3:5: record 1: token 1 ("d") has no tag; expected word/TAG"#)
        #expect(failure("a/X /Y\n") == #"pos.txt:1:5: record 0: token 1 ("/Y") has an empty word; expected word/TAG"#)
        #expect(failure("a/X b/\n") == #"pos.txt:1:5: record 0: token 1 ("b/") has an empty tag; expected word/TAG"#)
        #expect(failure(" \n\n") == "pos.txt: the file is empty")
        #expect(mlkitError {
            try DatasetReader().readTaggedTokens(data: Data([0x61, 0x2F, 0x58, 0x20, 0xFF]), format: .wordTags, source: "pos.txt")
        }?.description == "pos.txt:1:5: invalid UTF-8 (byte 0xFF at offset 4)")
        #expect(mlkitError { try DatasetReader().read(data: Data("a/X".utf8), format: .wordTags) }?.code == .invalidParameter)
    }

    @Test("An empty row and a single label are refused, naming the row or the field")
    func emptyRowAndSingleLabel() throws {
        let empty = Data(#"[{"tokens": ["a"], "labels": ["X"]}, {"labels": [], "tokens": []}]"#.utf8)
        #expect(mlkitError { try DatasetReader().readTaggedTokens(data: empty, source: "labels.json") }?.description
                == #"labels.json:1:38: record 1, field "tokens": the row is empty: a sentence needs at least one token"#)
        let single = try DatasetReader().readTaggedTokens(data: Data(#"[{"tokens": ["a", "b"], "labels": ["X", "X"]}]"#.utf8))
        #expect(mlkitError { try TaggedTokens.validatedForTraining(single, source: "labels.json") }?.description
                == #"labels.json: field "labels": only one label ("X") in 1 row — training needs at least two"#)
        #expect(mlkitError { try TaggedTokens.validatedForTraining([], source: "labels.json") }?.description
                == "labels.json: the dataset is empty")
    }

    @Test("Tagger data is told from classifier data by its format or its first record")
    func detection() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-detect-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func holds(_ name: String, _ text: String, key: String = "tokens") throws -> Bool {
            let url = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return try DatasetReader().holdsTaggedTokens(at: url, tokensKey: key)
        }
        #expect(try holds("a.json", #"[{"tokens": ["a"], "labels": ["X"]}]"#))
        #expect(try holds("b.jsonl", #"{"labels": ["X"], "tokens": ["a"]}"#))
        #expect(try holds("c.json", #"{"words": ["a"], "labels": ["X"]}"#, key: "words"))
        #expect(try holds("d.txt", "a/X"))
        #expect(try !holds("e.json", #"[{"text": "a", "label": "X"}]"#))
        #expect(try !holds("f.csv", "text,label\na,X\n"))
        #expect(try !holds("g.json", "[1, 2"))
        #expect(try !holds("h.json", ""))
    }

    @Test("Counts that differ name the record and both counts")
    func countMismatch() {
        let error = mlkitError {
            try DatasetReader().readTaggedTokens(data: Data(#"""
            [{"tokens": ["a"], "labels": ["X"]},
             {"tokens": ["a", "b"], "labels": ["X"]}]
            """#.utf8), source: "labels.json")
        }
        #expect(error?.description == #"labels.json:2:2: record 1: "tokens" has 2 items but "labels" has 1"#)
    }

    @Test("Tokens must be arrays of strings")
    func types() {
        let reader = DatasetReader()
        let badToken = Data(#"[{"tokens": ["a", 1], "labels": ["X", "Y"]}]"#.utf8)
        #expect(mlkitError { try reader.readTaggedTokens(data: badToken) }?.description
                == #"line 1, column 19: record 0, field "tokens": expected an array of strings, "#
                + "found a number at index 1")
        #expect(mlkitError { try reader.readTaggedTokens(data: Data(#"[{"tokens": "a b", "labels": []}]"#.utf8)) }?
            .description == #"line 1, column 13: record 0, field "tokens": expected an array of strings, found a string"#)
        #expect(mlkitError { try reader.readTaggedTokens(data: Data(#"[{"tokens": []}]"#.utf8)) }?
            .description == #"line 1, column 2: record 0, field "labels": missing"#)
        #expect(mlkitError { try reader.readTaggedTokens(data: Data("a,b".utf8), format: .csv) }?.code
                == .invalidParameter)
    }
}

// MARK: - CSV

@Suite("CSV reader", .onOwnThreads)
struct CSVReaderTests {
    @Test("Reads quoted fields, doubled quotes, embedded newlines and CRLF")
    func rfc4180() throws {
        let text = "id,text,label\r\n1,plain,a\r\n2,\"with, comma\",b\r\n3,\"say \"\"hi\"\"\",a\r\n"
            + "4,\"two\r\nlines\",\"b\"\r\n5,,\"\"\r\n"
        let dataset = try read(text, .csv)
        #expect(pairs(dataset) == [["plain", "a"], ["with, comma", "b"], ["say \"hi\"", "a"],
                                   ["two\r\nlines", "b"], ["", ""]])
    }

    @Test("Finds configured columns by name, with LF, blank lines, a BOM and no final newline")
    func columnsByName() throws {
        let csv = "category,note,headline\nTech,x,Chips\n\nPolitics,y,\"Vote\nnow\""
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(csv.utf8)
        let reader = DatasetReader(textColumn: "headline", labelColumn: "category")
        let dataset = try reader.read(data: Data(bytes), format: .csv)
        #expect(pairs(dataset) == [["Chips", "Tech"], ["Vote\nnow", "Politics"]])
    }

    @Test("A header alone is an empty dataset")
    func headerOnly() throws {
        #expect(try read("text,label\n", .csv).examples.isEmpty)
    }

    @Test("A missing column lists the header")
    func missingColumn() {
        let error = mlkitError { try read("text,category\na,b\n", .csv, source: "data.csv") }
        #expect(error?.description == #"data.csv:1: field "label": no such column; the header has "text", "category""#)
        #expect(error?.code == .missingField)
    }

    @Test("A record with the wrong number of fields names its line and index")
    func fieldCount() {
        let text = "text,label\na,x\nb,y\nc,x\nd,y\ne,x\nf,y,extra\n"
        #expect(failure(text, .csv, source: "data.csv") == "data.csv:7: record 5: expected 2 fields, found 3")
        #expect(failure("text,label\n\"multi\nline\",x\nshort\n", .csv, source: "data.csv")
                == "data.csv:4: record 1: expected 2 fields, found 1")
    }

    @Test("Quoting errors point at the quote")
    func quoting() {
        #expect(failure("text,label\na,b\nc,\"open\n", .csv, source: "data.csv")
                == #"data.csv:3:3: unterminated quoted field: no closing '"' before the end of the file"#)
        #expect(failure("text,label\n\"a\"b,c\n", .csv, source: "data.csv")
                == "data.csv:2:4: expected ',' or end of line after a quoted field, found 'b'")
        #expect(failure("text,label\nsay \"hi\",c\n", .csv, source: "data.csv")
                == #"data.csv:2:5: unexpected '"' in an unquoted field "#
                + "(a field holding quotes must be quoted, with each quote doubled)")
    }

    @Test("An empty file is reported as empty")
    func empty() {
        #expect(failure("", .csv, source: "data.csv") == "data.csv: the file is empty")
        #expect(failure("\r\n\n", .csv, source: "data.csv") == "data.csv: the file is empty")
    }
}

// MARK: - Files and folders

@Suite("Files, folders and format inference", .onOwnThreads)
struct FileReaderTests {
    @Test("Infers the format from the extension")
    func inference() throws {
        try withTemporaryFolder { folder in
            let jsonl = folder.appending(path: "a.NDJSON")
            try write(#"{"text": "a", "label": "x"}"#.utf8, to: jsonl)
            #expect(pairs(try DatasetReader().read(contentsOf: jsonl)) == [["a", "x"]])
            let csv = folder.appending(path: "b.csv")
            try write("text,label\nb,y\n".utf8, to: csv)
            #expect(pairs(try DatasetReader().read(contentsOf: csv)) == [["b", "y"]])
            let unknown = folder.appending(path: "c.xml")
            try write("x".utf8, to: unknown)
            let error = mlkitError { try DatasetReader().read(contentsOf: unknown) }
            #expect(error?.code == .invalidParameter)
            #expect(error?.description.hasPrefix(unknown.relativePath + ": cannot tell the format") == true)
            // .txt is word/TAG text, which only a word tagger reads.
            let tagged = folder.appending(path: "d.txt")
            try write("x/Y".utf8, to: tagged)
            let taggerData = mlkitError { try DatasetReader().read(contentsOf: tagged) }
            #expect(taggerData?.code == .invalidParameter)
            #expect(taggerData?.description.contains("word/TAG text holds word-tagger data") == true)
        }
    }

    @Test("A .json file that starts with '{' is read as JSON Lines; named formats are kept")
    func sniffsJSONLines() throws {
        try withTemporaryFolder { folder in
            let file = folder.appending(path: "lines.json")
            try write("  {\"text\": \"a\", \"label\": \"x\"}\n{\"text\": \"b\", \"label\": \"y\"}\n".utf8, to: file)
            #expect(pairs(try DatasetReader().read(contentsOf: file)) == [["a", "x"], ["b", "y"]])
            let error = mlkitError { try DatasetReader().read(contentsOf: file, format: .jsonArray) }
            #expect(error?.description == "\(file.relativePath):1:3: expected a JSON array of objects, found an object")
        }
    }

    @Test("A missing file is reported as not found")
    func missingFile() {
        let url = URL(fileURLWithPath: "/nonexistent/mlkit/texts.json")
        let error = mlkitError { try DatasetReader().read(contentsOf: url) }
        #expect(error?.description == "/nonexistent/mlkit/texts.json: no such file or folder")
        #expect(error?.code == .fileNotFound)
    }

    @Test("The text and label columns must differ")
    func sameColumns() {
        let reader = DatasetReader(textColumn: "x", labelColumn: "x")
        #expect(mlkitError { try read("[]", reader: reader) }?.code == .invalidParameter)
    }
}

@Suite("Labelled directory reader", .onOwnThreads)
struct DirectoryReaderTests {
    @Test("Reads label folders and .txt files in sorted order, ignoring hidden and other files")
    func labelledFolders() throws {
        try withTemporaryFolder { folder in
            try write("b2".utf8, to: folder.appending(path: "Tech/b.txt"))
            try write("a1".utf8, to: folder.appending(path: "Tech/a.TXT"))
            try write("hidden".utf8, to: folder.appending(path: "Tech/.c.txt"))
            try write("notes".utf8, to: folder.appending(path: "Tech/readme.md"))
            try write([0xEF, 0xBB, 0xBF] + Array("vote\n".utf8), to: folder.appending(path: "Politics/1.txt"))
            try write("x".utf8, to: folder.appending(path: ".git/HEAD.txt"))
            try write("x".utf8, to: folder.appending(path: "top.txt"))
            let dataset = try DatasetReader().read(contentsOf: folder)
            #expect(pairs(dataset) == [["vote\n", "Politics"], ["a1", "Tech"], ["b2", "Tech"]])
            #expect(pairs(try DatasetReader().read(contentsOf: folder, format: .directory)) == pairs(dataset))
        }
    }

    @Test("Invalid UTF-8 names the file; replace mode reads it")
    func invalidUTF8() throws {
        try withTemporaryFolder { folder in
            try write("ok".utf8, to: folder.appending(path: "A/1.txt"))
            try write(Array("line\nab".utf8) + [0xFF], to: folder.appending(path: "B/2.txt"))
            let error = mlkitError { try DatasetReader().read(contentsOf: folder) }
            #expect(error?.description == "\(folder.relativePath)/B/2.txt:2:3: invalid UTF-8 (byte 0xFF)")
            let dataset = try DatasetReader(invalidUTF8: .replace).read(contentsOf: folder)
            #expect(pairs(dataset) == [["ok", "A"], ["line\nab\u{FFFD}", "B"]])
        }
    }

    @Test("A folder without examples is an invalid dataset")
    func emptyFolder() throws {
        try withTemporaryFolder { folder in
            try FileManager.default.createDirectory(at: folder.appending(path: "Tech"), withIntermediateDirectories: true)
            let error = mlkitError { try DatasetReader().read(contentsOf: folder) }
            #expect(error?.code == .invalidDataset)
            #expect(error?.description
                    == "\(folder.relativePath): no examples: expected sub-folders named by label that hold .txt files")
        }
    }

    @Test("Bytes in memory cannot be a directory dataset")
    func noDirectoryFromData() {
        #expect(mlkitError { try read("x", .directory) }?.code == .invalidParameter)
    }
}

// MARK: - Datasets and splits

@Suite("Dataset validation", .onOwnThreads)
struct DatasetValidationTests {
    @Test("An empty dataset cannot be trained on")
    func empty() {
        let error = mlkitError { try TextDataset([]).validatedForTraining(source: "texts.json") }
        #expect(error?.description == "texts.json: the dataset is empty")
        #expect(error?.code == .invalidDataset)
    }

    @Test("A single label cannot be trained on")
    func singleLabel() {
        let dataset = TextDataset([LabeledText(text: "a", label: "Tech"), LabeledText(text: "b", label: "Tech")])
        let error = mlkitError { try dataset.validatedForTraining(source: "texts.json") }
        #expect(error?.description == #"texts.json: only one label ("Tech") — training needs at least two"#)
    }

    @Test("Two labels pass")
    func twoLabels() throws {
        let dataset = TextDataset([LabeledText(text: "a", label: "B"), LabeledText(text: "b", label: "A")])
        #expect(try dataset.validatedForTraining().labels == ["A", "B"])
    }
}

@Suite("Seeded stratified splits", .onOwnThreads)
struct DatasetSplitTests {
    /// 60 of "a", 30 of "b", 10 of "c", interleaved; each text is its index.
    private let dataset = TextDataset((0 ..< 100).map { index in
        LabeledText(text: String(index), label: index % 10 == 9 ? "c" : index % 3 == 0 ? "b" : "a")
    })

    private func texts(_ part: TextDataset) -> [String] { part.examples.map(\.text) }

    @Test("SplitMix64 matches the published sequence")
    func splitMix64() {
        var generator = SplitMix64(seed: 0)
        #expect([generator.next(), generator.next(), generator.next()]
                == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    @Test("The same seed gives the same split, pinned so it never changes across machines or versions")
    func deterministic() throws {
        let first = try dataset.split(validationFraction: 0.2, testFraction: 0.1, seed: 42)
        let second = try dataset.split(validationFraction: 0.2, testFraction: 0.1, seed: 42)
        #expect(texts(first.validation) == texts(second.validation))
        #expect(texts(first.test) == texts(second.test))
        let small = TextDataset((0 ..< 10).map { LabeledText(text: String($0), label: $0 < 5 ? "x" : "y") })
        let pinned = try small.split(validationFraction: 0.4, seed: 7)
        #expect(texts(pinned.validation) == PinnedSplit.validation)
    }

    @Test("Each part holds each label's share, rounded, in the original order")
    func stratified() throws {
        let split = try dataset.split(validationFraction: 0.2, testFraction: 0.1, seed: 1)
        func count(_ part: TextDataset, _ label: String) -> Int { part.examples.filter { $0.label == label }.count }
        for (label, total) in [("a", 60), ("b", 30), ("c", 10)] {
            #expect(count(split.validation, label) == Int((Double(total) * 0.2).rounded()))
            #expect(count(split.test, label) == Int((Double(total) * 0.1).rounded()))
            #expect(count(split.training, label) + count(split.validation, label) + count(split.test, label) == total)
        }
        for part in [split.training, split.validation, split.test] {
            let indices = texts(part).compactMap(Int.init)
            #expect(indices == indices.sorted())
        }
        let all = Set(texts(split.training) + texts(split.validation) + texts(split.test))
        #expect(all.count == 100)
    }

    @Test("Different seeds give different splits")
    func seedsDiffer() throws {
        let first = try dataset.split(validationFraction: 0.2, seed: 1)
        let second = try dataset.split(validationFraction: 0.2, seed: 2)
        #expect(texts(first.validation) != texts(second.validation))
        #expect(first.test.examples.isEmpty)
    }

    @Test("Every label keeps an example in training")
    func trainingKeepsEachLabel() throws {
        let tiny = TextDataset([LabeledText(text: "1", label: "x"), LabeledText(text: "2", label: "x"),
                                LabeledText(text: "3", label: "y")])
        let split = try tiny.split(validationFraction: 0.5, testFraction: 0.45, seed: 3)
        #expect(split.training.labels == ["x", "y"])
        #expect(split.validation.count + split.test.count == 1)
    }

    @Test("Fractions must be in range", arguments: [(-0.1, 0.0), (1.0, 0.0), (0.5, 0.5), (.nan, 0.0), (0.1, .infinity)])
    func badFractions(validation: Double, test: Double) {
        #expect(mlkitError { try dataset.split(validationFraction: validation, testFraction: test, seed: 0) }?.code
                == .invalidParameter)
    }
}

/// The validation part of `0..<10` (labels x: 0–4, y: 5–9), fraction 0.4, seed 7, as an
/// independent implementation of SplitMix64, Lemire's bounded draw and Fisher–Yates computes it.
private enum PinnedSplit {
    static let validation = ["3", "4", "8", "9"]
}

// MARK: - Reference files

@Suite("Reference chapter files", .onOwnThreads)
struct ReferenceFileTests {
    private func file(_ name: String) -> URL { SeedArtifacts.url(name) }

    @Test("texts.json: 30 headlines, 16 US Politics and 14 Tech", .needsSeedArtifacts("texts.json"))
    func texts() throws {
        let dataset = try DatasetReader().read(contentsOf: file("texts.json")).validatedForTraining()
        #expect(dataset.count == 30)
        #expect(dataset.labels == ["Tech", "US Politics"])
        #expect(dataset.examples.filter { $0.label == "US Politics" }.count == 16)
        #expect(dataset.examples.first?.text == "Peek inside Trump's total non-vacation in New Jersey")
        let split = try dataset.split(validationFraction: 0.2, seed: 2020)
        #expect(split.validation.count == 6)
        #expect(split.training.labels == dataset.labels)
    }

    @Test("labels.json: 12 word-tagger rows with matching counts", .needsSeedArtifacts("labels.json"))
    func labels() throws {
        let rows = try DatasetReader().readTaggedTokens(contentsOf: file("labels.json"))
        #expect(rows.count == 12)
        #expect(rows.allSatisfy { $0.tokens.count == $0.labels.count && !$0.tokens.isEmpty })
        #expect(rows.first?.tokens.prefix(2) == ["Ralph", "Nader"])
        #expect(rows.contains { $0.labels.contains("COMPANY") })
    }
}

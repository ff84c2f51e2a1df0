import Foundation
import TestSupport
import Testing

/// The word-tagger fixtures of the core's tests.
private enum Fixtures {
    static let folder = CLI.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures")
    static let headlines = folder.appendingPathComponent("tagger/tech-headlines.json").path
    static let headlinesText = folder.appendingPathComponent("tagger/tech-headlines.txt").path
    static let segmentation = folder.appendingPathComponent("tagger/segmentation.jsonl").path
    static let tagger = folder.appendingPathComponent("models/v4-headlines-tagger.mlkit").path
    static let classifier = folder.appendingPathComponent("models/v3-headlines-svm.mlkit").path
}

@Suite("mlkit train, tag, evaluate, info and tokenize with word taggers", .timeLimit(.minutes(10)), .onOwnThreads)
struct TaggerCommandTests {
    @Test("tag streams --input to --output in the input's order, across batches")
    func streamsFiles() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("texts.txt")
        let output = folder.appendingPathComponent("tags.jsonl")
        let count = 20_000  // several of the pipeline's batches
        try (0..<count).map { "Apple ships \($0)\n" }.joined().write(to: input, atomically: true, encoding: .utf8)
        let result = try CLI.run(["tag", "--model", Fixtures.tagger, "--json", "--input", input.path, "--output", output.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3 * count)
        let numbers = lines.compactMap { line -> (Int, String)? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let text = object["text"] as? Int, let token = object["token"] as? String else { return nil }
            return (text, token)
        }.filter { $0.1 != "Apple" && $0.1 != "ships" }
        #expect(numbers.map(\.0) == Array(0..<count), "each text's index, in order")
        #expect(numbers.map(\.1) == (0..<count).map(String.init), "each text's own tokens")

        let both = try CLI.run(["tag", "--model", Fixtures.tagger, "--input", input.path, "Apple"])
        #expect(both.status == 64, "\(both.stderr)")
    }

    @Test("train recognises tagger data, and tag prints each token and its label")
    func trainAndTag() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("tagger.mlkit").path
        let trained = try CLI.run(["train", Fixtures.headlines, "-o", model, "--author", "Ada"])
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stdout.contains("task                 word tagger"))
        #expect(trained.stdout.contains("training accuracy    1.0000 (tokens)"))
        #expect(trained.stdout.contains("examples             40 sentences, 254 tokens, 5 labels"))

        let tagged = try CLI.run(["tag", "--model", model, "Google announced Android 11 at Google I/O"])
        #expect(tagged.status == 0, "\(tagged.stderr)")
        #expect(tagged.stdout == "Google\tCOMPANY\nannounced\tNONE\nAndroid\tOS\n11\tNONE\nat\tNONE\nGoogle\tCOMPANY\nI\tEVENT\nO\tEVENT\n")

        let json = try CLI.run(["tag", "--model", model, "--json", "--top", "2", "Apple ships iOS"])
        let lines = json.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 3)
        #expect(lines.first??["token"] as? String == "Apple")
        #expect(lines.first??["label"] as? String == "COMPANY")
        #expect(lines.last??["start"] as? Int == 12)
        #expect(lines.last??["end"] as? Int == 15)
        #expect((lines.first??["probabilities"] as? [String: Double])?.count == 2)

        // Standard input: one text a line, each followed by an empty line.
        let batch = try CLI.run(["tag", "--model", model], input: Data("Apple ships\nSony skips E3\n".utf8))
        #expect(batch.stdout == "Apple\tCOMPANY\nships\tNONE\n\nSony\tCOMPANY\nskips\tNONE\nE3\tEVENT\n\n")

        let info = try CLI.run(["info", model])
        #expect(info.stdout.contains("kind                word tagger"))
        #expect(info.stdout.contains("format version      4"))
        #expect(info.stdout.contains("labels              5: COMPANY, EVENT, NONE, OS, PRODUCT"))
        #expect(info.stdout.contains("author              Ada"))

        let evaluated = try CLI.run(["evaluate", model, Fixtures.headlinesText, "--json"])
        #expect(evaluated.status == 0, "\(evaluated.stderr)")
        let metrics = try JSONSerialization.jsonObject(with: Data(evaluated.stdout.utf8)) as? [String: Any]
        #expect(metrics?["tokenAccuracy"] as? Double == 1)
        #expect(metrics?["tokens"] as? Int == 254)
        #expect((metrics?["entities"] as? [String: Any])?["f1"] as? Double == 1)
        let table = try CLI.run(["evaluate", model, Fixtures.headlines])
        #expect(table.stdout.contains("token accuracy  1.0000"))
        #expect(table.stdout.contains("confusion matrix (rows: actual, columns: predicted)"))
    }

    @Test("--task, --algorithm, --token-column and --label-column")
    func options() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("words.jsonl")
        let rows = try String(contentsOfFile: Fixtures.headlines, encoding: .utf8)
            .replacingOccurrences(of: "\"tokens\"", with: "\"words\"").replacingOccurrences(of: "\"labels\"", with: "\"tags\"")
        let array = try JSONSerialization.jsonObject(with: Data(rows.utf8)) as? [[String: [String]]] ?? []
        try Data(array.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
            .joined(separator: "\n").utf8).write(to: data)
        let model = folder.appendingPathComponent("m.mlkit").path
        // Without --token-column the rows look like nothing known.
        let unknown = try CLI.run(["train", data.path, "-o", model])
        #expect(unknown.status == 65)
        let trained = try CLI.run(["train", data.path, "-o", model, "--token-column", "words", "--label-column", "tags",
                                   "--algorithm", "perceptron"])
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stdout.contains("algorithm            perceptron"))
        let forced = try CLI.run(["train", data.path, "-o", model, "--task", "tagger", "--token-column", "words",
                                  "--label-column", "tags", "--algorithm", "crf", "--max-iterations", "5"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout.contains("iterations=5"))

        let wrongAlgorithm = try CLI.run(["train", Fixtures.headlines, "-o", model, "--algorithm", "svm"])
        #expect(wrongAlgorithm.status == 64)
        #expect(wrongAlgorithm.stderr.contains("a word tagger's algorithms are auto, crf, perceptron"))
        let classifierOnly = try CLI.run(["train", Fixtures.headlines, "-o", model, "--ngrams", "2"])
        #expect(classifierOnly.status == 64)
        #expect(classifierOnly.stderr.contains("--ngrams"))
        let asClassifier = try CLI.run(["train", Fixtures.headlines, "-o", model, "--task", "classifier"])
        #expect(asClassifier.status == 65)
        #expect(asClassifier.stderr.contains(#"field "text": missing"#))
    }

    @Test("Data errors name the file, row and field, with exit code 65")
    func dataErrors() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func train(_ name: String, _ text: String) throws -> ChildProcess.Result {
            let file = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            return try CLI.run(["train", file.path, "-o", folder.appendingPathComponent("m.mlkit").path])
        }
        let counts = try train("counts.json", #"[{"tokens": ["a", "b"], "labels": ["X"]}]"#)
        #expect(counts.status == 65)
        #expect(counts.stderr.hasSuffix(#"counts.json:1:2: record 0: "tokens" has 2 items but "labels" has 1"# + "\n"))
        let empty = try train("empty.json", #"[{"tokens": ["a"], "labels": ["X"]}, {"tokens": [], "labels": []}]"#)
        #expect(empty.status == 65)
        #expect(empty.stderr.contains(#"record 1, field "tokens": the row is empty"#))
        let single = try train("single.json", #"[{"tokens": ["a", "b"], "labels": ["X", "X"]}]"#)
        #expect(single.status == 65)
        #expect(single.stderr.contains(#"single.json: field "labels": only one label ("X") in 1 row"#))
        let untagged = try train("pos.txt", "a/X b/Y\nc d/X\n")
        #expect(untagged.status == 65)
        #expect(untagged.stderr.contains(#"pos.txt:2:1: record 1: token 0 ("c") has no tag"#))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("m.mlkit").path))
    }

    @Test("A model of the wrong kind for the verb is refused with exit code 65")
    func wrongKind() throws {
        let predict = try CLI.run(["predict", "--model", Fixtures.tagger, "Apple ships iOS"])
        #expect(predict.status == 65)
        #expect(predict.stderr.contains(#"field "kind": this is a word tagger's model file, not a text classifier's"#))
        let tag = try CLI.run(["tag", "--model", Fixtures.classifier, "Apple ships iOS"])
        #expect(tag.status == 65)
        #expect(tag.stderr.contains(#"field "kind": this is a text classifier's model file, not a word tagger's"#))
        let segmenter = try CLI.run(["tokenize", "--tokenizer", "model:\(Fixtures.tagger)", "北京"])
        #expect(segmenter.status == 65)
        #expect(segmenter.stderr.contains("this word tagger is not a segmenter"))
        let truncated = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: truncated) }
        let cut = truncated.appendingPathComponent("cut.mlkit")
        try Data(try Data(contentsOf: URL(fileURLWithPath: Fixtures.tagger)).prefix(5000)).write(to: cut)
        let damaged = try CLI.run(["tag", "--model", cut.path, "Apple"])
        #expect(damaged.status == 65)
        #expect(damaged.stderr.contains("truncated or damaged"))
        let missing = try CLI.run(["tag", "--model", truncated.appendingPathComponent("none.mlkit").path, "Apple"])
        #expect(missing.status == 66)
    }

    @Test("tokenize --tokenizer model:FILE segments Chinese with a trained segmenter")
    func segmenter() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("seg.mlkit").path
        let trained = try CLI.run(["train", Fixtures.segmentation, "-o", model, "--algorithm", "crf"])
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stdout.contains("word F1"))
        let words = try CLI.run(["tokenize", "--tokenizer", "model:\(model)", "我们明天去北京学习。"])
        #expect(words.status == 0, "\(words.stderr)")
        #expect(words.stdout == "我们\n明天\n去\n北京\n学习\n")
        let tagged = try CLI.run(["tag", "--model", model, "北京"])
        #expect(tagged.stdout == "北\tB\n京\tE\n")
        let bad = try CLI.run(["tokenize", "--tokenizer", "model", "北京"])
        #expect(bad.status == 64)
    }

    @Test("An encrypted tagger: encrypt, tag, evaluate and info with --key; no key is exit code 77")
    func encrypted() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("team.mlkitkey").path
        let encrypted = folder.appendingPathComponent("tagger.encrypted.mlkit").path
        #expect(try CLI.run(["keygen", "-o", key]).status == 0)
        let encrypt = try CLI.run(["encrypt", Fixtures.tagger, "--key", key, "-o", encrypted])
        #expect(encrypt.status == 0, "\(encrypt.stderr)")
        let tagged = try CLI.run(["tag", "--model", encrypted, "--key", key, "Apple ships iOS"])
        #expect(tagged.stdout == "Apple\tCOMPANY\nships\tNONE\niOS\tOS\n")
        let noKey = try CLI.run(["tag", "--model", encrypted, "Apple"])
        #expect(noKey.status == 77)
        #expect(noKey.stderr.contains("pass --key FILE with that key"))
        let info = try CLI.run(["info", encrypted, "--key", key])
        #expect(info.stdout.contains("kind                word tagger"))
        let evaluated = try CLI.run(["evaluate", encrypted, Fixtures.headlines, "--key", key])
        #expect(evaluated.stdout.contains("token accuracy  1.0000"))
        let plain = folder.appendingPathComponent("plain.mlkit").path
        #expect(try CLI.run(["decrypt", encrypted, "--key", key, "-o", plain]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == Data(contentsOf: URL(fileURLWithPath: Fixtures.tagger)))
    }
}

@Suite("mlkit train and tag on the chapter's labels.json", .needsSeedArtifacts("labels.json"), .timeLimit(.minutes(10)), .onOwnThreads)
struct ChapterTaggerCommandTests {
    @Test("train recognises labels.json as a word tagger's data, and tag labels a new sentence")
    func chapter() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("labels.mlkit").path
        let trained = try CLI.run(["train", SeedArtifacts.url("labels.json").path, "-o", model])
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stdout.contains("task                 word tagger"))
        #expect(trained.stdout.contains("examples             12 sentences"))
        #expect(trained.stdout.contains("training accuracy    1.0000 (tokens)"))

        let tagged = try CLI.run(["tag", "--model", model, "Apple announced iOS 14 and Xcode 12 at WWDC 2020"])
        #expect(tagged.status == 0, "\(tagged.stderr)")
        let lines = tagged.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.map { $0.first ?? "" } == ["Apple", "announced", "iOS", "14", "and", "Xcode", "12", "at", "WWDC", "2020"])
        #expect(lines.allSatisfy { $0.count == 2 && ["COMPANY", "NONE", "OS", "PRODUCT"].contains($0[1]) })
        #expect(lines.first == ["Apple", "COMPANY"])
        #expect([1, 3, 4, 6, 7, 9].allSatisfy { lines.indices.contains($0) && lines[$0].last == "NONE" }, "\(tagged.stdout)")

        let info = try CLI.run(["info", model])
        #expect(info.stdout.contains("labels              4: COMPANY, NONE, OS, PRODUCT"))
    }
}

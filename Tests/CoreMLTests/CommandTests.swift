import Foundation
import TestSupport
import Testing

/// Runs the built `mlkit`.
func mlkit(_ arguments: [String], input: Data? = nil) throws -> ChildProcess.Result {
    try ChildProcess.run(ChildProcess.mlkit, arguments, input: input)
}

@Suite("mlkit predict, info, evaluate and export with Core ML models", .timeLimit(.minutes(10)), .onOwnThreads)
struct CommandTests {
    static let headlines = ProjectFixtures.headlines.path

    @Test("Acceptance: predict with the reference .mlmodel, --top, --json and standard input",
          .needsSeedArtifacts(Reference.model))
    func predict() throws {
        let model = SeedArtifacts.path(Reference.model)
        let plain = try mlkit(["predict", "--model", model, "I love rainbows"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout == "Pos\n")
        let top = try mlkit(["predict", "--model", model, "I love rainbows", "I am sad on cloudy days", "--top", "2"])
        #expect(top.stdout == "Pos\t0.5301\tNeg\t0.4699\nNeg\t0.5022\tPos\t0.4978\n", "\(top.stderr)")
        let json = try mlkit(["predict", "--model", model, "--json", "--top", "2", "I love rainbows"])
        #expect(json.stdout == "{\"label\":\"Pos\",\"probabilities\":{\"Pos\":0.5301,\"Neg\":0.4699}}\n")
        let batch = try mlkit(["predict", "--model", model], input: Data("I love rainbows\nI am sad on cloudy days\n".utf8))
        #expect(batch.stdout == "Pos\nNeg\n", "\(batch.stderr)")
    }

    @Test("Acceptance: the plain archive, and the encrypted one with --key, print the same; without --key, 77",
          .needsSeedArtifacts(Reference.archive, Reference.encryptedArchive, Reference.key))
    func archives() throws {
        let texts = ["I love rainbows", "I am sad on cloudy days", "--top", "2"]
        let expected = "Pos\t0.5301\tNeg\t0.4699\nNeg\t0.5022\tPos\t0.4978\n"
        let plain = try mlkit(["predict", "--model", SeedArtifacts.path(Reference.archive)] + texts)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout == expected)
        let encrypted = SeedArtifacts.path(Reference.encryptedArchive)
        let decrypted = try mlkit(["predict", "--model", encrypted, "--key", SeedArtifacts.path(Reference.key)] + texts)
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(decrypted.stdout == expected)
        let noKey = try mlkit(["predict", "--model", encrypted, "I love rainbows"])
        #expect(noKey.status == 77)
        #expect(noKey.stdout.isEmpty)
        #expect(noKey.stderr == "mlkit: error: \(encrypted): key unavailable: the archive is encrypted with key "
                + "\(Reference.keyIdentifier) and no key was given; pass --key FILE with that key\n")
    }

    @Test("A key file of another key is refused with 77, naming both identifiers", .needsSeedArtifacts(Reference.encryptedArchive))
    func otherKey() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("other.mlmodelkey")
        try ProjectFixtures.appleStyleKeyFile(identifier: "00000000-0000-4000-8000-000000000002").write(to: key)
        let result = try mlkit(["predict", "--model", SeedArtifacts.path(Reference.encryptedArchive), "--key", key.path, "I love rainbows"])
        #expect(result.status == 77)
        #expect(result.stderr.contains("wrong key: the archive is encrypted with key \(Reference.keyIdentifier), but the key given is "
                                       + "00000000-0000-4000-8000-000000000002"), "\(result.stderr)")
    }

    @Test("info shows the specification version, features, stages, labels, vocabulary and metadata",
          .needsSeedArtifacts(Reference.model, Reference.encryptedArchive))
    func info() throws {
        let result = try mlkit(["info", SeedArtifacts.path(Reference.model)])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        for expected in [
            "format              Core ML model, specification version 1",
            "type                pipelineClassifier",
            "input               input: Dictionary (String → Double) — Features extracted from the text.",
            "output              classLabel: String — The most likely polarity (positive or negative), for the given input.",
            "prediction          classLabel; probabilities in classProbability",
            "labels              2: Neg, Pos",
            "vocabulary          16043 keys",
            "stage               1.1 dictVectorizer (16043 string keys): input → __sparse_vector_features__",
            "stage               2 glmClassifier (2 labels, 1 row of 16043 weights, Logit, OneVsRest): __feature_vector__ → classLabel, classProbability",
            "author              Vadym Markov",
            "license             MIT",
            "description         Sentiment polarity LinearSVC.",
            "mlkit runs it       yes, as a text classifier (mlkit predict, mlkit evaluate)",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)")
        }
        let encrypted = try mlkit(["info", SeedArtifacts.path(Reference.encryptedArchive)])
        #expect(encrypted.status == 0)
        #expect(encrypted.stdout.contains("archive             encrypted with key \(Reference.keyIdentifier)\n"))
    }

    @Test("Acceptance: export, then predict with the .mlmodel gives the mlkit model's labels; evaluate and info read it",
          arguments: ["nb", "cnb", "maxent", "svm"])
    func exportRoundTrip(algorithm: String) throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("headlines.mlkit").path
        let exported = folder.appendingPathComponent("Headlines.mlmodel").path
        let train = try mlkit(["train", Self.headlines, "-o", model, "--algorithm", algorithm, "--author", "Ada", "--license", "MIT"])
        try #require(train.status == 0, "\(train.stderr)")
        let export = try mlkit(["export", model, "-o", exported, "--version", "3.1"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.hasPrefix("exported \(model) to \(exported) ("))
        #expect(export.stdout.contains("model     pipelineClassifier, specification version 1: dictVectorizer → featureVectorizer"))

        let texts = ["President Donald Trump is approving a new law", "Snap users drop for first time, but revenue climbs",
                     "The senate votes on the budget", "A new phone with a faster chip", "", "!!!"]
        let original = try mlkit(["predict", "--model", model, "--top", "2"] + texts)
        let converted = try mlkit(["predict", "--model", exported, "--top", "2"] + texts)
        #expect(converted.status == 0, "\(converted.stderr)")
        let labels = { (output: String) in output.split(separator: "\n", omittingEmptySubsequences: false).map { $0.split(separator: "\t").first ?? "" } }
        #expect(labels(converted.stdout) == labels(original.stdout))
        if algorithm == "maxent" || algorithm == "svm" { #expect(converted.stdout == original.stdout) }

        let evaluate = try mlkit(["evaluate", exported, Self.headlines, "--json"])
        #expect(evaluate.status == 0, "\(evaluate.stderr)")
        let mlkitEvaluation = try mlkit(["evaluate", model, Self.headlines, "--json"])
        let accuracy = { (output: String) in
            ((try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any])?["accuracy"] as? Double
        }
        #expect(accuracy(evaluate.stdout) != nil)
        #expect(accuracy(evaluate.stdout) == accuracy(mlkitEvaluation.stdout))
        // The same headlines as JSON Lines stream, and give the same report.
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.headlines))) as? [Any])
        let lines = try rows.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let headlineLines = folder.appendingPathComponent("headlines.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: headlineLines)
        let streamed = try mlkit(["evaluate", exported, headlineLines.path])
        #expect(streamed.status == 0, "\(streamed.stderr)")
        #expect(streamed.stdout == (try mlkit(["evaluate", exported, Self.headlines])).stdout)

        let info = try mlkit(["info", exported])
        #expect(info.stdout.contains("author              Ada\n"))
        #expect(info.stdout.contains("license             MIT\n"))
        #expect(info.stdout.contains("version             3.1\n"))
        #expect(info.stdout.contains("mlkit.algorithm     \(algorithm)\n"))
    }

    @Test("export refuses the embedding classifier with 65, saying why")
    func exportRefusesEmbedding() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("embedding.mlkit").path
        let train = try mlkit(["train", Self.headlines, "-o", model, "--algorithm", "embedding"])
        try #require(train.status == 0, "\(train.stderr)")
        let export = try mlkit(["export", model])
        #expect(export.status == 65)
        #expect(export.stderr.hasPrefix("mlkit: error: \(model): the embedding classifier cannot be exported to Core ML"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("embedding.mlmodel").path))
    }
}

@Suite("mlkit with bad Core ML files", .timeLimit(.minutes(10)), .onOwnThreads)
struct BadFileCommandTests {
    @Test("A truncated .mlmodel, a damaged archive and an inconsistent model exit with 65, naming the file and the fault")
    func badFiles() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let valid = try Specs.data(Specs.valid)
        let cases: [(String, Data, String)] = [
            ("truncated.mlmodel", valid.prefix(valid.count - 7),
             "the file is not a Core ML model, or is truncated or damaged: the protobuf ends in the middle of a field"),
            ("damaged.mlarchive", try MalformedArchiveTests.damagedArchive("a stage missing"),
             "entry 'coremldata.bin': the pipeline node names 3 stages, but the archive holds 2"),
            ("inconsistent.mlmodel", try Specs.data(Specs.classifier([Specs.dictVectorizer(["a", "b"]), Specs.featureVectorizer(2),
                                                                       Specs.glm(rows: [[1, 2], [3, 4]], labels: ["x", "y"])])),
             "stage 3 (glmClassifier): weights: 2 rows for 2 labels with OneVsRest, which needs 1"),
        ]
        for (name, data, reason) in cases {
            let url = folder.appendingPathComponent(name)
            try data.write(to: url)
            for command in [["predict", "--model", url.path, "good"], ["info", url.path]] {
                let result = try mlkit(command)
                #expect(result.status == 65, "\(command): \(result.stderr)")
                #expect(result.stderr == "mlkit: error: \(url.path): \(reason)\n")
            }
        }
        let missing = try mlkit(["predict", "--model", folder.appendingPathComponent("none.mlmodel").path, "good"])
        #expect(missing.status == 66)
    }
}

import Foundation
import TestSupport
import Testing

@Suite("mlkit train, predict, evaluate and info", .timeLimit(.minutes(10)), .onOwnThreads)
struct ClassifierCommandTests {
    static let headlines = ProjectFixtures.headlines.path

    @Test("The chapter's examples: train on its headlines, then predict both", .needsSeedArtifacts("texts.json"))
    func chapterExamples() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("headlines.mlkit").path
        let trained = try CLI.run(["train", SeedArtifacts.path("texts.json"), "-o", model])
        #expect(trained.status == 0, "\(trained.stderr)")
        let predicted = try CLI.run(["predict", "--model", model, "Snap users drop for first time, but revenue climbs",
                                     "President Donald Trump is approving a new law"])
        #expect(predicted.status == 0)
        #expect(predicted.stdout == "Tech\nUS Politics\n")
    }

    @Test("Train on headlines, then predict, show the model's information and evaluate it")
    func trainAndPredict() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("headlines.mlkit").path
        let trained = try CLI.run(["train", Self.headlines, "-o", model, "--author", "Ada", "--version", "2.0"])
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stdout.contains("algorithm            "))
        #expect(trained.stdout.contains("training accuracy    1.0000"))
        #expect(trained.stdout.contains("model                \(model)"))

        let predicted = try CLI.run(["predict", "--model", model, "Phone maker's revenue climbs as users upgrade their devices",
                                     "The Senate votes on the president's budget law"])
        #expect(predicted.status == 0)
        #expect(predicted.stdout == "Tech\nUS Politics\n")

        let info = try CLI.run(["info", model])
        #expect(info.status == 0)
        #expect(info.stdout.contains("format version      3"))
        #expect(info.stdout.contains("labels              2: Tech, US Politics"))
        #expect(info.stdout.contains("author              Ada"))
        #expect(info.stdout.contains("version             2.0"))

        let evaluated = try CLI.run(["evaluate", model, Self.headlines, "--json"])
        #expect(evaluated.status == 0)
        let metrics = try JSONSerialization.jsonObject(with: Data(evaluated.stdout.utf8)) as? [String: Any]
        #expect(metrics?["accuracy"] as? Double == 1)
        #expect(metrics?["labels"] as? [String] == ["Tech", "US Politics"])
        let logLoss = metrics?["logLoss"] as? Double
        // Every headline is labelled right, so each true label's probability is above 1/2.
        #expect(logLoss.map { $0 > 0 && $0 < log(2) } == true, "log-loss \(String(describing: logLoss))")
        let table = try CLI.run(["evaluate", model, Self.headlines])
        #expect(table.stdout.contains("log-loss     "))
    }

    @Test("--min-count keeps the features seen that often, and says so in info; below 1 is a usage error")
    func minimumCount() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("pruned.mlkit").path
        let trained = try CLI.run(["train", Self.headlines, "-o", model, "--algorithm", "cnb", "--min-count", "2"])
        #expect(trained.status == 0, "\(trained.stderr)")
        #expect(trained.stdout.contains("cnb (alpha=0.3 minCount=2 ngrams=1-2 weighting=counts)"))
        let info = try CLI.run(["info", model])
        #expect(info.stdout.contains(" features (each seen at least 2 times), counts\n"))

        for (arguments, message) in [(["--min-count", "0"], "must be at least 1, not 0"),
                                     (["--min-count", "2", "--algorithm", "embedding"],
                                      "applies to a vocabulary; the embedding classifier hashes its features")] {
            let refused = try CLI.run(["train", Self.headlines, "-o", model + ".2"] + arguments)
            #expect(refused.status == 64)
            #expect(refused.stderr == "mlkit: error: field \"--min-count\": \(message)\n")
            #expect(!FileManager.default.fileExists(atPath: model + ".2"))
        }
    }

    @Test("Every setting the library refuses is a usage error naming the option typed, before the data is read")
    func invalidParameters() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("refused.mlkit").path
        let missing = folder.appendingPathComponent("missing.json").path
        for (arguments, message) in [
            (["--ngrams", "6"], "field \"--ngrams\": must be 1 to 5, not 6"),
            (["--validation-split", "1"],
             "field \"--validation-split\": the validation fraction must lie strictly between 0 and 1, not 1.0"),
            (["--regularization", "0"], "field \"--regularization\": must be positive, not 0.0"),
            (["--max-iterations", "0"], "field \"--max-iterations\": must be at least 1, not 0"),
            (["--threads=-1"], "field \"--threads\": must be 0 (all cores) or more, not -1"),
            (["--time-budget=-1"], "field \"--time-budget\": must be 0 seconds or more, not -1.0"),
            (["--class-weights", "a=0"], "field \"--class-weights\": the weight of \"a\" must be positive"),
        ] {
            // The data file does not exist: the parameters are refused first.
            let refused = try CLI.run(["train", missing, "-o", model] + arguments)
            #expect(refused.status == 64, "\(arguments)")
            #expect(refused.stderr == "mlkit: error: \(message)\n", "\(arguments)")
        }
        // A class weight for a label the data does not have needs the data.
        let unknown = try CLI.run(["train", Self.headlines, "-o", model, "--class-weights", "Sports=2"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr == "mlkit: error: field \"--class-weights\": no label \"Sports\" in the training data\n")
        #expect(!FileManager.default.fileExists(atPath: model))
    }

    @Test("The bundled sentiment model: rainbows are positive, cloudy days negative, from any folder")
    func bundledModel() throws {
        let result = try CLI.run(["predict", "I love rainbows", "I am sad on cloudy days"],
                                 environment: ["MLKIT_MODEL": ""], in: FileManager.default.temporaryDirectory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "positive\nnegative\n")
    }

    @Test("A copied binary finds the bundled model in its resources folder, or installed in share/mlkit")
    func copiedBinary() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = FileManager.default
        let built = CLI.binary.deletingLastPathComponent()
        /// The binary at `url`: a hard link where the file system allows, else a copy.
        func place(_ binary: URL, at url: URL) throws {
            try files.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            do { try files.linkItem(at: binary, to: url) } catch { try files.copyItem(at: binary, to: url) }
        }
        // Copied with the resources folder that `swift build` wrote beside it.
        let copied = folder.appendingPathComponent("copied/mlkit")
        try place(CLI.binary, at: copied)
        try files.copyItem(at: built.appendingPathComponent("mlkit_mlkit.resources"),
                           to: folder.appendingPathComponent("copied/mlkit_mlkit.resources"))
        // Installed: bin/mlkit and share/mlkit/sentiment.mlkit.
        let installed = folder.appendingPathComponent("prefix/bin/mlkit")
        try place(CLI.binary, at: installed)
        try files.createDirectory(at: folder.appendingPathComponent("prefix/share/mlkit"), withIntermediateDirectories: true)
        try files.copyItem(at: CLI.repositoryRoot.appendingPathComponent("trained/sentiment.mlkit"),
                           to: folder.appendingPathComponent("prefix/share/mlkit/sentiment.mlkit"))
        for binary in [copied, installed] {
            let result = try ChildProcess.run(binary, ["predict", "I love rainbows", "I am sad on cloudy days"],
                                              environment: ["MLKIT_MODEL": ""], directory: folder)
            #expect(result.status == 0, "\(binary.path): \(result.stderr)")
            #expect(result.stdout == "positive\nnegative\n", "\(binary.path)")
        }
        // Alone, it says where it looked.
        let alone = folder.appendingPathComponent("alone/mlkit")
        try place(CLI.binary, at: alone)
        let missing = try ChildProcess.run(alone, ["predict", "I love rainbows"], environment: ["MLKIT_MODEL": ""],
                                           directory: folder)
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("no model given and no bundled model found (looked in "
                                        + folder.appendingPathComponent("alone/mlkit_mlkit.resources/sentiment.mlkit").path))
    }

    @Test("Standard input streams one prediction per line, as JSON Lines with --json")
    func streaming() throws {
        let input = Data("I love rainbows\nI am sad on cloudy days\n".utf8)
        let result = try CLI.run(["predict", "--json", "--top", "2"], input: input)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("{\"label\":\"positive\",\"probabilities\":{\"positive\":"))
        #expect(lines[1].hasPrefix("{\"label\":\"negative\","))
    }

    @Test("Standard input: each answer is written as soon as its line has arrived")
    func interactive() throws {
        let input = Pipe()
        // Stopped at the end rather than by closing its input: a child that another test starts
        // at the same moment can inherit the pipe's writing end and keep the input open.
        let running = try RunningCLI(["predict"], input: input, environment: ["MLKIT_MODEL": ""])
        defer { running.stop() }

        input.fileHandleForWriting.write(Data("I love rainbows\n".utf8))
        #expect(running.lines(1) == ["positive"])
        input.fileHandleForWriting.write(Data("I am sad on cloudy days\n".utf8))
        #expect(running.lines(2) == ["positive", "negative"])
    }

    @Test("MLKIT_MODEL chooses the model")
    func environmentModel() throws {
        let golden = CLI.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models/v1-headlines-svm.mlkit").path
        let result = try CLI.run(["predict", "President Donald Trump is approving a new law"],
                                 environment: ["MLKIT_MODEL": golden])
        #expect(result.stdout == "US Politics\n")
    }

    @Test("Bad data and bad models exit 65 or 66 and name the file at fault")
    func errors() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let broken = folder.appendingPathComponent("broken.json")
        try Data("[{\"text\": \"a\", \"label\": 1}]".utf8).write(to: broken)
        let badData = try CLI.run(["train", broken.path, "-o", folder.appendingPathComponent("m.mlkit").path])
        #expect(badData.status == 65)
        #expect(badData.stderr == "mlkit: error: \(broken.path):1:25: record 0, field \"label\": expected a string, found a number\n")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("m.mlkit").path))

        let single = folder.appendingPathComponent("single.json")
        try Data("[{\"text\": \"a\", \"label\": \"x\"}, {\"text\": \"b\", \"label\": \"x\"}]".utf8).write(to: single)
        let oneLabel = try CLI.run(["train", single.path])
        #expect(oneLabel.status == 65)
        #expect(oneLabel.stderr.contains("only one label"))

        let notModel = folder.appendingPathComponent("not.mlkit")
        try Data("hello".utf8).write(to: notModel)
        let corrupt = try CLI.run(["predict", "--model", notModel.path, "hi"])
        #expect(corrupt.status == 65)
        #expect(corrupt.stderr == "mlkit: error: \(notModel.path): not an mlkit model file (its first bytes are not \"MLKITMOD\")\n")

        var newer = try Data(contentsOf: CLI.repositoryRoot.appendingPathComponent("trained/sentiment.mlkit"))
        newer[8] = 5  // the format version, a little-endian UInt32 after the magic
        let newerModel = folder.appendingPathComponent("newer.mlkit")
        try newer.write(to: newerModel)
        let unsupported = try CLI.run(["info", newerModel.path])
        #expect(unsupported.status == 65)
        #expect(unsupported.stderr.contains("\(newerModel.path): model format version 5 is newer than this mlkit reads"))

        let missing = try CLI.run(["info", folder.appendingPathComponent("none.mlkit").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasSuffix("none.mlkit: no such model file\n"))

        let usage = try CLI.run(["train", Self.headlines, "--algorithm", "forest"])
        #expect(usage.status == 64)
    }
}

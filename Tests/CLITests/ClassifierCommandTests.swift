import Foundation
import TestSupport
import Testing

@Suite("mlkit train, predict, evaluate and info", .timeLimit(.minutes(10)))
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

        for (arguments, message) in [(["--min-count", "0"], "--min-count must be at least 1."),
                                     (["--min-count", "2", "--algorithm", "embedding"],
                                      "--min-count prunes a vocabulary; --algorithm embedding hashes its features.")] {
            let refused = try CLI.run(["train", Self.headlines, "-o", model + ".2"] + arguments)
            #expect(refused.status == 64)
            #expect(refused.stderr.contains("Error: \(message)"))
            #expect(!FileManager.default.fileExists(atPath: model + ".2"))
        }
    }

    @Test("The bundled sentiment model: rainbows are positive, cloudy days negative, from any folder")
    func bundledModel() throws {
        let result = try CLI.run(["predict", "I love rainbows", "I am sad on cloudy days"],
                                 environment: ["MLKIT_MODEL": ""], in: FileManager.default.temporaryDirectory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "positive\nnegative\n")
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
        newer[8] = 4  // the format version, a little-endian UInt32 after the magic
        let newerModel = folder.appendingPathComponent("newer.mlkit")
        try newer.write(to: newerModel)
        let unsupported = try CLI.run(["info", newerModel.path])
        #expect(unsupported.status == 65)
        #expect(unsupported.stderr.contains("\(newerModel.path): model format version 4 is newer than this mlkit reads"))

        let missing = try CLI.run(["info", folder.appendingPathComponent("none.mlkit").path])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasSuffix("none.mlkit: no such model file\n"))

        let usage = try CLI.run(["train", Self.headlines, "--algorithm", "forest"])
        #expect(usage.status == 64)
    }
}

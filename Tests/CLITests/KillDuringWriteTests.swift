import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `kill -9` of `mlkit train -o M` and `mlkit encrypt -o M` while they write M: M is the old
/// file or the new one, never a torn one. Each command writes a temporary file beside M and
/// renames it over M once it is complete and flushed; the kill lands either while that file is
/// written (caught by watching the folder) or at a random moment. What a killed writer leaves
/// is removed by the next write of M.
@Suite("kill -9 while mlkit writes a model", .timeLimit(.minutes(10)), .onOwnThreads)
struct KillDuringWriteTests {
    /// Rounds per command; `MLKIT_KILL_ROUNDS` sets more.
    static let rounds = ProcessInfo.processInfo.environment["MLKIT_KILL_ROUNDS"].flatMap(Int.init) ?? 6

    @Test("kill -9 of mlkit train -o M leaves M the old model or the new one")
    func train() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = try Self.dataset(rows: 6_000, in: folder)
        let model = folder.appendingPathComponent("model.mlkit")
        let first = try CLI.run(["train", CLI.repositoryRoot.appendingPathComponent("Tests/Fixtures/headlines.json").path,
                                 "-o", model.path])
        #expect(first.status == 0, "\(first.stderr)")
        let outcome = try Self.killRounds(["train", data.path, "-o", model.path, "--algorithm", "nb"], target: model)
        print("kill -9 of mlkit train: \(outcome)")
        #expect(outcome.midWrite > 0, "some kills landed while the model was written")
    }

    @Test("kill -9 of mlkit encrypt -o M leaves M the old encrypted model or the new one")
    func encrypt() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = folder.appendingPathComponent("plain.mlkit")
        let trained = try CLI.run(["train", try Self.dataset(rows: 6_000, in: folder).path, "-o", plain.path, "--algorithm", "nb"])
        #expect(trained.status == 0, "\(trained.stderr)")
        let key = folder.appendingPathComponent("team.mlkitkey").path
        #expect(try CLI.run(["keygen", "-o", key]).status == 0)
        let model = folder.appendingPathComponent("model.mlkit")
        let first = try CLI.run(["encrypt", CLI.repositoryRoot.appendingPathComponent("trained/sentiment.mlkit").path,
                                 "--key", key, "-o", model.path])
        #expect(first.status == 0, "\(first.stderr)")
        let outcome = try Self.killRounds(["encrypt", plain.path, "--key", key, "-o", model.path], target: model,
                                          check: ["info", "--key", key])
        print("kill -9 of mlkit encrypt: \(outcome)")
        #expect(outcome.midWrite > 0, "some kills landed while the model was written")
    }

    /// How the kills landed.
    struct Outcome: CustomStringConvertible {
        var midWrite = 0, random = 0, finished = 0, oldKept = 0, newWritten = 0, leftovers = 0
        var description: String {
            "\(midWrite + random + finished) runs: \(midWrite) killed while writing M's temporary file, \(random) at a random moment, "
                + "\(finished) finished first; M stayed the old file \(oldKept) times and was the new one \(newWritten) times; "
                + "the killed runs left \(leftovers) temporary files beside it, each removed by the next write"
        }
    }

    /// Runs `arguments` `rounds` times, killing it with SIGKILL: on even rounds as soon as its
    /// temporary file appears beside `target`, on odd ones after a random delay. After each,
    /// `target` must be byte for byte what it was, or a whole model (`mlkit info` with `check`'s
    /// options reads and verifies it).
    static func killRounds(_ arguments: [String], target: URL, check: [String] = ["info"]) throws -> Outcome {
        var outcome = Outcome()
        let folder = target.deletingLastPathComponent()
        let prefix = ".\(target.lastPathComponent)."
        func temporaries() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasPrefix(prefix) }
        }
        for round in 0..<rounds {
            let before = try Data(contentsOf: target)
            let leftoversBefore = Set(temporaries())
            let process = Process()
            process.executableURL = CLI.binary
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.startAlone()
            if round % 2 == 0 {
                let deadline = Date().addingTimeInterval(120)
                while process.isRunning, Date() < deadline, Set(temporaries()).subtracting(leftoversBefore).isEmpty {
                    usleep(200)
                }
            } else {
                usleep(UInt32.random(in: 200_000...3_000_000))
            }
            let wasRunning = process.isRunning
            let writing = !Set(temporaries()).subtracting(leftoversBefore).isEmpty
            kill(process.processIdentifier, SIGKILL)
            try process.waitForExit(within: 60)
            if !wasRunning { outcome.finished += 1 } else if writing { outcome.midWrite += 1 } else { outcome.random += 1 }

            let after = try Data(contentsOf: target)
            if after == before {
                outcome.oldKept += 1
            } else {
                outcome.newWritten += 1
                let info = try CLI.run(check + [target.path])
                #expect(info.status == 0, "round \(round): M is neither the old file nor a whole new one: \(info.stderr)")
            }
            outcome.leftovers += Set(temporaries()).subtracting(leftoversBefore).count
        }
        // The next write that finishes removes what the killed ones left.
        let finished = try CLI.run(arguments)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(temporaries().isEmpty, "left beside M after a finished write: \(temporaries())")
        return outcome
    }

    /// A CSV of `rows` texts of twelve words from 60,000, two labels: a few megabytes of model.
    static func dataset(rows: Int, in folder: URL) throws -> URL {
        var generator = SeededGenerator(seed: 7)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let words = (0..<60_000).map { _ in
            String((0..<(4 + Int(generator.next() % 6))).map { _ in letters[Int(generator.next() % 26)] })
        }
        var text = "text,label\n"
        for row in 0..<rows {
            text += (0..<12).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined(separator: " ")
            text += row % 2 == 0 ? ",even\n" : ",odd\n"
        }
        let url = folder.appendingPathComponent("words.csv")
        try Data(text.utf8).write(to: url)
        return url
    }
}

import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `mlkit predict` reading many lines: from a file (`--input`, memory-mapped), from standard
/// input as a file, and from a pipe; writing to standard output or to `--output`.
@Suite("mlkit predict streams its input", .timeLimit(.minutes(10)), .onOwnThreads)
struct StreamingTests {
    static let positive = "I love rainbows"
    static let negative = "I am sad on cloudy days"

    /// `count` lines, each one of the two examples by a fixed pseudo-random pattern, and the
    /// answers the bundled model gives them.
    static func examples(_ count: Int) -> (input: String, expected: String) {
        var state: UInt64 = 42
        var input = "", expected = ""
        input.reserveCapacity(count * 24)
        for _ in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let isPositive = (state >> 33) & 1 == 1
            input += (isPositive ? positive : negative) + "\n"
            expected += isPositive ? "positive\n" : "negative\n"
        }
        return (input, expected)
    }

    /// Runs `mlkit ARGUMENTS` with `input` on its standard input through a pipe (`cat FILE |`).
    static func runPiped(_ arguments: [String], input: Data, in folder: URL) throws -> CLI.Result {
        let file = folder.appendingPathComponent("piped-input")
        try input.write(to: file)
        let quoted = ([CLI.binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return try ChildProcess.run(URL(fileURLWithPath: "/bin/sh"),
                                    ["-c", "cat '\(file.path)' | " + quoted.joined(separator: " ")],
                                    environment: ["MLKIT_MODEL": ""])
    }

    @Test("The answers keep the input's order across many batches: from a file, from standard input, from a pipe")
    func orderAcrossBatches() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // 30,000 lines: several batches of the most lines a batch holds.
        let (input, expected) = Self.examples(30_000)
        let file = folder.appendingPathComponent("texts.txt")
        try Data(input.utf8).write(to: file)

        let fromFile = try CLI.run(["predict", "--input", file.path], environment: ["MLKIT_MODEL": ""])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFile.stdout == expected)
        let fromStandardInput = try CLI.run(["predict"], input: Data(input.utf8), environment: ["MLKIT_MODEL": ""])
        #expect(fromStandardInput.status == 0, "\(fromStandardInput.stderr)")
        #expect(fromStandardInput.stdout == expected)
        let fromPipe = try Self.runPiped(["predict"], input: Data(input.utf8), in: folder)
        #expect(fromPipe.status == 0, "\(fromPipe.stderr)")
        #expect(fromPipe.stdout == expected)

        // --top and --json give one line per text, in the same order.
        let ranked = try CLI.run(["predict", "--input", file.path, "--json", "--top", "2"], environment: ["MLKIT_MODEL": ""])
        #expect(ranked.status == 0)
        let labels = ranked.stdout.split(separator: "\n").map { line -> String in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["label"] as? String ?? "?"
        }
        #expect(labels.joined(separator: "\n") + "\n" == expected)
        let top = try Self.runPiped(["predict", "--top", "2"], input: Data(input.utf8), in: folder)
        #expect(top.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }.joined(separator: "\n") + "\n"
                == expected)
    }

    @Test("Empty lines, a last line without a line end, and CRLF line ends, from a file and from a pipe")
    func lineEnds() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = try CLI.run(["predict", ""], environment: ["MLKIT_MODEL": ""])
        #expect(empty.status == 0)
        let input = Data("\(Self.positive)\r\n\r\n\n\(Self.negative)\r\n\(Self.positive)".utf8)
        let expected = "positive\n" + empty.stdout + empty.stdout + "negative\npositive\n"
        let file = folder.appendingPathComponent("lines.txt")
        try input.write(to: file)
        let fromFile = try CLI.run(["predict", "--input", file.path], environment: ["MLKIT_MODEL": ""])
        #expect(fromFile.stdout == expected)
        let fromPipe = try Self.runPiped(["predict"], input: input, in: folder)
        #expect(fromPipe.stdout == expected)
        // A text ending in \r without \n: the \r is dropped too.
        let carriage = try CLI.run(["predict"], input: Data("\(Self.negative)\r".utf8), environment: ["MLKIT_MODEL": ""])
        #expect(carriage.stdout == "negative\n")
        // No input, no output.
        let nothing = try CLI.run(["predict"], input: Data(), environment: ["MLKIT_MODEL": ""])
        #expect(nothing.status == 0)
        #expect(nothing.stdout == "")
    }

    @Test("Invalid UTF-8 fails with exit code 65, naming the input, line, column and offset")
    func invalidUTF8() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Far enough in that earlier batches have been answered already.
        let (start, expected) = Self.examples(10_000)
        var input = Data(start.utf8)
        let offset = input.count + 3
        input.append(contentsOf: Array("ok\nabc".utf8) + [0xC3, 0x28] + Array(" tail\n".utf8) + Array(start.utf8))
        let file = folder.appendingPathComponent("bad.txt")
        try input.write(to: file)
        let fromFile = try CLI.run(["predict", "--input", file.path], environment: ["MLKIT_MODEL": ""])
        #expect(fromFile.status == 65)
        #expect(fromFile.stderr == "mlkit: error: \(file.path):10002:4: invalid UTF-8 (byte 0xC3 at offset \(offset + 3))\n")
        // What comes before the line is answered, nothing after it.
        #expect(fromFile.stdout.hasPrefix(expected))
        #expect(fromFile.stdout.split(separator: "\n").count == 10_001)
        let fromPipe = try Self.runPiped(["predict"], input: input, in: folder)
        #expect(fromPipe.status == 65)
        #expect(fromPipe.stderr == "mlkit: error: standard input:10002:4: invalid UTF-8 (byte 0xC3 at offset \(offset + 3))\n")
    }

    @Test("--output holds every answer, or is left as it was when the input fails")
    func outputFile() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (input, expected) = Self.examples(20_000)
        let texts = folder.appendingPathComponent("texts.txt")
        try Data(input.utf8).write(to: texts)
        let output = folder.appendingPathComponent("answers.txt")
        let written = try CLI.run(["predict", "--input", texts.path, "--output", output.path], environment: ["MLKIT_MODEL": ""])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stdout == "")
        #expect(try String(contentsOf: output, encoding: .utf8) == expected)
        let arguments = try CLI.run(["predict", "--output", output.path, Self.negative], environment: ["MLKIT_MODEL": ""])
        #expect(arguments.status == 0)
        #expect(try String(contentsOf: output, encoding: .utf8) == "negative\n")

        // Invalid UTF-8 near the end: the earlier answers are not written anywhere.
        var bad = Data(input.utf8)
        bad.append(contentsOf: [0xFF, 0x0A])
        let badFile = folder.appendingPathComponent("bad.txt")
        try bad.write(to: badFile)
        let failed = try Self.runPiped(["predict", "--output", output.path], input: bad, in: folder)
        #expect(failed.status == 65)
        #expect(failed.stderr.contains("standard input:20001:1: invalid UTF-8"))
        #expect(try String(contentsOf: output, encoding: .utf8) == "negative\n")
        let fresh = folder.appendingPathComponent("fresh.txt")
        let failedFresh = try CLI.run(["predict", "--input", badFile.path, "--output", fresh.path], environment: ["MLKIT_MODEL": ""])
        #expect(failedFresh.status == 65)
        #expect(!FileManager.default.fileExists(atPath: fresh.path))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "temporary files left: \(left)")

        let missing = try CLI.run(["predict", "--input", folder.appendingPathComponent("none.txt").path],
                                  environment: ["MLKIT_MODEL": ""])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasSuffix("none.txt: no such input file\n"))
        let both = try CLI.run(["predict", "--input", texts.path, "hello"], environment: ["MLKIT_MODEL": ""])
        #expect(both.status == 64)
    }

    @Test("Peak memory does not grow with the input: 8 MB and 64 MB, from a file and from a pipe",
          .disabled(if: dlsym(nil, "__tsan_init") != nil,
                    "under ThreadSanitizer the child's resident memory counts the sanitizer's shadow of every page it touches"),
          .disabled(if: dlsym(nil, "__asan_init") != nil,
                    "under AddressSanitizer freed memory waits in its quarantine (256 MB), so the child's resident memory grows with all it has allocated"))
    func boundedMemory() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Long lines, so that the input is large while the prediction stays quick.
        let line = (Self.positive + " " + String(repeating: "and the rainbows are lovely ", count: 18)) + "\n"
        func input(megabytes: Int) throws -> URL {
            let url = folder.appendingPathComponent("input-\(megabytes).txt")
            let block = Data(String(repeating: line, count: (1 << 20) / line.utf8.count + 1).utf8)
            FileManager.default.createFile(atPath: url.path, contents: nil)
            let handle = try FileHandle(forWritingTo: url)
            for _ in 0..<megabytes { handle.write(block) }
            try handle.close()
            return url
        }
        let small = try input(megabytes: 8), large = try input(megabytes: 64)
        for piped in [false, true] {
            let smallPeak = try Self.peakMemory(of: small, piped: piped)
            let largePeak = try Self.peakMemory(of: large, piped: piped)
            // The large input is 56 MB more; the peak may differ by noise, not by the input.
            #expect(largePeak < smallPeak + 12 << 20, "piped \(piped): \(smallPeak >> 20) MB for 8 MB, \(largePeak >> 20) MB for 64 MB")
        }
    }

    /// The peak resident memory, in bytes, of `mlkit predict` on `file` (as `--input`, or
    /// through a pipe), its answers going to /dev/null: the largest resident set of the
    /// children of a small Python process that runs the command, as `getrusage` counts them.
    ///
    /// Not this process's own `wait4`: a child started with `posix_spawn` shares this process's
    /// memory until it runs `exec`, and Linux counts that memory's peak (the whole test
    /// process's, hundreds of megabytes) in the child's maximum resident set.
    static func peakMemory(of file: URL, piped: Bool) throws -> Int {
        let command = piped ? "cat '\(file.path)' | '\(CLI.binary.path)' predict > /dev/null"
                            : "exec '\(CLI.binary.path)' predict --input '\(file.path)' > /dev/null"
        let measure = """
            import resource, subprocess, sys
            status = subprocess.call(["/bin/sh", "-c", sys.argv[1]])
            print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """
        let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", measure, command],
                                          environment: ["MLKIT_MODEL": ""])
        let fields = result.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(result.status == 0 && fields.count == 2 && fields[0] == 0, "\(command): \(result.stdout) \(result.stderr)")
        return (fields.last ?? 0) * 1024
    }
}

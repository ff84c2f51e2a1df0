public import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `mlkit serve` process on 127.0.0.1 and an ephemeral port (`--port 0`), over a data
/// folder: for the tests where the process is what they test (start-up, shutdown, kill -9,
/// sockets, logs, clients in other processes). Tests of the HTTP API alone run in process.
///
/// Standard output and error go to files outside the data folder, so no pipe can fill up; the
/// first line of standard output names the address. Every wait has a deadline.
public final class ServerProcess: @unchecked Sendable {
    /// The data folder (`mlkit.sqlite`, `models/`, `uploads/`; with a shared database, `cache/`
    /// and `uploads/`).
    public let dataFolder: URL
    /// The shared PostgreSQL database (`--database`), if any.
    public let database: URL?
    /// `http://127.0.0.1:PORT`.
    public private(set) var url: URL
    /// The port it listens on.
    public var port: Int { url.port ?? 0 }
    private var process: Process?
    private let arguments: [String]
    private let openFileLimit: Int?
    /// Whether the data folder is this object's own, removed when it goes.
    private let ownsData: Bool
    /// Where this object keeps the server's output.
    private let outputFolder: URL
    private var launches = 0
    private let fixedPort: Int
    private var errorFile: URL

    /// The binary that runs `mlkit serve`: the built one, or `$MLKIT_TEST_SERVE_BINARY` (to test
    /// the client against another build of the server).
    public static let binary = ProcessInfo.processInfo.environment["MLKIT_TEST_SERVE_BINARY"]
        .map { URL(fileURLWithPath: $0) } ?? ChildProcess.mlkit

    /// Starts a server over `dataFolder` (a new temporary folder by default) with `arguments`
    /// added to `mlkit serve`'s, and waits until it listens.
    /// - Parameters:
    ///   - dataFolder: The data folder; a new one, removed with this object, when `nil`.
    ///   - arguments: More options for `mlkit serve`, such as `["--max-upload-size", "64K"]`.
    ///   - openFileLimit: A limit on open files (soft and hard) to start the server under, as a
    ///     system with few descriptors would.
    ///   - start: Whether to start the process now (``start()`` starts it later).
    ///   - database: The shared PostgreSQL database (`--database`), if any.
    ///   - port: The port to listen on, kept across restarts (0: a free one each time).
    public init(dataFolder: URL? = nil, arguments: [String] = [], openFileLimit: Int? = nil, start: Bool = true,
                database: URL? = nil, port: Int = 0) throws {
        self.fixedPort = port
        self.dataFolder = try dataFolder ?? ChildProcess.temporaryFolder("server")
        self.database = database
        ownsData = dataFolder == nil
        self.arguments = arguments
        self.openFileLimit = openFileLimit
        outputFolder = try ChildProcess.temporaryFolder("server-output")
        errorFile = outputFolder.appendingPathComponent("stderr-0")
        url = URL(string: "http://127.0.0.1:0")!
        if start { try self.start() }
    }

    deinit {
        if let process, process.isRunning { try? process.terminate(within: 30) }
        if ownsData { try? FileManager.default.removeItem(at: dataFolder) }
        try? FileManager.default.removeItem(at: outputFolder)
    }

    /// The server's process ID (0 before it starts).
    public var pid: Int32 { process?.processIdentifier ?? 0 }

    /// Whether the process runs.
    public var isRunning: Bool { process?.isRunning ?? false }

    /// What the running (or last) process wrote to standard error: its JSON log lines.
    public var logText: String {
        (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
    }

    /// Starts the process (again, after ``stop()`` or ``kill()``; on a new port unless the port
    /// was given) and waits, at
    /// most 60 s, until its first line names the address it listens on.
    /// - Throws: ``ServerProcessError`` when it exits or stays silent.
    public func start() throws {
        if let process, process.isRunning { stop() }
        launches += 1
        let outputFile = outputFolder.appendingPathComponent("stdout-\(launches)")
        errorFile = outputFolder.appendingPathComponent("stderr-\(launches)")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputFile), errors = try FileHandle(forWritingTo: errorFile)
        defer {
            try? output.close()
            try? errors.close()
        }
        let process = Process()
        let command = [Self.binary.path, "serve", "--data", dataFolder.path, "--host", "127.0.0.1", "--port", "\(fixedPort)"]
            + (database.map { ["--database", $0.absoluteString] } ?? []) + arguments
        if let openFileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(openFileLimit) && exec \"$@\"", "sh"] + command
        } else {
            process.executableURL = Self.binary
            process.arguments = Array(command.dropFirst())
        }
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.startAlone()
        self.process = process
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
            if let newline = text.firstIndex(of: "\n") {
                let line = text[..<newline]
                guard line.hasPrefix("listening on "), let address = URL(string: String(line.dropFirst("listening on ".count))) else {
                    break
                }
                url = address
                return
            }
            if !process.isRunning { break }
            usleep(10_000)
        }
        try? process.terminate(within: 30)
        throw ServerProcessError("mlkit serve did not start (status \(process.isRunning ? "running" : "\(process.terminationStatus)")): \(logText)")
    }

    /// Stops the server with SIGTERM (a graceful shutdown) and waits for it. A server that has
    /// not shut down within 30 s is killed, and the test fails.
    /// - Returns: The exit status.
    @discardableResult
    public func stop() -> Int32 {
        guard let process else { return 0 }
        do { try process.terminate(within: 30) } catch {
            Issue.record("mlkit serve did not shut down on SIGTERM: \(error); log: \(logText)")
        }
        return process.terminationStatus
    }

    /// Kills the server with SIGKILL: no shutdown at all.
    public func kill() {
        guard let process else { return }
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, SIGKILL) }
        try? process.waitForExit(within: 30)
    }

    /// Starts the server again over the same data folder, on a new port.
    public func restart() throws {
        try start()
    }

    /// Stops the server and removes its data folder.
    public func shutDown() {
        stop()
        try? FileManager.default.removeItem(at: dataFolder)
    }

    /// Makes a token with `mlkit serve token create`.
    /// - Parameters:
    ///   - scope: `publish` or `read`.
    ///   - collection: The one collection it is limited to, if any.
    public func token(scope: String, collection: String? = nil) throws -> String {
        var arguments = ["serve", "token", "create", "--data", dataFolder.path, "--scope", scope]
            + (database.map { ["--database", $0.absoluteString] } ?? [])
        if let collection { arguments += ["--collection", collection] }
        let result = try ChildProcess.run(Self.binary, arguments)
        guard result.status == 0 else {
            throw ServerProcessError("token create failed (\(result.status)): \(result.stderr)")
        }
        let token = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw ServerProcessError("token create printed no token") }
        return token
    }

    /// The file the server stores a model under.
    public func storedModel(sha256: String) -> URL {
        dataFolder.appendingPathComponent("models/\(sha256)")
    }
}

/// A failure of a test's harness, with its message.
public struct ServerProcessError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

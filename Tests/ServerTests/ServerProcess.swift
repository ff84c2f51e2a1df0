import Foundation
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `mlkit serve` process on 127.0.0.1, on an ephemeral port, over a data folder.
final class ServerProcess: @unchecked Sendable {
    /// The data folder.
    let data: URL
    /// `http://127.0.0.1:PORT`.
    private(set) var baseURL: URL
    private var process: Process
    private let extraArguments: [String]
    /// Whether the data folder is this object's own, removed when it goes.
    private let ownsData: Bool
    /// Everything the server wrote to standard error (its JSON log lines).
    private(set) var log = LogCollector()

    /// Starts a server over `data` (a new temporary folder by default).
    init(data: URL? = nil, arguments: [String] = []) throws {
        self.data = try data ?? Self.temporaryFolder()
        ownsData = data == nil
        self.extraArguments = arguments
        (process, baseURL, log) = try Self.launch(data: self.data, arguments: arguments)
    }

    deinit {
        try? process.terminate(within: 30)
        if ownsData { try? FileManager.default.removeItem(at: data) }
    }

    /// The server's process ID.
    var pid: Int32 { process.processIdentifier }

    /// Stops the server with SIGTERM (a graceful shutdown) and waits for it. A server that has
    /// not shut down within 30 s is killed, and the test fails.
    /// - Returns: The exit status.
    @discardableResult
    func stop() -> Int32 {
        do { try process.terminate(within: 30) } catch {
            Issue.record("mlkit serve did not shut down on SIGTERM: \(error); log: \(log.text)")
        }
        return process.terminationStatus
    }

    /// Kills the server with SIGKILL: no shutdown at all.
    func kill() {
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, SIGKILL) }
        try? process.waitForExit(within: 30)
    }

    /// Starts the server again over the same data folder (on a new port).
    func restart() throws {
        if process.isRunning { stop() }
        (process, baseURL, log) = try Self.launch(data: data, arguments: extraArguments)
    }

    /// Makes a token with `mlkit serve token create`.
    func token(scope: String, collection: String? = nil) throws -> String {
        var arguments = ["serve", "token", "create", "--data", data.path, "--scope", scope]
        if let collection { arguments += ["--collection", collection] }
        let result = try MLKitBinary.run(arguments)
        guard result.status == 0 else {
            throw ServerTestError("token create failed (\(result.status)): \(result.stderr)")
        }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func launch(data: URL, arguments: [String]) throws -> (Process, URL, LogCollector) {
        let process = Process()
        process.executableURL = MLKitBinary.url
        process.arguments = ["serve", "--data", data.path, "--host", "127.0.0.1", "--port", "0"] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let log = LogCollector()
        log.collect(errors.fileHandleForReading)
        try process.run()
        // The first line on standard output names the bound address.
        let line = FirstLine(output.fileHandleForReading).wait(seconds: 60)
        guard let line, line.hasPrefix("listening on "), let url = URL(string: String(line.dropFirst("listening on ".count))) else {
            try? process.terminate(within: 30)
            throw ServerTestError("the server did not start: \(line ?? "no output"); log: \(log.text)")
        }
        return (process, url, log)
    }

    /// A new temporary folder.
    static func temporaryFolder() throws -> URL {
        try ChildProcess.temporaryFolder("server")
    }
}

/// Reads the first line of a pipe, keeping the rest flowing so that the server never blocks.
private final class FirstLine: @unchecked Sendable {
    private var line: String?
    private let ready = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var buffer = Data()
            var signalled = false
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                guard !signalled else { continue }
                buffer.append(chunk)
                if let newline = buffer.firstIndex(of: 0x0A) {
                    line = String(decoding: buffer[..<newline], as: UTF8.self)
                    signalled = true
                    ready.signal()
                }
            }
            if !signalled { ready.signal() }
        }
    }

    func wait(seconds: Double) -> String? {
        _ = ready.wait(timeout: .now() + seconds)
        return line
    }
}

/// Collects a pipe's bytes on a background thread.
final class LogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private let ended = DispatchSemaphore(value: 0)

    func collect(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock()
                data.append(chunk)
                lock.unlock()
            }
            ended.signal()
        }
    }

    /// Everything, once the writer has closed the pipe (or after 30 s, what has come by then).
    var finalText: String {
        if ended.wait(timeout: .now() + 30) == .success { ended.signal() }
        return text
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The `mlkit` binary that `swift build` put beside the test bundle.
enum MLKitBinary {
    /// What a run printed and how it ended.
    typealias Result = ChildProcess.Result

    /// The built `mlkit` executable.
    static let url = ChildProcess.mlkit

    /// Runs `mlkit` to completion.
    static func run(_ arguments: [String]) throws -> Result {
        try ChildProcess.run(url, arguments)
    }
}

/// A failure of the test harness itself.
struct ServerTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

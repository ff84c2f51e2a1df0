import Foundation
import TestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A real `mlkit serve` on 127.0.0.1 and an ephemeral port, over a temporary data folder.
final class TestServer: @unchecked Sendable {
    /// The data folder (SQLite database and model files).
    let dataFolder: URL
    /// The port it listens on.
    private(set) var port: Int = 0
    private var process: Process?
    private let log: URL

    /// The server's base URL.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts a server over a new data folder.
    init() throws {
        dataFolder = try Binary.temporaryFolder("server")
        log = dataFolder.appendingPathComponent("server.log")
    }

    /// Starts a server and waits until `/healthz` answers.
    static func start() async throws -> TestServer {
        let server = try TestServer()
        try await server.start()
        return server
    }

    /// Starts (or restarts) the server process on a port it picks (`--port 0`), read from its
    /// first line, `listening on http://127.0.0.1:PORT`.
    func start() async throws {
        let process = Process()
        process.executableURL = Self.serveBinary
        process.arguments = ["serve", "--data", dataFolder.path, "--host", "127.0.0.1", "--port", "0"]
        if !FileManager.default.fileExists(atPath: log.path) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        let output = try FileHandle(forWritingTo: log)
        let logStart = output.seekToEndOfFile()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if !process.isRunning {
                throw TestFailure("mlkit serve exited with \(process.terminationStatus): \(logText())")
            }
            if let port = listeningPort(after: logStart) {
                self.port = port
                if let (_, response) = try? await URLSession.shared.data(from: url.appendingPathComponent("healthz")),
                   (response as? HTTPURLResponse)?.statusCode == 200 {
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        stop()
        throw TestFailure("mlkit serve did not answer /healthz within 30 s: \(logText())")
    }

    /// Stops the server with SIGTERM and waits for it to exit; one that has not shut down
    /// gracefully within 30 s is killed, and the test fails.
    func stop() {
        guard let process else { return }
        self.process = nil
        do { try process.terminate(within: 30) } catch {
            Issue.record("mlkit serve did not shut down on SIGTERM: \(error); log: \(logText())")
        }
    }

    /// Stops the server and removes its data folder.
    func shutDown() {
        stop()
        try? FileManager.default.removeItem(at: dataFolder)
    }

    /// What the server wrote to standard output and error.
    func logText() -> String {
        (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    }

    /// Makes a token with `mlkit serve token create` and returns it.
    func createToken(scope: String, collection: String? = nil) throws -> String {
        var arguments = ["serve", "token", "create", "--data", dataFolder.path, "--scope", scope]
        if let collection { arguments += ["--collection", collection] }
        let result = try Binary.run(arguments, executable: Self.serveBinary)
        guard result.status == 0 else { throw TestFailure("token create failed: \(result.stderr)") }
        guard let token = result.stdout.split(whereSeparator: \.isNewline).last?
            .split(separator: " ").last.map(String.init), !token.isEmpty else {
            throw TestFailure("token create printed no token: \(result.stdout)")
        }
        return token
    }

    /// The file the server stores a model under.
    func storedModel(sha256: String) -> URL {
        dataFolder.appendingPathComponent("models/\(sha256)")
    }

    deinit { stop() }

    /// The binary that runs `mlkit serve`: the built one, or `$MLKIT_TEST_SERVE_BINARY` (to test
    /// the client against another build of the server).
    static let serveBinary = ProcessInfo.processInfo.environment["MLKIT_TEST_SERVE_BINARY"].map { URL(fileURLWithPath: $0) }
        ?? Binary.mlkit

    private func listeningPort(after offset: UInt64) -> Int? {
        guard let data = try? Data(contentsOf: log), data.count > Int(offset) else { return nil }
        let text = String(decoding: data.dropFirst(Int(offset)), as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("listening on http://") }),
              let colon = line.lastIndex(of: ":") else { return nil }
        return Int(line[line.index(after: colon)...])
    }
}

extension sockaddr_in {
    /// 127.0.0.1 at `port`.
    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

/// A test's own failure with a message.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import Testing

/// Runs the `mlkit` binary that `swift build` put beside the test bundle.
enum CLI {
    /// What a run printed and how it ended.
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The built `mlkit` executable.
    static let binary: URL = {
        let bundleFolder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            bundleFolder.appendingPathComponent("mlkit"),
            Bundle.main.bundleURL.appendingPathComponent("mlkit"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("mlkit"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    /// The repository's root folder.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The shared reference material beside the repository.
    static let seedArtifacts = repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/seed-artifacts")

    /// Runs `mlkit` with `arguments`, feeding `input` to its standard input.
    static func run(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
                    in directory: URL? = nil) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        process.environment = merged
        if let directory { process.currentDirectoryURL = directory }
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        // Read both pipes concurrently with writing, so large outputs cannot deadlock.
        let output = ReadAll(stdout.fileHandleForReading)
        let errors = ReadAll(stderr.fileHandleForReading)
        if let input { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: output.text(), stderr: errors.text())
    }

    /// A fresh temporary folder, removed by the caller.
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

/// Reads a pipe to its end on a background thread.
private final class ReadAll: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func text() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

import Foundation

/// The `mlkit` binary that `swift build` put beside the test bundle, and the repository's files.
enum Binary {
    /// What a run printed and how it ended.
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The built `mlkit` executable.
    static let mlkit: URL = {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [folder, Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
            .map { $0.appendingPathComponent("mlkit") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    /// The repository's root folder.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The bundled sentiment model (3.3 MB): big enough to cut a download in the middle.
    static let sentimentModel = repositoryRoot.appendingPathComponent("trained/sentiment.mlkit")

    /// A small golden model trained on the chapter's headlines (`Tech`, `US Politics`).
    static let headlinesModel = repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models/v1-headlines-svm.mlkit")

    /// Runs `mlkit` with `arguments` and `environment` added to this process's.
    static func run(_ arguments: [String], environment: [String: String] = [:], executable: URL = mlkit) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let folder = try temporaryFolder("run")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stdout = folder.appendingPathComponent("stdout"), stderr = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: try String(contentsOf: stdout, encoding: .utf8),
                      stderr: try String(contentsOf: stderr, encoding: .utf8))
    }

    /// A new temporary folder; the caller removes it.
    static func temporaryFolder(_ purpose: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-\(purpose)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

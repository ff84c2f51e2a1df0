import Foundation
import TestSupport

/// Runs the `mlkit` binary that `swift build` put beside the test bundle.
enum CLI {
    /// What a run printed and how it ended.
    typealias Result = ChildProcess.Result

    /// The built `mlkit` executable.
    static let binary = ChildProcess.mlkit

    /// The repository's root folder.
    static let repositoryRoot = ChildProcess.repositoryRoot

    /// Runs `mlkit` with `arguments`, feeding `input` to its standard input.
    static func run(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
                    in directory: URL? = nil) throws -> Result {
        try ChildProcess.run(binary, arguments, input: input, environment: environment, directory: directory)
    }

    /// A fresh temporary folder, removed by the caller.
    static func temporaryFolder() throws -> URL {
        try ChildProcess.temporaryFolder("cli")
    }
}

/// A running `mlkit`, for a test that talks to it while it runs. Its standard output goes to a
/// file that the test polls with a deadline, rather than to a pipe: a read would block one of
/// the few threads that run the tests, and would never end if a child that another test started
/// at the same moment inherited the pipe's other end.
final class RunningCLI {
    let process = Process()
    private let folder: URL
    private let output: URL
    private let outputHandle: FileHandle

    /// Starts `mlkit` with `arguments`; standard input comes from `input`, or is empty.
    init(_ arguments: [String], input: Pipe? = nil, environment: [String: String] = [:]) throws {
        folder = try CLI.temporaryFolder()
        output = folder.appendingPathComponent("stdout")
        try Data().write(to: output)
        outputHandle = try FileHandle(forWritingTo: output)
        process.executableURL = CLI.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input ?? FileHandle.nullDevice
        process.standardOutput = outputHandle
        process.standardError = FileHandle.nullDevice
        try process.startAlone()
    }

    /// The first `count` lines it has written, once it has written them, or `nil` past `seconds`.
    func lines(_ count: Int, within seconds: Double = 60) -> [String]? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let text = String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if lines.count >= count { return lines.prefix(count).map(String.init) }
            usleep(2_000)
        }
        return nil
    }

    /// Stops it (SIGTERM, then SIGKILL past 30 s) and removes its output.
    func stop() {
        try? process.terminate(within: 30)
        try? outputHandle.close()
        try? FileManager.default.removeItem(at: folder)
    }
}

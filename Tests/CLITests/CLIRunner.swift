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

    /// The shared reference material beside the repository.
    static let seedArtifacts = repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/seed-artifacts")

    /// Runs `mlkit` with `arguments`, feeding `input` to its standard input.
    static func run(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
                    in directory: URL? = nil) throws -> Result {
        try ChildProcess.run(binary, arguments, input: input, environment: environment, directory: directory)
    }

    /// A fresh temporary folder, removed by the caller.
    static func temporaryFolder() throws -> URL {
        try ChildProcess.temporaryFolder("cli")
    }

    /// The first `count` lines that a child has written to `file`, once it has written them,
    /// or `nil` past `seconds`. It polls the file rather than reading a pipe: a read would block
    /// one of the few threads that run the tests, and would never end if a child that another
    /// test started at the same moment inherited the pipe's other end.
    static func lines(of file: URL, count: Int, within seconds: Double = 60) -> [String]? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let text = String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if lines.count >= count { return lines.prefix(count).map(String.init) }
            usleep(2_000)
        }
        return nil
    }
}

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
}

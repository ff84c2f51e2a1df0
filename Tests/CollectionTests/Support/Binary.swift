import Foundation
import TestSupport

/// The `mlkit` binary that `swift build` put beside the test bundle, and the repository's files.
enum Binary {
    /// What a run printed and how it ended.
    typealias Result = ChildProcess.Result

    /// The built `mlkit` executable.
    static let mlkit = ChildProcess.mlkit

    /// The repository's root folder.
    static let repositoryRoot = ChildProcess.repositoryRoot

    /// The bundled sentiment model (3.3 MB): big enough to cut a download in the middle.
    static let sentimentModel = repositoryRoot.appendingPathComponent("trained/sentiment.mlkit")

    /// A small golden model trained on the chapter's headlines (`Tech`, `US Politics`).
    static let headlinesModel = repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models/v1-headlines-svm.mlkit")

    /// Runs `mlkit` with `arguments` and `environment` added to this process's.
    static func run(_ arguments: [String], environment: [String: String] = [:], executable: URL = mlkit) throws -> Result {
        try ChildProcess.run(executable, arguments, environment: environment)
    }

    /// A new temporary folder; the caller removes it.
    static func temporaryFolder(_ purpose: String) throws -> URL {
        try ChildProcess.temporaryFolder(purpose)
    }
}

/// A test's own failure with a message.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

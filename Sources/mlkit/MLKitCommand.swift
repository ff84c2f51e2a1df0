import ArgumentParser
import MLKit

/// The `mlkit` command: train, evaluate and run text classifiers and word taggers.
@main
struct MLKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mlkit",
        abstract: "Text classification and word tagging: tokenize, train, evaluate, predict and tag.",
        discussion: """
            Exit codes: 0 success, 64 usage error, 65 bad input data, 66 missing file, \
            69 collection server unavailable, 70 internal error, 73 key file exists, 76 bad server \
            answer, 77 key unavailable, wrong key or token refused. Errors go to standard error and \
            name the file, line or field at fault.
            """,
        version: "0.1.0",
        subcommands: [TrainCommand.self, PredictCommand.self, TagCommand.self, EvaluateCommand.self, InfoCommand.self,
                      TokenizeCommand.self, ExportCommand.self, KeygenCommand.self, EncryptCommand.self, DecryptCommand.self,
                      ServeCommand.self, CollectionCommand.self, DeployCommand.self, PullCommand.self]
    )

    /// Stops the BLAS library's idle worker threads (``BLASThreads/useCallingThreadOnly()``),
    /// which would otherwise compete with mlkit's own for the cores, then parses and runs the
    /// command, as ArgumentParser's `main` does, except that a command without `async` runs
    /// here, on the main thread.
    ///
    /// ArgumentParser's `main` would run it on a thread of Swift's concurrency pool, and glibc
    /// gives such a thread an allocator arena of its own, whose heaps hold at most 64 MiB: every
    /// larger block it allocates is mapped afresh and unmapped when freed, whatever
    /// ``FreedMemory/keepForReuse()`` asks. The main thread allocates from the main heap, which
    /// keeps freed blocks for reuse: `mlkit train` on wordnet-hypernyms took 180k page faults
    /// instead of 400k.
    static func main() async {
        BLASThreads.useCallingThreadOnly()
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

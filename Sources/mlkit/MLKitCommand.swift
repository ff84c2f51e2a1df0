import ArgumentParser
import MLKit

/// The `mlkit` command: train, evaluate and run text classifiers.
@main
struct MLKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mlkit",
        abstract: "Text classification: tokenize, train, evaluate and predict.",
        discussion: """
            Exit codes: 0 success, 64 usage error, 65 bad input data, 66 missing file, \
            69 collection server unavailable, 70 internal error, 73 key file exists, 76 bad server \
            answer, 77 key unavailable, wrong key or token refused. Errors go to standard error and \
            name the file, line or field at fault.
            """,
        version: "0.1.0",
        subcommands: [TrainCommand.self, PredictCommand.self, EvaluateCommand.self, InfoCommand.self, TokenizeCommand.self,
                      KeygenCommand.self, EncryptCommand.self, DecryptCommand.self,
                      ServeCommand.self, CollectionCommand.self, DeployCommand.self, PullCommand.self]
    )

    /// Stops the BLAS library's idle worker threads (``BLASThreads/useCallingThreadOnly()``),
    /// which would otherwise compete with mlkit's own for the cores, then runs the command.
    static func main() async {
        BLASThreads.useCallingThreadOnly()
        await main(nil)
    }
}

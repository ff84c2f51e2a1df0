import ArgumentParser
import Foundation
import MLKit
import MLKitCollections

/// `mlkit deploy`: upload model files and deploy them; roll back.
struct DeployCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deploy",
        abstract: "Deploy model files to a collection, or roll a collection back.",
        discussion: """
            mlkit deploy COLLECTION --model ID=FILE ... uploads each file, registers the keys \
            given with --key, and creates and activates a deployment. With no targeting option \
            and a 100% rollout it becomes the collection's default deployment.
            """,
        subcommands: [Create.self, Rollback.self],
        defaultSubcommand: Create.self
    )

    /// `mlkit deploy COLLECTION --model ID=FILE ...`.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Upload model files and create and activate a deployment."
        )

        @Argument(help: "The collection's identifier.")
        var collection: String

        @Option(help: "A model identifier and its file, ID=FILE (repeat for each model of the collection).")
        var model: [String] = []

        @Option(name: .customLong("model-version"),
                help: "A model's version, ID=VERSION (default: the version in the model's metadata, else 1).")
        var modelVersion: [String] = []

        @Option(help: "A key file of an encrypted model, registered for the collection (repeat for several).")
        var key: [String] = []

        @Option(help: "Target these language codes (comma-separated).")
        var language: String?

        @Option(help: "Target these device classes (comma-separated).")
        var deviceClass: String?

        @Option(help: "Target these operating systems (comma-separated).")
        var os: String?

        @Option(help: "Target an OS version range, such as \">=14\" or \">=14,<17.4\".")
        var osVersion: String?

        @Option(help: "Target these region codes (comma-separated).")
        var region: String?

        @Option(help: "Target an app version range, such as \">=2.0\".")
        var appVersion: String?

        @Option(help: "The percentage of matching installations that get the deployment.")
        var rollout: Double = 100

        @Flag(help: "Create the deployment without activating it.")
        var draft = false

        @Flag(help: "Write the deployment as JSON.")
        var json = false

        @OptionGroup var server: ServerOptions

        func validate() throws {
            if model.isEmpty { throw ValidationError("give at least one --model ID=FILE.") }
            if !(0...100).contains(rollout) { throw ValidationError("--rollout must be between 0 and 100.") }
        }

        func run() async throws {
            try await reportingFailures {
                let files = try pairs(model, option: "model")
                let versions = Dictionary(try pairs(modelVersion, option: "model-version"), uniquingKeysWith: { $1 })
                let publisher = try server.publisher()
                try await registerKeys(key, collection: collection, with: publisher)
                var models: [String: PublisherClient.ModelReference] = [:]
                for (identifier, path) in files {
                    guard FileManager.default.fileExists(atPath: path) else {
                        throw MLKitError(.fileNotFound, "no such file", at: .init(file: path, field: "--model \(identifier)"))
                    }
                    let uploaded = try await publisher.uploadModel(at: URL(fileURLWithPath: path))
                    printProgress("uploaded \(path) as \(uploaded.sha256) (\(uploaded.size) bytes\(uploaded.encrypted == true ? ", encrypted" : ""))")
                    models[identifier] = .init(sha256: uploaded.sha256,
                                               version: versions[identifier] ?? uploaded.version ?? "1")
                }
                let deployment = try await publisher.createDeployment(
                    collection: collection, models: models, targeting: targeting, rolloutPercentage: rollout,
                    activate: !draft)
                printOutput(json ? try jsonText(deployment) : describe(deployment).joined(separator: "\n"))
            }
        }

        private var targeting: Targeting {
            func list(_ value: String?) -> [String]? {
                value.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
            }
            return Targeting(languageCodes: list(language), deviceClasses: list(deviceClass), operatingSystems: list(os),
                             osVersion: osVersion, regionCodes: list(region), appVersion: appVersion)
        }

        private func pairs(_ values: [String], option: String) throws -> [(String, String)] {
            try values.map { value in
                guard let equals = value.firstIndex(of: "="), equals != value.startIndex,
                      value.index(after: equals) != value.endIndex else {
                    throw MLKitError.option(option, "expected ID=VALUE, found \"\(value)\"")
                }
                return (String(value[..<equals]), String(value[value.index(after: equals)...]))
            }
        }
    }

    /// `mlkit deploy rollback COLLECTION [--to DEPLOYMENT]`.
    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-activate the previous default deployment, or the one given with --to."
        )

        @Argument(help: "The collection's identifier.")
        var collection: String

        @Option(help: "The deployment to roll back to (default: the previous default deployment).")
        var to: String?

        @Flag(help: "Write the deployment as JSON.")
        var json = false

        @OptionGroup var server: ServerOptions

        func run() async throws {
            try await reportingFailures {
                let deployment = try await server.publisher().rollback(collection: collection, to: to)
                printOutput(json ? try jsonText(deployment) : describe(deployment).joined(separator: "\n"))
            }
        }
    }
}

/// Reads a whole file, naming it when it is missing or unreadable.
func readFile(_ path: String) throws -> Data {
    guard FileManager.default.fileExists(atPath: path) else {
        throw MLKitError(.fileNotFound, "no such file", at: .init(file: path))
    }
    do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
        throw MLKitError(.io, "cannot read the file: \(error.localizedDescription)", at: .init(file: path))
    }
}

/// Writes a progress line to standard error.
func printProgress(_ message: String) {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
}

import ArgumentParser
import Foundation
import MLKit
import MLKitCollections

/// `mlkit collection`: create, list and show the collections of a server.
struct CollectionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collection",
        abstract: "Create, list and show model collections on a collection server.",
        subcommands: [Create.self, List.self, Show.self]
    )

    /// `mlkit collection create`.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a collection, or update its description and model identifiers."
        )

        @Argument(help: "The collection's identifier ([A-Za-z0-9._-], at most 128).")
        var identifier: String

        @Option(name: .customLong("model-id"), help: "A model identifier of the collection (repeat for several).")
        var modelIDs: [String] = []

        @Option(help: "What the collection is for.")
        var description: String = ""

        @OptionGroup var server: ServerOptions

        func validate() throws {
            if modelIDs.isEmpty { throw ValidationError("give at least one --model-id.") }
        }

        func run() async throws {
            try await reportingFailures {
                let collection = try await server.publisher().saveCollection(
                    identifier, description: description, modelIdentifiers: modelIDs)
                printOutput("collection \(collection.identifier): models \(collection.modelIdentifiers.joined(separator: ", "))")
            }
        }
    }

    /// `mlkit collection list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the server's collections.")

        @OptionGroup var server: ServerOptions

        @Flag(help: "Write the list as JSON.")
        var json = false

        func run() async throws {
            try await reportingFailures {
                let collections = try await server.publisher().collections()
                if json { return printOutput(try jsonText(collections)) }
                var lines = ["identifier\tmodels\tdefault deployment\tdescription"]
                for collection in collections {
                    lines.append([collection.identifier, collection.modelIdentifiers.joined(separator: ","),
                                  collection.defaultDeploymentID ?? "-", collection.description ?? ""].joined(separator: "\t"))
                }
                printOutput(lines.joined(separator: "\n"))
            }
        }
    }

    /// `mlkit collection show`.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a collection and its deployment history, newest first."
        )

        @Argument(help: "The collection's identifier.")
        var identifier: String

        @OptionGroup var server: ServerOptions

        @Flag(help: "Write the collection and its history as JSON.")
        var json = false

        func run() async throws {
            try await reportingFailures {
                let history = try await server.publisher().history(of: identifier)
                if json { return printOutput(try jsonText(history)) }
                let collection = history.collection
                var lines = [
                    "collection          \(collection.identifier)",
                    "description         \(collection.description ?? "")",
                    "models              \(collection.modelIdentifiers.joined(separator: ", "))",
                    "default deployment  \(collection.defaultDeploymentID ?? "-")",
                    "deployments         \(history.deployments.count)",
                ]
                for deployment in history.deployments {
                    lines.append("")
                    lines.append(contentsOf: describe(deployment))
                }
                printOutput(lines.joined(separator: "\n"))
            }
        }
    }
}

/// The lines that describe a deployment in `collection show` and `deploy`.
func describe(_ deployment: Deployment) -> [String] {
    var lines = [
        "deployment \(deployment.deploymentID)  \(deployment.status)",
        "  created \(shortDate(deployment.created)), activated \(shortDate(deployment.activated))",
        "  rollout \(deployment.rolloutPercentage.map { String(format: "%g", $0) } ?? "100")%, targeting \(describe(deployment.targeting))",
    ]
    for (identifier, model) in deployment.models.sorted(by: { $0.key < $1.key }) {
        var line = "  \(identifier): \(model.sha256)"
        if let version = model.version { line += " version \(version)" }
        if let size = model.size { line += ", \(size) bytes" }
        if model.encrypted == true { line += ", encrypted with key \(model.keyIdentifier ?? "?")" }
        lines.append(line)
    }
    return lines
}

private func describe(_ targeting: Targeting?) -> String {
    guard let targeting, !targeting.isEmpty else { return "none (default deployment)" }
    var rules: [String] = []
    if let value = targeting.languageCodes { rules.append("language " + value.joined(separator: ",")) }
    if let value = targeting.deviceClasses { rules.append("device class " + value.joined(separator: ",")) }
    if let value = targeting.operatingSystems { rules.append("os " + value.joined(separator: ",")) }
    if let value = targeting.osVersion { rules.append("os version " + value) }
    if let value = targeting.regionCodes { rules.append("region " + value.joined(separator: ",")) }
    if let value = targeting.appVersion { rules.append("app version " + value) }
    return rules.joined(separator: "; ")
}

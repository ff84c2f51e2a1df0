import ArgumentParser
import Foundation
import MLKit
import MLKitCollections

/// `mlkit pull`: fetch a collection's models for a device context into the cache.
struct PullCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Download a collection's models for a device context, verified, into the cache.",
        discussion: """
            Prints the deployment and one line per model: its identifier, the local file, the \
            SHA-256 and the version. When the server cannot be reached but a copy is cached, \
            prints that copy, warns on standard error that it is stale, and exits with 0.
            """
    )

    @Argument(help: "The collection's identifier.")
    var collection: String

    @OptionGroup var server: ServerOptions

    @OptionGroup var device: DeviceContextOptions

    @Flag(help: "Write the collection as JSON.")
    var json = false

    func run() async throws {
        try await reportingFailures {
            let pulled = try await ModelCollection.beginAccessing(
                identifier: collection, server: try server.serverURL(), context: device.context,
                cacheFolder: device.cacheFolder, refreshPolicy: .always)
            if let reason = pulled.staleReason {
                printError("warning: using the cached copy of collection \"\(collection)\" (stale): \(reason)")
            }
            printOutput(json ? try jsonText(PulledCollection(pulled)) : describe(pulled))
        }
    }

    private func describe(_ pulled: ModelCollection) -> String {
        var lines = ["collection \(pulled.identifier) deployment \(pulled.deploymentID)\(pulled.isStale ? " (stale)" : "")"]
        for entry in pulled.entries.values.sorted(by: { $0.modelIdentifier < $1.modelIdentifier }) {
            var fields = [entry.modelIdentifier, entry.modelURL.path, entry.sha256, entry.version ?? "-"]
            if entry.isEncrypted { fields.append("encrypted:\(entry.keyIdentifier ?? "?")") }
            lines.append(fields.joined(separator: "\t"))
        }
        return lines.joined(separator: "\n")
    }
}

/// The JSON that `mlkit pull --json` writes.
private struct PulledCollection: Encodable {
    struct Entry: Encodable {
        let modelIdentifier: String
        let modelPath: String
        let sha256: String
        let size: Int64
        let version: String?
        let encrypted: Bool
        let keyIdentifier: String?
    }

    let identifier: String
    let deploymentID: String
    let stale: Bool
    let staleReason: String?
    let entries: [String: Entry]

    init(_ collection: ModelCollection) {
        identifier = collection.identifier
        deploymentID = collection.deploymentID
        stale = collection.isStale
        staleReason = collection.staleReason?.description
        entries = collection.entries.mapValues {
            Entry(modelIdentifier: $0.modelIdentifier, modelPath: $0.modelURL.path, sha256: $0.sha256, size: $0.size,
                  version: $0.version, encrypted: $0.isEncrypted, keyIdentifier: $0.keyIdentifier)
        }
    }
}

import ArgumentParser
import Foundation
import MLKit
import MLKitCollections
import MLKitEncryption

extension PredictCommand {
    /// Checks that `--collection` and `--model-id` come together and without `--model`.
    func validateCollectionOptions() throws {
        if collection != nil && modelID == nil { throw ValidationError("--collection needs --model-id.") }
        if modelID != nil && collection == nil { throw ValidationError("--model-id needs --collection.") }
        if collection != nil && model != nil { throw ValidationError("give either --model or --collection, not both.") }
    }

    /// The classifier: the model `--model-id` of `--collection`, fetched (or taken from the
    /// cache) for this device context, else the local model that `--model` names.
    func resolveClassifier() async throws -> TextClassifier {
        guard let collection, let modelID else {
            return try loadClassifier(at: try ModelLocation.resolve(model), keyPath: key)
        }
        let accessed = try await ModelCollection.beginAccessing(
            identifier: collection, server: try server.serverURL(), context: device.context,
            cacheFolder: device.cacheFolder)
        if let reason = accessed.staleReason {
            printError("warning: using the cached copy of collection \"\(collection)\" (stale): \(reason)")
        }
        guard let entry = accessed.entries[modelID] else {
            let known = accessed.entries.keys.sorted().joined(separator: ", ")
            throw MLKitError.option("model-id", "collection \"\(collection)\" has no model \"\(modelID)\"; it has \(known)")
        }
        return try await loadModel(entry)
    }
}

extension PredictCommand {
    /// Loads a collection's model file. An encrypted one is decrypted in memory with `--key`,
    /// or else with its key fetched from the collection server with the read token.
    func loadModel(_ entry: ModelCollection.Entry) async throws -> TextClassifier {
        guard entry.isEncrypted, key == nil else { return try loadClassifier(at: entry.modelURL, keyPath: key) }
        let keys = try ServerKeyProvider(server: try server.serverURL(), token: server.token(from: "MLKIT_READ_TOKEN"))
        return try await TextClassifier(contentsOf: entry.modelURL, keyProvider: keys)
    }
}

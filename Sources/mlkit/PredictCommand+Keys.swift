import Foundation
import MLKit
import MLKitCollections
import MLKitEncryption

extension PredictCommand {
    /// Loads a collection's model file. An encrypted one is decrypted in memory with `--key`,
    /// or else with its key fetched from the collection server with the read token.
    func loadModel(_ entry: ModelCollection.Entry) async throws -> TextClassifier {
        guard entry.isEncrypted, key == nil else { return try loadClassifier(at: entry.modelURL, keyPath: key) }
        let keys = try ServerKeyProvider(server: try server.serverURL(), token: server.token(from: "MLKIT_READ_TOKEN"))
        return try await TextClassifier(contentsOf: entry.modelURL, keyProvider: keys)
    }
}

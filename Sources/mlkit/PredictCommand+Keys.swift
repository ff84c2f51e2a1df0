import Foundation
import MLKit
import MLKitCollections

extension PredictCommand {
    /// Loads a collection's model file. Encrypted models need `MLKitEncryption`, which is not
    /// in this build yet.
    func loadModel(_ entry: ModelCollection.Entry) async throws -> TextClassifier {
        if entry.isEncrypted {
            throw MLKitError(.unavailable, "the model is encrypted, and encrypted models are not in this build",
                             at: .init(file: entry.modelURL.path))
        }
        return try TextClassifier(contentsOf: entry.modelURL)
    }
}

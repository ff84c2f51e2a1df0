import Foundation
import MLKit
import MLKitCollections

/// Registers key files for a collection. Key files are read by `MLKitEncryption`, which is not
/// in this build yet.
func registerKeys(_ paths: [String], collection: String, with publisher: PublisherClient) async throws {
    if let path = paths.first {
        throw MLKitError(.unavailable, "encrypted models are not in this build", at: .init(file: path, field: "--key"))
    }
}

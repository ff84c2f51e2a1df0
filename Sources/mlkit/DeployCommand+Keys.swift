import Foundation
import MLKit
import MLKitCollections
import MLKitEncryption

/// Registers key files (`--key`) for a collection, each under the identifier it holds.
func registerKeys(_ paths: [String], collection: String, with publisher: PublisherClient) async throws {
    for path in paths {
        let data = try readFile(path)
        let key = try ModelKey(keyFileData: data, source: path)
        if let warning = ModelKey.permissionWarning(forKeyFileAt: URL(fileURLWithPath: path)) { printWarning(warning) }
        try await publisher.registerKey(data, identifier: key.identifier, collection: collection)
        printProgress("registered key \(key.identifier) from \(path)")
    }
}

import Foundation
import MLKitEncryption

/// Reads a key file that a publisher registers.
enum KeyFileInspection {
    /// The canonical bytes of a key file (`ModelKey.keyFileData()`: the `.mlkitkey` JSON, also
    /// for one of Apple's `.mlmodelkey` files), checked against the identifier in the path.
    /// - Throws: ``CollectionServerError`` (unprocessable) for a file that is not a key or names
    ///   another identifier.
    static func canonicalKeyFile(_ data: Data, expectedIdentifier: String) throws -> Data {
        let key: ModelKey
        do {
            key = try ModelKey(keyFileData: data, source: "the key file")
        } catch let error as EncryptionError {
            throw CollectionServerError.unprocessable("not a valid key file: \(error.message)")
        }
        guard key.identifier == expectedIdentifier else {
            throw CollectionServerError.unprocessable(
                "the key file's identifier is '\(key.identifier)', not '\(expectedIdentifier)' as the path says")
        }
        return key.keyFileData()
    }
}

import Foundation

/// Reads a key file that a publisher registers.
enum KeyFileInspection {
    /// The canonical bytes of a key file, checked against the identifier in the path.
    /// - Throws: ``CollectionServerError`` (unprocessable) for a file that is not a key or names
    ///   another identifier.
    static func canonicalKeyFile(_ data: Data, expectedIdentifier: String) throws -> Data {
        // Wired to MLKitEncryption's `ModelKey` once that module is merged.
        throw CollectionServerError.unprocessable("key files cannot be registered yet: MLKitEncryption is not part of this build")
    }
}

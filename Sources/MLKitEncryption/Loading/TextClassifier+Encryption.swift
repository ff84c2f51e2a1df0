public import Foundation
public import MLKit

extension TextClassifier {
    /// Loads a classifier from a model file, encrypted or plain, asking `keyProvider` for the
    /// key that an encrypted file names in its clear header.
    ///
    /// The file is memory-mapped and decrypted in memory: no plaintext is ever written to
    /// disk or to a temporary file. A plain model file loads as with ``init(contentsOf:)``,
    /// without asking the provider.
    /// - Parameters:
    ///   - url: The model file.
    ///   - keyProvider: Where the key comes from.
    /// - Throws: ``EncryptionError`` naming the key identifier: `keyUnavailable` when the
    ///   provider throws (any error, whose description becomes the reason), `wrongKey`,
    ///   `decryptionFailed`, `unsupportedEncryption`; ``MLKitError`` for a missing file or a
    ///   model that is invalid inside.
    public init(contentsOf url: URL, keyProvider: any KeyProvider) async throws {
        try self.init(modelFileData: try await ModelFileDecryption.plaintext(at: url, keyProvider: keyProvider),
                      source: url.path)
    }

    /// Loads a classifier from a model file, encrypted or plain, with a key at hand.
    /// - Parameters:
    ///   - url: The model file.
    ///   - key: The key for an encrypted file; `nil` when there is none, which is fine for a
    ///     plain file and `keyUnavailable` for an encrypted one.
    /// - Throws: As ``init(contentsOf:keyProvider:)``.
    public init(contentsOf url: URL, key: ModelKey?) throws {
        try self.init(modelFileData: try ModelFileDecryption.plaintext(at: url, key: key), source: url.path)
    }

    /// Loads a classifier from the bytes of an encrypted model file, decrypting them in memory.
    /// - Parameters:
    ///   - encryptedModelData: The encrypted file's bytes.
    ///   - key: The key the file names.
    ///   - source: A name for error messages.
    /// - Throws: As ``ModelEncryption/decrypt(_:with:source:)``, then as
    ///   ``init(modelFileData:source:)`` for the model inside.
    public init(encryptedModelData: Data, key: ModelKey, source: String? = nil) throws {
        let modelFile = try ModelEncryption.decrypt(encryptedModelData, with: key, source: source)
        try self.init(modelFileData: modelFile, source: source)
    }
}

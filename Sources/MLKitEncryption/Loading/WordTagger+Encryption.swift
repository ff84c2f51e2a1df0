public import Foundation
public import MLKit

extension WordTagger {
    /// Loads a tagger from a model file, encrypted or plain, asking `keyProvider` for the key
    /// that an encrypted file names in its clear header, as
    /// ``MLKit/TextClassifier/init(contentsOf:keyProvider:)`` does for a classifier.
    ///
    /// The file is memory-mapped and decrypted in memory only. A plain model file loads as with
    /// ``init(contentsOf:)``, without asking the provider.
    /// - Parameters:
    ///   - url: The model file.
    ///   - keyProvider: Where the key comes from.
    /// - Throws: ``EncryptionError`` naming the key identifier: `keyUnavailable`, `wrongKey`,
    ///   `decryptionFailed`, `unsupportedEncryption`; ``MLKitError`` for a missing file, a model
    ///   that is invalid inside, or a text classifier's file.
    public init(contentsOf url: URL, keyProvider: any KeyProvider) async throws {
        try self.init(modelFileData: try await ModelFileDecryption.plaintext(at: url, keyProvider: keyProvider),
                      source: url.path)
    }

    /// Loads a tagger from a model file, encrypted or plain, with a key at hand.
    /// - Parameters:
    ///   - url: The model file.
    ///   - key: The key for an encrypted file; `nil` when there is none, which is fine for a
    ///     plain file and `keyUnavailable` for an encrypted one.
    /// - Throws: As ``init(contentsOf:keyProvider:)``.
    public init(contentsOf url: URL, key: ModelKey?) throws {
        try self.init(modelFileData: try ModelFileDecryption.plaintext(at: url, key: key), source: url.path)
    }
}

extension AnyModel {
    /// Loads the model of a model file of either kind, encrypted or plain, with a key at hand.
    /// - Parameters:
    ///   - url: The model file.
    ///   - key: The key for an encrypted file, or `nil`.
    /// - Throws: As ``MLKit/WordTagger/init(contentsOf:key:)``.
    public init(contentsOf url: URL, key: ModelKey?) throws {
        try self.init(modelFileData: try ModelFileDecryption.plaintext(at: url, key: key), source: url.path)
    }

    /// Loads the model of the bytes of an encrypted model file of either kind, decrypting them
    /// in memory.
    /// - Parameters:
    ///   - encryptedModelData: The encrypted file's bytes.
    ///   - key: The key the file names.
    ///   - source: A name for error messages.
    /// - Throws: As ``ModelEncryption/decrypt(_:with:source:)``, then as
    ///   ``MLKit/AnyModel/init(modelFileData:source:)``.
    public init(encryptedModelData: Data, key: ModelKey, source: String? = nil) throws {
        try self.init(modelFileData: try ModelEncryption.decrypt(encryptedModelData, with: key, source: source), source: source)
    }
}

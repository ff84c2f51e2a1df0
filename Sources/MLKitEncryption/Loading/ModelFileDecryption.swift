import Foundation
import MLKit

/// The plain model file behind a file that may be encrypted: what every encrypted loader
/// (``MLKit/TextClassifier/init(contentsOf:keyProvider:)``, ``MLKit/WordTagger/init(contentsOf:keyProvider:)``,
/// ``MLKit/AnyModel/init(contentsOf:key:)``) does before reading the model.
enum ModelFileDecryption {
    /// The bytes of the model file at `url`, decrypted in memory with a key from `keyProvider`
    /// when the file is encrypted, and as they are when it is plain (the provider is not asked).
    static func plaintext(at url: URL, keyProvider: any KeyProvider) async throws -> Data {
        let data = try TextClassifier.mappedModelFile(at: url)
        let source = url.path
        guard EncryptedModelHeader.isEncrypted(data) else { return data }
        let identifier = try EncryptedModelHeader(parsing: data, source: source).keyIdentifier
        let key: ModelKey
        do {
            key = try await keyProvider.key(for: identifier)
        } catch let error as EncryptionError where error.code == .keyUnavailable {
            throw EncryptionError(.keyUnavailable, error.message, keyIdentifier: identifier, file: source)
        } catch {
            throw EncryptionError(.keyUnavailable, "the key provider could not supply key \(identifier): \(error)",
                                  keyIdentifier: identifier, file: source)
        }
        return try ModelEncryption.decrypt(data, with: key, source: source)
    }

    /// The bytes of the model file at `url`, decrypted in memory with `key` when the file is
    /// encrypted; a plain file needs no key.
    static func plaintext(at url: URL, key: ModelKey?) throws -> Data {
        let data = try TextClassifier.mappedModelFile(at: url)
        guard EncryptedModelHeader.isEncrypted(data) else { return data }
        guard let key else {
            let header = try EncryptedModelHeader(parsing: data, source: url.path)
            throw EncryptionError(.keyUnavailable, "the model is encrypted with key \(header.keyIdentifier) "
                                  + "(\(header.cipher.rawValue)) and no key was given",
                                  keyIdentifier: header.keyIdentifier, file: url.path)
        }
        return try ModelEncryption.decrypt(data, with: key, source: url.path)
    }
}

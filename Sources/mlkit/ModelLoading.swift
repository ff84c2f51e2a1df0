public import ArgumentParser
import Foundation
import MLKit
public import MLKitEncryption

extension ModelCipher: ExpressibleByArgument {
    /// Accepts the cipher's name in any letter case: `aes-256-gcm`, `ChaCha20-Poly1305`.
    public init?(argument: String) {
        guard let cipher = Self.allCases.first(where: { $0.rawValue.lowercased() == argument.lowercased() }) else { return nil }
        self = cipher
    }
}

/// Reads a key file named on the command line, warning on standard error when others may read it.
func readKey(path: String) throws -> ModelKey {
    let url = URL(fileURLWithPath: path)
    let key = try ModelKey(contentsOf: url)
    if let warning = ModelKey.permissionWarning(forKeyFileAt: url) { printWarning(warning) }
    return key
}

/// Loads a model file, plain or encrypted, with the key file given by `--key`, if any.
func loadClassifier(at url: URL, keyPath: String?) throws -> TextClassifier {
    try withKey(keyPath) { try TextClassifier(contentsOf: url, key: $0) }
}

/// Loads a model file of either kind, plain or encrypted, with the key file given by `--key`.
func loadAnyModel(at url: URL, keyPath: String?) throws -> AnyModel {
    try withKey(keyPath) { try AnyModel(contentsOf: url, key: $0) }
}

/// Calls `load` with the key file given by `--key`, if any; a missing key's error says to pass
/// `--key`.
func withKey<Model>(_ keyPath: String?, _ load: (ModelKey?) throws -> Model) throws -> Model {
    let key = try keyPath.map { try readKey(path: $0) }
    do {
        return try load(key)
    } catch let error as EncryptionError where error.code == .keyUnavailable && key == nil {
        throw EncryptionError(error.code, error.message + "; pass --key FILE with that key", keyIdentifier: error.keyIdentifier,
                              file: error.file)
    }
}

/// Writes `mlkit: warning: message` to standard error.
func printWarning(_ message: String) {
    FileHandle.standardError.write(Data("mlkit: warning: \(message)\n".utf8))
}

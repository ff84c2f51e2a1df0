import ArgumentParser
import Foundation
import MLKit
import MLKitEncryption

/// `mlkit keygen`: writes a new key file.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Create a key for encrypting models, in a key file readable by its owner only.",
        discussion: """
            The key file (docs/encryption.md) holds a UUID identifier, the cipher, 256 bits from \
            the system's secure random source and the creation date. It is written with mode 0600 \
            and never replaces an existing file without --force. Keep it out of the app and out of \
            version control.
            """
    )

    @Option(name: .shortAndLong, help: "The key file to write, such as team.mlkitkey.")
    var output: String

    @Option(help: "AES-256-GCM or ChaCha20-Poly1305.")
    var cipher: ModelCipher = .aes256GCM

    @Flag(help: "Replace an existing file.")
    var force = false

    func validate() throws {
        if cipher == .aes128GCM { throw ValidationError("--cipher: keygen makes 256-bit keys: AES-256-GCM or ChaCha20-Poly1305.") }
    }

    func run() throws {
        try reportingFailures {
            let key = ModelKey.generate(cipher: cipher)
            try key.write(to: URL(fileURLWithPath: output), overwrite: force)
            print("key \(key.identifier) (\(key.cipher.rawValue)) written to \(output) with mode 0600")
        }
    }
}

/// `mlkit encrypt`: encrypts a model, or re-encrypts one under a new key.
struct EncryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Encrypt a model with a key, or re-encrypt an encrypted one with a new key.",
        discussion: """
            A plain MODEL is checked, then encrypted to -o (default: MODEL with .encrypted.mlkit). \
            An encrypted MODEL needs --old-key: it is decrypted in memory and encrypted again with \
            --key, to -o or in place. No plaintext is written anywhere.
            """
    )

    @Argument(help: "The model file: plain, or encrypted for key rotation.")
    var model: String

    @Option(help: "The key file to encrypt with (.mlkitkey, or Apple's .mlmodelkey).")
    var key: String

    @Option(help: "For an encrypted MODEL: the key file it is encrypted with now.")
    var oldKey: String?

    @Option(name: .shortAndLong, help: "The encrypted model file to write.")
    var output: String?

    func run() throws {
        try reportingFailures {
            let url = URL(fileURLWithPath: model)
            let data = try TextClassifier.mappedModelFile(at: url)
            let newKey = try readKey(path: key)
            let encrypted: Data
            let target: String
            if EncryptedModelHeader.isEncrypted(data) {
                guard let oldKey else {
                    let header = try EncryptedModelHeader(parsing: data, source: model)
                    throw EncryptionError(.alreadyEncrypted, "the model is encrypted with key \(header.keyIdentifier); "
                                          + "pass --old-key FILE with that key to re-encrypt it", keyIdentifier: header.keyIdentifier,
                                          file: model)
                }
                let plaintext = try ModelEncryption.decrypt(data, with: try readKey(path: oldKey), source: model)
                _ = try AnyModel(modelFileData: plaintext, source: model)
                encrypted = try ModelEncryption.encrypt(plaintext, with: newKey)
                target = output ?? model
            } else {
                if oldKey != nil {
                    throw EncryptionError(.notEncrypted, "--old-key is for re-encrypting an encrypted model, and this one is plain",
                                          file: model)
                }
                _ = try AnyModel(modelFileData: data, source: model)
                encrypted = try ModelEncryption.encrypt(data, with: newKey)
                target = output ?? Self.defaultOutput(for: model)
            }
            try AtomicFile.write(encrypted, to: URL(fileURLWithPath: target))
            print("\(model) encrypted with key \(newKey.identifier) (\(newKey.cipher.rawValue)) to \(target), \(encrypted.count) bytes")
        }
    }

    /// `model.mlkit` → `model.encrypted.mlkit`.
    static func defaultOutput(for model: String) -> String {
        let base = model.hasSuffix(".mlkit") ? String(model.dropLast(".mlkit".count)) : model
        return base + ".encrypted.mlkit"
    }
}

/// `mlkit decrypt`: writes the plaintext of an encrypted model, for debugging.
struct DecryptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt",
        abstract: "Decrypt a model to a plain file, for debugging only: it writes plaintext.",
        discussion: """
            Every command that reads a model takes --key and decrypts in memory; this one exists \
            to inspect a file by hand. The plain file is written with mode 0600; delete it when done.
            """
    )

    @Argument(help: "The encrypted model file.")
    var model: String

    @Option(help: "The key file it is encrypted with.")
    var key: String

    @Option(name: .shortAndLong, help: "The plain model file to write.")
    var output: String

    func run() throws {
        try reportingFailures {
            let data = try TextClassifier.mappedModelFile(at: URL(fileURLWithPath: model))
            let plaintext = try ModelEncryption.decrypt(data, with: try readKey(path: key), source: model)
            _ = try AnyModel(modelFileData: plaintext, source: model)
            printWarning("writing the decrypted model as plaintext to \(output); it is no longer protected, delete it when done")
            try AtomicFile.write(plaintext, to: URL(fileURLWithPath: output), permissions: 0o600)
            print("\(model) decrypted to \(output), \(plaintext.count) bytes")
        }
    }
}

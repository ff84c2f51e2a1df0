public import Foundation
import Crypto

/// A key that encrypts and decrypts model files: an identifier, a cipher and its secret
/// material.
///
/// The material never appears in ``description``, ``debugDescription`` or a mirror (`dump`),
/// so a key can be logged safely; it leaves the value only through ``keyFileData()``.
/// Keys come from ``generate(cipher:)``, from an mlkit key file (`.mlkitkey`, JSON,
/// `docs/encryption.md`) or from one of Apple's `.mlmodelkey` property lists.
public struct ModelKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key's identifier: a UUID for generated keys, Apple's `KeyIdentifier` for theirs.
    /// Encrypted model files name it in their clear header.
    public let identifier: String
    /// The cipher the key is for.
    public let cipher: ModelCipher
    /// When the key was generated, when known (Apple's key files do not say).
    public let created: Date?
    /// The secret material: ``ModelCipher/keySize`` bytes.
    let material: [UInt8]
    /// The 16-byte initialization vector of an Apple `.mlmodelkey`, which Apple's encrypted
    /// model archives use for every page (``ModelArchiveDecryption``); `nil` for mlkit's keys.
    let initializationVector: [UInt8]?

    /// The longest identifier a header can hold, in UTF-8 bytes.
    static let maximumIdentifierLength = 255

    /// Whether an identifier may hold `scalar`: not a control or format character (invisible
    /// in messages and paths; JSON readers drop a leading U+FEFF from a string, so such a key
    /// would not read back from its own key file), and not a noncharacter.
    static func isAllowedInIdentifier(_ scalar: Unicode.Scalar) -> Bool {
        !scalar.properties.isNoncharacterCodePoint && ![.control, .format].contains(scalar.properties.generalCategory)
    }

    /// Creates a key from its parts, checking the identifier and the material's size.
    /// - Throws: ``EncryptionError`` with code `invalidKeyFile`, naming `source` and the field.
    init(identifier: String, cipher: ModelCipher, material: [UInt8], created: Date?, source: String?,
         initializationVector: [UInt8]? = nil) throws {
        func invalid(_ field: String, _ reason: String) -> EncryptionError {
            EncryptionError(.invalidKeyFile, "field \"\(field)\": \(reason)", keyIdentifier: identifier.isEmpty ? nil : identifier,
                            file: source)
        }
        try Self.checkIdentifier(identifier, source: source)
        guard material.count == cipher.keySize else {
            throw invalid("key", "key \(identifier) is for \(cipher.rawValue), which needs \(cipher.keySize) bytes, "
                          + "but it has \(material.count)")
        }
        if let initializationVector, initializationVector.count != 16 {
            throw invalid("IV", "key \(identifier) has an IV of \(initializationVector.count) bytes, not 16")
        }
        self.identifier = identifier
        self.cipher = cipher
        self.material = material
        self.created = created
        self.initializationVector = initializationVector
    }

    /// Checks a key identifier on its own: 1 to ``maximumIdentifierLength`` bytes, no control or
    /// format character and no noncharacter (invisible in messages, paths and logs). Key files
    /// check it before any message quotes it.
    static func checkIdentifier(_ identifier: String, source: String?) throws {
        func invalid(_ reason: String) -> EncryptionError {
            EncryptionError(.invalidKeyFile, "field \"identifier\": \(reason)", keyIdentifier: identifier.isEmpty ? nil : identifier,
                            file: source)
        }
        guard !identifier.isEmpty, identifier.utf8.count <= maximumIdentifierLength else {
            throw invalid("the key identifier must have 1 to \(maximumIdentifierLength) bytes of UTF-8")
        }
        guard identifier.unicodeScalars.allSatisfy(isAllowedInIdentifier) else {
            throw invalid("the key identifier holds a control or format character or a noncharacter")
        }
    }

    /// A new key: fresh material from the system's secure random source (swift-crypto's
    /// `SymmetricKey`, which reads the operating system's CSPRNG), a random UUID as its
    /// identifier, and the current date.
    /// - Parameter cipher: The cipher the key is for; AES-256-GCM by default.
    /// - Returns: The key.
    public static func generate(cipher: ModelCipher = .aes256GCM) -> ModelKey {
        let key = SymmetricKey(size: SymmetricKeySize(bitCount: cipher.keySize * 8))
        let material = key.withUnsafeBytes { Array($0) }
        let seconds = Date().timeIntervalSince1970.rounded(.down)  // key files store whole seconds
        do {
            return try ModelKey(identifier: UUID().uuidString, cipher: cipher, material: material,
                                created: Date(timeIntervalSince1970: seconds), source: nil)
        } catch {
            preconditionFailure("a generated key is always valid: \(error)")
        }
    }

    /// The key for swift-crypto.
    var symmetricKey: SymmetricKey { SymmetricKey(data: material) }

    /// The key's identifier and cipher; never its material.
    public var description: String { "ModelKey(\(identifier), \(cipher.rawValue))" }

    /// As ``description``: the material is never printed.
    public var debugDescription: String { description }

    /// A mirror without the material, for `dump` and debuggers.
    public var customMirror: Mirror {
        Mirror(self, children: ["identifier": identifier, "cipher": cipher, "created": created as Any],
               displayStyle: .struct)
    }
}

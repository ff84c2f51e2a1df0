public import Foundation
import MLKit

extension ModelKey {
    /// The `format` field of an mlkit key file.
    static let keyFileFormat = "mlkit-key"
    /// The key file version this mlkit writes and reads.
    static let keyFileVersion = 1

    /// Reads a key from the bytes of a key file: an mlkit key file (`.mlkitkey`, JSON) or one
    /// of Apple's `.mlmodelkey` property lists, whose 128-bit `Key` becomes an AES-128-GCM key
    /// under its `KeyIdentifier`. Its `IV` is kept for Apple's encrypted model archives
    /// (``ModelArchiveDecryption``); mlkit's own encrypted files draw a fresh nonce instead.
    /// - Parameters:
    ///   - keyFileData: The file's bytes.
    ///   - source: A name for error messages, such as the file's path.
    /// - Throws: ``EncryptionError`` with code `invalidKeyFile`, naming the source and field.
    public init(keyFileData: Data, source: String? = nil) throws {
        let start = keyFileData.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if start == UInt8(ascii: "{") {
            self = try Self.parseKeyFile(keyFileData, source: source)
        } else if start == UInt8(ascii: "<") || keyFileData.starts(with: Array("bplist".utf8)) {
            self = try Self.parseAppleKeyFile(keyFileData, source: source)
        } else {
            throw EncryptionError(.invalidKeyFile, "neither an mlkit key file (JSON) nor an Apple .mlmodelkey property list",
                                  file: source)
        }
    }

    /// Reads a key from a key file (`.mlkitkey` or Apple's `.mlmodelkey`).
    /// - Parameter url: The key file.
    /// - Throws: ``EncryptionError``: `fileNotFound`, `io`, or `invalidKeyFile` naming the file.
    public init(contentsOf url: URL) throws {
        try self.init(keyFileData: try Self.readFile(url), source: url.path)
    }

    /// The canonical bytes of the mlkit key file for this key: what `mlkit keygen` writes and
    /// what a collection server stores and serves. A key read from Apple's `.mlmodelkey`
    /// becomes an mlkit key file with the same identifier, material and IV.
    /// - Returns: UTF-8 JSON with sorted keys and a final newline (`docs/encryption.md`).
    public func keyFileData() -> Data {
        var fields = [
            ("algorithm", Self.jsonString(cipher.rawValue)),
            ("format", Self.jsonString(Self.keyFileFormat)),
            ("identifier", Self.jsonString(identifier)),
            ("key", Self.jsonString(Data(material).base64EncodedString())),
            ("version", String(Self.keyFileVersion)),
        ]
        if let initializationVector {
            fields.insert(("iv", Self.jsonString(Data(initializationVector).base64EncodedString())), at: 3)
        }
        if let created { fields.insert(("created", Self.jsonString(created.formatted(Date.ISO8601FormatStyle()))), at: 1) }
        let body = fields.map { "  \"\($0.0)\": \($0.1)" }.joined(separator: ",\n")
        return Data("{\n\(body)\n}\n".utf8)
    }

    /// Writes the key file (``keyFileData()``) atomically, readable and writable by its owner
    /// only (mode 0600).
    /// - Parameters:
    ///   - url: Where to write.
    ///   - overwrite: Whether an existing file may be replaced.
    /// - Throws: ``EncryptionError``: `keyFileExists` when the file exists and `overwrite` is
    ///   false; `io` when writing fails.
    public func write(to url: URL, overwrite: Bool = false) throws {
        if !overwrite && FileManager.default.fileExists(atPath: url.path) {
            throw EncryptionError(.keyFileExists, "a file is already there, and a key file is never replaced unless asked to (--force)",
                                  keyIdentifier: identifier, file: url.path)
        }
        do {
            try AtomicFile.write(keyFileData(), to: url, permissions: 0o600)
        } catch let error as MLKitError {
            throw EncryptionError(.io, error.reason, keyIdentifier: identifier, file: url.path)
        }
    }

    /// A warning when a key file can be read by anyone but its owner (mode wider than 0600).
    /// - Parameter url: The key file.
    /// - Returns: The warning, naming the file and its mode, or `nil` when the mode is private
    ///   or cannot be read.
    public static func permissionWarning(forKeyFileAt url: URL) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
              let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 else { return nil }
        return "\(url.path): the key file is open to others (mode \(String(format: "%04o", mode & 0o7777))); "
            + "restrict it to its owner with chmod 600"
    }

    // MARK: Parsing

    private static func parseKeyFile(_ data: Data, source: String?) throws -> ModelKey {
        func invalid(_ reason: String, _ identifier: String? = nil) -> EncryptionError {
            EncryptionError(.invalidKeyFile, reason, keyIdentifier: identifier, file: source)
        }
        guard let object = try? JSONSerialization.jsonObject(with: data), let fields = object as? [String: Any] else {
            throw invalid("the file is not a JSON object")
        }
        func string(_ name: String) throws -> String {
            guard let value = fields[name] else { throw invalid("missing field \"\(name)\"") }
            guard let text = value as? String else { throw invalid("field \"\(name)\": expected a string") }
            return text
        }
        guard try string("format") == keyFileFormat else {
            throw invalid("field \"format\": expected \"\(keyFileFormat)\"")
        }
        guard let version = fields["version"] as? Int else { throw invalid("field \"version\": expected an integer") }
        let identifier = try string("identifier")
        try ModelKey.checkIdentifier(identifier, source: source)
        guard version <= keyFileVersion, version >= 1 else {
            throw EncryptionError(.unsupportedEncryption,
                                  "key \(identifier): key file version \(version) is not one this mlkit reads (1–\(keyFileVersion)); upgrade mlkit",
                                  keyIdentifier: identifier, file: source)
        }
        let algorithm = try string("algorithm")
        guard let cipher = ModelCipher(rawValue: algorithm) else {
            throw EncryptionError(.unsupportedEncryption,
                                  "key \(identifier): field \"algorithm\": unknown cipher \"\(algorithm)\" (known: "
                                  + ModelCipher.allCases.map(\.rawValue).joined(separator: ", ") + ")",
                                  keyIdentifier: identifier, file: source)
        }
        guard let material = Data(base64Encoded: try string("key")) else {
            throw invalid("key \(identifier): field \"key\": not valid base64", identifier)
        }
        var initializationVector: [UInt8]?
        if fields["iv"] != nil {
            guard let iv = Data(base64Encoded: try string("iv")) else {
                throw invalid("key \(identifier): field \"iv\": not valid base64", identifier)
            }
            initializationVector = Array(iv)
        }
        var created: Date?
        if fields["created"] != nil {
            guard let date = try? Date(try string("created"), strategy: Date.ISO8601FormatStyle()) else {
                throw invalid("key \(identifier): field \"created\": not an ISO 8601 date", identifier)
            }
            created = date
        }
        return try ModelKey(identifier: identifier, cipher: cipher, material: Array(material), created: created, source: source,
                            initializationVector: initializationVector)
    }

    private static func parseAppleKeyFile(_ data: Data, source: String?) throws -> ModelKey {
        func invalid(_ reason: String, _ identifier: String? = nil) -> EncryptionError {
            EncryptionError(.invalidKeyFile, reason, keyIdentifier: identifier, file: source)
        }
        let fields: [String: ApplePropertyList.Value]
        do {
            fields = try ApplePropertyList.topDictionary(data)
        } catch let failure as ApplePropertyList.Failure {
            throw invalid("not a property list with a dictionary (an Apple .mlmodelkey holds Key, IV, KeyIdentifier, Version): "
                          + failure.reason)
        }
        // A field of another type counts as absent, so that the message names it.
        guard case .string(let identifier) = fields["KeyIdentifier"] else {
            throw invalid("missing field \"KeyIdentifier\" (a string)")
        }
        try ModelKey.checkIdentifier(identifier, source: source)
        if case .integer(let version) = fields["Version"], version != 1 {
            throw EncryptionError(.unsupportedEncryption, "key \(identifier): Apple key file version \(version) is not supported (1)",
                                  keyIdentifier: identifier, file: source)
        }
        guard case .data(let material) = fields["Key"] else {
            throw invalid("key \(identifier): missing field \"Key\" (data)", identifier)
        }
        var initializationVector: [UInt8]?
        if let value = fields["IV"] {
            guard case .data(let data) = value else { throw invalid("key \(identifier): field \"IV\" is not data", identifier) }
            initializationVector = Array(data)
        }
        return try ModelKey(identifier: identifier, cipher: .aes128GCM, material: Array(material), created: nil, source: source,
                            initializationVector: initializationVector)
    }

    /// The bytes of a key file, with this module's errors.
    static func readFile(_ url: URL) throws -> Data {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw EncryptionError(.fileNotFound, "no such key file", file: url.path)
        }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw EncryptionError(.io, "cannot read the key file: \(error.localizedDescription)", file: url.path)
        }
    }

    private static func jsonString(_ value: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        guard let data = try? encoder.encode(value) else { preconditionFailure("a string always encodes as JSON") }
        return String(decoding: data, as: UTF8.self)
    }
}

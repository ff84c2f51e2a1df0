public import Foundation

/// The clear header of an encrypted model file: what can be read without the key.
///
/// Layout (all integers little-endian; `docs/model-format.md` documents every byte):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `MLKITENC` |
/// | 8 | 4 | encryption format version (1) |
/// | 12 | 4 | header length H = 48 + K |
/// | 16 | 1 | cipher: 1 AES-256-GCM, 2 ChaCha20-Poly1305, 3 AES-128-GCM |
/// | 17 | 1 | key identifier length K (1–255) |
/// | 18 | 2 | reserved, 0 |
/// | 20 | 4 | chunk size: plaintext bytes per chunk |
/// | 24 | 8 | plaintext length |
/// | 32 | 12 | base nonce |
/// | 44 | 4 | reserved, 0 |
/// | 48 | K | key identifier, UTF-8 |
///
/// The whole header is associated data of every chunk, so a change to any of its bytes makes
/// decryption fail.
public struct EncryptedModelHeader: Sendable {
    static let magic = Array("MLKITENC".utf8)
    /// The encryption format version this mlkit writes.
    static let currentVersion = 1
    /// Every encryption format version this mlkit reads.
    static let readableVersions = 1...1
    /// The size of the fixed part, before the key identifier.
    static let fixedSize = 48
    /// The size of a nonce (both ciphers use 96 bits).
    static let nonceSize = 12
    /// The size of each chunk's authentication tag.
    static let tagSize = 16
    /// The largest chunk size a reader accepts: 1 GiB.
    static let maximumChunkSize = 1 << 30
    /// The largest plaintext a reader accepts: 256 TiB, so that no length computed from a
    /// crafted header can overflow.
    static let maximumPlaintextLength: UInt64 = 1 << 48

    /// The encryption format version (not the version of the model file inside).
    public let formatVersion: Int
    /// The cipher that sealed the chunks.
    public let cipher: ModelCipher
    /// The identifier of the key the model is encrypted with.
    public let keyIdentifier: String
    /// Plaintext bytes per chunk; the last chunk may be shorter.
    public let chunkSize: Int
    /// The length of the model file inside, in bytes.
    public let plaintextLength: Int
    /// The base nonce; chunk `i` uses it with `i` added by XOR into bytes 4–11.
    let nonce: [UInt8]
    /// The header's bytes, the associated data of every chunk.
    let bytes: [UInt8]

    /// The header's length in bytes; the first chunk starts here.
    public var length: Int { bytes.count }
    /// The number of chunks: at least 1, so that even an empty plaintext has a tag.
    public var chunkCount: Int { max(1, (plaintextLength + chunkSize - 1) / chunkSize) }
    /// The length of the whole encrypted file: header, ciphertext and one tag per chunk.
    public var encryptedLength: Int { length + plaintextLength + chunkCount * Self.tagSize }

    /// Whether the bytes start with the magic of an encrypted model file (`MLKITENC`).
    /// - Parameter data: A file's bytes, or at least its first 8.
    /// - Returns: `true` for an encrypted model file, `false` for a plain one or anything else.
    public static func isEncrypted(_ data: Data) -> Bool {
        data.starts(with: magic)
    }

    /// Builds the header for a new encryption.
    init(cipher: ModelCipher, keyIdentifier: String, chunkSize: Int, plaintextLength: Int, nonce: [UInt8]) {
        precondition(nonce.count == Self.nonceSize && chunkSize > 0 && chunkSize <= Self.maximumChunkSize)
        let identifier = Array(keyIdentifier.utf8)
        var bytes = Self.magic
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        append(UInt32(Self.currentVersion))
        append(UInt32(Self.fixedSize + identifier.count))
        append(cipher.headerCode)
        append(UInt8(identifier.count))
        append(UInt16(0))
        append(UInt32(chunkSize))
        append(UInt64(plaintextLength))
        bytes.append(contentsOf: nonce)
        append(UInt32(0))
        bytes.append(contentsOf: identifier)
        self.init(formatVersion: Self.currentVersion, cipher: cipher, keyIdentifier: keyIdentifier, chunkSize: chunkSize,
                  plaintextLength: plaintextLength, nonce: nonce, bytes: bytes)
    }

    private init(formatVersion: Int, cipher: ModelCipher, keyIdentifier: String, chunkSize: Int, plaintextLength: Int,
                 nonce: [UInt8], bytes: [UInt8]) {
        self.formatVersion = formatVersion
        self.cipher = cipher
        self.keyIdentifier = keyIdentifier
        self.chunkSize = chunkSize
        self.plaintextLength = plaintextLength
        self.nonce = nonce
        self.bytes = bytes
    }

    /// Reads the clear header at the start of an encrypted model file. Needs no key.
    /// - Parameters:
    ///   - data: The file's bytes (at least its header).
    ///   - source: A name for error messages.
    /// - Throws: ``EncryptionError``: `notEncrypted` for a file without the magic;
    ///   `decryptionFailed` for a truncated or damaged header; `unsupportedEncryption` for a
    ///   newer format version or an unknown cipher.
    public init(parsing data: Data, source: String? = nil) throws {
        let prefix = [UInt8](data.prefix(Self.fixedSize + ModelKey.maximumIdentifierLength))
        func damaged(_ reason: String, _ identifier: String? = nil) -> EncryptionError {
            EncryptionError(.decryptionFailed, reason, keyIdentifier: identifier, file: source)
        }
        guard prefix.starts(with: Self.magic) else {
            if Self.magic.starts(with: prefix) {
                throw damaged("truncated: the file is only \(prefix.count) bytes, shorter than the clear header")
            }
            throw EncryptionError(.notEncrypted, "its first bytes are not \"MLKITENC\"", file: source)
        }
        guard prefix.count >= 16 else { throw damaged("truncated: the file is only \(prefix.count) bytes, shorter than the clear header") }
        func integer<T: FixedWidthInteger>(_ offset: Int, as: T.Type = T.self) -> T {
            prefix[offset..<(offset + MemoryLayout<T>.size)].reversed().reduce(T(0)) { $0 << 8 | T($1) }
        }
        let version = Int(integer(8, as: UInt32.self))
        guard Self.readableVersions.contains(version) else {
            let reason = version > Self.readableVersions.upperBound
                ? "encryption format version \(version) is newer than this mlkit reads (versions "
                    + "\(Self.readableVersions.lowerBound)–\(Self.readableVersions.upperBound)); upgrade mlkit"
                : "encryption format version \(version) does not exist"
            throw EncryptionError(.unsupportedEncryption, reason, file: source)
        }
        let length = Int(integer(12, as: UInt32.self))
        let truncated = damaged("truncated: the file is only \(data.count) bytes, shorter than the clear header")
        guard prefix.count >= Self.fixedSize else { throw truncated }
        let identifierLength = Int(prefix[17])
        guard identifierLength > 0, length == Self.fixedSize + identifierLength else {
            throw damaged("the clear header is damaged: its length (\(length)) does not match its key identifier's (\(identifierLength))")
        }
        guard prefix.count >= length else { throw truncated }
        guard let identifier = String(validating: prefix[Self.fixedSize..<length], as: UTF8.self) else {
            throw damaged("the clear header is damaged: the key identifier is not UTF-8")
        }
        guard let cipher = ModelCipher(headerCode: prefix[16]) else {
            throw EncryptionError(.unsupportedEncryption, "key \(identifier): unknown cipher number \(prefix[16])",
                                  keyIdentifier: identifier, file: source)
        }
        let chunkSize = Int(integer(20, as: UInt32.self))
        let plaintextLength = integer(24, as: UInt64.self)
        guard integer(18, as: UInt16.self) == 0, integer(44, as: UInt32.self) == 0, chunkSize > 0,
              chunkSize <= Self.maximumChunkSize, plaintextLength <= Self.maximumPlaintextLength else {
            throw damaged("key \(identifier): the clear header is damaged: a reserved field, the chunk size or the length is invalid",
                          identifier)
        }
        self.init(formatVersion: version, cipher: cipher, keyIdentifier: identifier, chunkSize: chunkSize,
                  plaintextLength: Int(plaintextLength), nonce: Array(prefix[32..<44]), bytes: Array(prefix[0..<length]))
    }

    /// The nonce of chunk `index`: the base nonce with `index` XORed, little-endian, into its
    /// bytes 4–11.
    func nonce(ofChunk index: Int) -> [UInt8] {
        var nonce = self.nonce
        withUnsafeBytes(of: UInt64(index).littleEndian) { counter in
            for offset in 0..<8 { nonce[4 + offset] ^= counter[offset] }
        }
        return nonce
    }

    /// The associated data of chunk `index`: the header, the index as `u64`, and 1 for the
    /// last chunk or 0 for the others, so that dropping whole chunks from the end is detected.
    func associatedData(ofChunk index: Int) -> [UInt8] {
        var data = bytes
        withUnsafeBytes(of: UInt64(index).littleEndian) { data.append(contentsOf: $0) }
        data.append(index == chunkCount - 1 ? 1 : 0)
        return data
    }

    /// The range of chunk `index`'s plaintext within the model file.
    func plaintextRange(ofChunk index: Int) -> Range<Int> {
        (index * chunkSize)..<min(plaintextLength, (index + 1) * chunkSize)
    }
}

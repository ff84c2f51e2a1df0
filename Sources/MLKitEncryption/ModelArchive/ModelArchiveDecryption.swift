public import Foundation
import Crypto
import _CryptoExtras

/// Decrypts the files of Apple's encrypted model archives (`.mlarchive` with an
/// `encryptionInfo/` entry), in memory, with the archive's `.mlmodelkey`.
///
/// Every file of such an archive but `encryptionInfo/coremldata.bin` is encrypted this way (all
/// integers little-endian):
///
/// - the plaintext is laid out after 0x60 bytes of room, then zero bytes up to a whole number of
///   4096-byte pages; each page is encrypted on its own with AES-128-CBC, without padding, under
///   the key's `Key` and the same `IV` for every page;
/// - then the first 0x50 bytes of page 0 are overwritten by a clear header: the magic `LMNE`,
///   the bytes `02 00 00 60`, the plaintext's length as a u64 at 0x08, the number of pages as a
///   u64 at 0x10, and zero bytes.
///
/// To decrypt: CBC-decrypt each page, drop the first 0x60 bytes (the overwritten blocks, and
/// the one that depended on them), join the pages, and cut to the stated length. There is no
/// authentication: the wrong material gives garbage, which the model reader must refuse
/// (`MLKitCoreML` reports it as a wrong key).
///
/// `MLKitCoreML` takes this as its archive decryptor, so that reading plain Core ML models
/// needs no crypto library:
///
/// ```swift
/// let key = try ModelKey(contentsOf: URL(fileURLWithPath: "SentimentPolarity.mlmodelkey"))
/// let model = try CoreMLModel(contentsOf: archive) { file, identifier in
///     try ModelArchiveDecryption.decrypt(file, keyIdentifier: identifier, with: key)
/// }
/// ```
public enum ModelArchiveDecryption {
    /// The magic at the start of every encrypted file.
    static let magic = Array("LMNE".utf8)
    /// The four bytes after the magic in every file seen.
    static let headerTag: [UInt8] = [0x02, 0x00, 0x00, 0x60]
    /// The room before the plaintext, and the bytes dropped after decryption.
    static let headerLength = 0x60
    /// The bytes of page 0 that the clear header overwrites.
    static let clearLength = 0x50
    /// The size of a page.
    static let pageSize = 4096

    /// Decrypts one encrypted file of a model archive.
    /// - Parameters:
    ///   - file: The file's bytes as stored in the archive.
    ///   - keyIdentifier: The key identifier the archive names in its `encryptionInfo` entry.
    ///   - key: The key: an Apple `.mlmodelkey` (`Key` and `IV`), or an mlkit key file that
    ///     carries its `iv`.
    ///   - source: A name for error messages, such as the archive's path.
    /// - Returns: The file's plain bytes.
    /// - Throws: ``EncryptionError``: `wrongKey` when the key's identifier is not the archive's,
    ///   or the key is not a 128-bit key with an IV; `decryptionFailed` for a file whose header
    ///   is not one of these, or whose size disagrees with it; `unsupportedEncryption` for a
    ///   header of another version.
    /// - Complexity: O(n); one buffer of the plaintext's size besides the pages.
    public static func decrypt(_ file: Data, keyIdentifier: String, with key: ModelKey, source: String? = nil) throws -> Data {
        func failure(_ code: EncryptionError.Code, _ message: String) -> EncryptionError {
            EncryptionError(code, message, keyIdentifier: keyIdentifier, file: source)
        }
        guard key.identifier == keyIdentifier else {
            throw failure(.wrongKey, "the archive is encrypted with key \(keyIdentifier), but the key given is \(key.identifier)")
        }
        guard key.material.count == 16, let iv = key.initializationVector else {
            throw failure(.wrongKey, "key \(keyIdentifier) is not an Apple model key (a 128-bit Key and an IV, "
                          + "as in its .mlmodelkey), which an encrypted model archive needs")
        }
        guard file.count >= clearLength, file.prefix(4).elementsEqual(magic) else {
            throw failure(.decryptionFailed, "an encrypted file of the archive (key \(keyIdentifier)) does not start "
                          + "with its LMNE header")
        }
        guard file.dropFirst(4).prefix(4).elementsEqual(headerTag) else {
            throw failure(.unsupportedEncryption, "an encrypted file of the archive (key \(keyIdentifier)) has a header "
                          + "of another kind (\(file.dropFirst(4).prefix(4).map { String(format: "%02x", $0) }.joined(separator: " ")), "
                          + "not 02 00 00 60)")
        }
        let length = littleEndian(file, at: 0x08), pages = littleEndian(file, at: 0x10)
        guard pages >= 1, pages <= UInt64(file.count / pageSize), UInt64(file.count) == pages * UInt64(pageSize) else {
            throw failure(.decryptionFailed, "an encrypted file of the archive (key \(keyIdentifier)) has \(file.count) "
                          + "bytes, not the \(pages) pages of \(pageSize) bytes its header states")
        }
        guard length <= pages * UInt64(pageSize) - UInt64(headerLength) else {
            throw failure(.decryptionFailed, "an encrypted file of the archive (key \(keyIdentifier)) states "
                          + "\(length) bytes of plaintext, more than its \(pages) pages hold")
        }
        let symmetricKey = SymmetricKey(data: key.material)
        let cbcIV = try AES._CBC.IV(ivBytes: iv)
        var plaintext = Data(capacity: Int(length) + headerLength)
        for page in 0..<Int(pages) {
            let start = file.startIndex + page * pageSize
            do {
                plaintext.append(try AES._CBC.decrypt(file[start..<(start + pageSize)], using: symmetricKey, iv: cbcIV,
                                                      noPadding: true))
            } catch {
                throw failure(.decryptionFailed, "page \(page + 1) of \(pages) of an encrypted file does not decrypt "
                              + "with key \(keyIdentifier): \(error)")
            }
            if plaintext.count >= Int(length) + headerLength { break }
        }
        return plaintext.subdata(in: (plaintext.startIndex + headerLength)..<(plaintext.startIndex + headerLength + Int(length)))
    }

    /// The u64 at `offset`.
    private static func littleEndian(_ data: Data, at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (0..<8).reversed() { value = value << 8 | UInt64(data[data.startIndex + offset + index]) }
        return value
    }
}

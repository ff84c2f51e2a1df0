public import Foundation
import Crypto

/// Encrypts and decrypts model files, in memory.
///
/// An encrypted model file is a clear header (``EncryptedModelHeader``) followed by the model
/// file sealed in chunks of 1 MiB, each with its own nonce and authentication tag, and the
/// whole header as associated data. Decryption writes every chunk straight into one buffer of
/// the model's size, so a model is never held twice in memory and never touches the disk.
public enum ModelEncryption {
    /// The chunk size that ``encrypt(_:with:)`` uses: 1 MiB of plaintext per chunk.
    public static let defaultChunkSize = 1 << 20

    /// Encrypts a model file with a key, under a fresh random nonce.
    /// - Parameters:
    ///   - modelFile: The bytes of the model file (or any bytes).
    ///   - key: The key; its cipher and identifier go in the clear header.
    /// - Returns: The encrypted model file.
    /// - Throws: ``EncryptionError`` with code `alreadyEncrypted` when `modelFile` is an
    ///   encrypted model file already.
    /// - Complexity: O(n), one pass over the bytes.
    public static func encrypt(_ modelFile: Data, with key: ModelKey) throws -> Data {
        var nonce = [UInt8](repeating: 0, count: EncryptedModelHeader.nonceSize)
        var generator = SystemRandomNumberGenerator()
        for index in nonce.indices { nonce[index] = generator.next() }
        return try _encrypt(modelFile, with: key, nonce: nonce, chunkSize: defaultChunkSize)
    }

    /// Encrypts with an explicit nonce and chunk size. Not API: for the test vectors, which
    /// must give the same bytes every time. Never reuse a nonce with the same key.
    @_spi(Testing)
    public static func _encrypt(_ modelFile: Data, with key: ModelKey, nonce: [UInt8], chunkSize: Int) throws -> Data {
        guard !EncryptedModelHeader.isEncrypted(modelFile) else {
            throw EncryptionError(.alreadyEncrypted, "the input is an encrypted model file already (re-encrypt it with its old key instead)",
                                  keyIdentifier: (try? EncryptedModelHeader(parsing: modelFile))?.keyIdentifier)
        }
        let header = EncryptedModelHeader(cipher: key.cipher, keyIdentifier: key.identifier, chunkSize: chunkSize,
                                          plaintextLength: modelFile.count, nonce: nonce)
        let symmetricKey = key.symmetricKey
        var output = Data(capacity: header.encryptedLength)
        output.append(contentsOf: header.bytes)
        for index in 0..<header.chunkCount {
            let range = header.plaintextRange(ofChunk: index)
            let chunk = modelFile[(modelFile.startIndex + range.lowerBound)..<(modelFile.startIndex + range.upperBound)]
            let (ciphertext, tag) = try ChunkCipher(key.cipher).seal(chunk, key: symmetricKey, nonce: header.nonce(ofChunk: index),
                                                                     associatedData: header.associatedData(ofChunk: index))
            output.append(ciphertext)
            output.append(tag)
        }
        return output
    }

    /// Decrypts an encrypted model file in memory.
    /// - Parameters:
    ///   - encrypted: The encrypted file's bytes (they may be memory-mapped).
    ///   - key: The key the file names in its header.
    ///   - source: A name for error messages.
    /// - Returns: The model file's bytes.
    /// - Throws: ``EncryptionError``, naming the key identifier: `wrongKey` when the key is not
    ///   the one in the header; `decryptionFailed` when the file is truncated, extended or
    ///   changed, or the material is wrong; `notEncrypted`; `unsupportedEncryption`.
    /// - Complexity: O(n); the output is the only buffer of the model's size.
    public static func decrypt(_ encrypted: Data, with key: ModelKey, source: String? = nil) throws -> Data {
        let header = try EncryptedModelHeader(parsing: encrypted, source: source)
        let identifier = header.keyIdentifier
        func failure(_ code: EncryptionError.Code, _ message: String) -> EncryptionError {
            EncryptionError(code, message, keyIdentifier: identifier, file: source)
        }
        guard key.identifier == identifier else {
            throw failure(.wrongKey, "the model is encrypted with key \(identifier), but the key given is \(key.identifier)")
        }
        guard key.cipher == header.cipher else {
            throw failure(.wrongKey, "the model is sealed with \(header.cipher.rawValue), but key \(identifier) is "
                          + "an \(key.cipher.rawValue) key")
        }
        guard encrypted.count == header.encryptedLength else {
            let problem = encrypted.count < header.encryptedLength ? "truncated" : "extended"
            throw failure(.decryptionFailed, "the file is \(problem): it has \(encrypted.count) bytes, but its header "
                          + "(key \(identifier)) describes \(header.encryptedLength)")
        }
        let cipher = ChunkCipher(header.cipher)
        let symmetricKey = key.symmetricKey
        var plaintext = Data(count: header.plaintextLength)
        var offset = encrypted.startIndex + header.length
        for index in 0..<header.chunkCount {
            let range = header.plaintextRange(ofChunk: index)
            let ciphertext = encrypted[offset..<(offset + range.count)]
            let tag = encrypted[(offset + range.count)..<(offset + range.count + EncryptedModelHeader.tagSize)]
            offset += range.count + EncryptedModelHeader.tagSize
            let opened: Data
            do {
                opened = try cipher.open(ciphertext, tag: tag, key: symmetricKey, nonce: header.nonce(ofChunk: index),
                                         associatedData: header.associatedData(ofChunk: index))
            } catch {
                throw failure(.decryptionFailed, "chunk \(index + 1) of \(header.chunkCount) does not authenticate with key "
                              + "\(identifier): the file was changed or is corrupt, or the key's material is not the one it was sealed with")
            }
            _ = plaintext.withUnsafeMutableBytes { target in
                opened.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: target[range]))
            }
        }
        return plaintext
    }

    /// Re-encrypts an encrypted model file under a new key, in memory: key rotation.
    /// - Parameters:
    ///   - encrypted: The encrypted file's bytes.
    ///   - oldKey: The key it is encrypted with now.
    ///   - newKey: The key to encrypt it with.
    ///   - source: A name for error messages.
    /// - Returns: The model encrypted with `newKey`, under a fresh nonce.
    /// - Throws: As ``decrypt(_:with:source:)``.
    public static func reencrypt(_ encrypted: Data, from oldKey: ModelKey, to newKey: ModelKey, source: String? = nil) throws -> Data {
        try encrypt(decrypt(encrypted, with: oldKey, source: source), with: newKey)
    }
}

/// One chunk sealed or opened with the cipher a header names.
struct ChunkCipher {
    let cipher: ModelCipher

    init(_ cipher: ModelCipher) { self.cipher = cipher }

    func seal(_ chunk: Data, key: SymmetricKey, nonce: [UInt8], associatedData: [UInt8]) throws -> (ciphertext: Data, tag: Data) {
        switch cipher {
        case .aes256GCM, .aes128GCM:
            let box = try AES.GCM.seal(chunk, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: associatedData)
            return (box.ciphertext, box.tag)
        case .chaCha20Poly1305:
            let box = try ChaChaPoly.seal(chunk, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: associatedData)
            return (box.ciphertext, box.tag)
        }
    }

    func open(_ ciphertext: Data, tag: Data, key: SymmetricKey, nonce: [UInt8], associatedData: [UInt8]) throws -> Data {
        switch cipher {
        case .aes256GCM, .aes128GCM:
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            return try AES.GCM.open(box, using: key, authenticating: associatedData)
        case .chaCha20Poly1305:
            let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            return try ChaChaPoly.open(box, using: key, authenticating: associatedData)
        }
    }
}

import Foundation
import MLKit
@_spi(Testing) @testable import MLKitEncryption
import TestSupport
import Testing

@Suite("Wrong keys, changed bytes and truncated files are refused", .onOwnThreads)
struct TamperingTests {
    /// The first 18,000 bytes of a model file sealed in chunks of 4 KiB: five chunks, the last one shorter.
    static func sealed(_ key: ModelKey) throws -> (data: Data, header: EncryptedModelHeader) {
        let data = try ModelEncryption._encrypt(Fixtures.smallModelFile.prefix(18_000), with: key, nonce: Array(0..<12), chunkSize: 4096)
        let header = try EncryptedModelHeader(parsing: data)
        #expect(header.chunkCount >= 3, "the test needs several chunks")
        return (data, header)
    }

    static func flipping(_ data: Data, at offset: Int, by mask: UInt8 = 0x01) -> Data {
        var copy = data
        copy[copy.startIndex + offset] ^= mask
        return copy
    }

    @Test("Another key is a wrong-key error naming both identifiers; the right identifier with other material fails to decrypt")
    func wrongKey() throws {
        let key = ModelKey.generate()
        let (data, _) = try Self.sealed(key)
        let other = ModelKey.generate()
        let error = Fixtures.encryptionError { _ = try ModelEncryption.decrypt(data, with: other, source: "enc.mlkit") }
        #expect(error?.code == .wrongKey)
        #expect(error?.keyIdentifier == key.identifier)
        #expect(error?.description == "enc.mlkit: wrong key: the model is encrypted with key \(key.identifier), but the key given is \(other.identifier)")

        let impostor = try ModelKey(identifier: key.identifier, cipher: .aes256GCM, material: Array(repeating: 7, count: 32),
                                    created: nil, source: nil)
        let failed = Fixtures.encryptionError { _ = try ModelEncryption.decrypt(data, with: impostor, source: "enc.mlkit") }
        #expect(failed?.code == .decryptionFailed)
        #expect(failed?.description.contains("chunk 1 of") == true)
        #expect(failed?.description.contains(key.identifier) == true)

        let otherCipher = try ModelKey(identifier: key.identifier, cipher: .chaCha20Poly1305, material: key.material,
                                       created: nil, source: nil)
        #expect(Fixtures.encryptionError { _ = try ModelEncryption.decrypt(data, with: otherCipher) }?.code == .wrongKey)
    }

    @Test("A changed byte anywhere in the clear header is detected")
    func header() throws {
        let key = ModelKey.generate()
        let (data, header) = try Self.sealed(key)
        for offset in 0..<header.length {
            for mask in [0x01, 0x80] as [UInt8] {
                let error = Fixtures.encryptionError { _ = try ModelEncryption.decrypt(Self.flipping(data, at: offset, by: mask), with: key) }
                switch offset {
                case 0..<8: #expect(error?.code == .notEncrypted, "offset \(offset)")
                case 8..<12, 16: #expect(error?.code == .unsupportedEncryption, "offset \(offset)")
                case 12..<48: #expect(error?.code == .decryptionFailed, "offset \(offset)")
                default:  // the key identifier: another identifier, or not UTF-8 any more
                    #expect(error?.code == (mask == 0x01 ? .wrongKey : .decryptionFailed), "offset \(offset)")
                }
            }
        }
    }

    @Test("A changed byte in the nonce, the ciphertext or a tag fails authentication")
    func body() throws {
        let key = ModelKey.generate(cipher: .chaCha20Poly1305)
        let (data, header) = try Self.sealed(key)
        var offsets = Array(32..<44)  // the base nonce
        var chunkStart = header.length
        for index in 0..<header.chunkCount {
            let count = header.plaintextRange(ofChunk: index).count
            offsets += [chunkStart, chunkStart + count / 2, chunkStart + count - 1]  // ciphertext
            offsets += Array((chunkStart + count)..<(chunkStart + count + 16))  // tag
            chunkStart += count + 16
        }
        #expect(chunkStart == data.count)
        for offset in offsets {
            let error = Fixtures.encryptionError { _ = try ModelEncryption.decrypt(Self.flipping(data, at: offset), with: key) }
            #expect(error?.code == .decryptionFailed, "offset \(offset)")
            #expect(error?.keyIdentifier == key.identifier)
        }
    }

    @Test("A file cut at any offset, or extended, is refused as damaged")
    func truncation() throws {
        let key = ModelKey.generate()
        let (data, header) = try Self.sealed(key)
        var cuts = Set(0...(header.length + 20)).union(stride(from: 0, to: data.count, by: 211))
        var boundary = header.length
        for index in 0..<header.chunkCount {
            boundary += header.plaintextRange(ofChunk: index).count + 16
            cuts.formUnion([boundary - 17, boundary - 16, boundary - 1, boundary, boundary + 1])
        }
        for cut in cuts.sorted() where cut < data.count {
            let error = Fixtures.encryptionError { _ = try ModelEncryption.decrypt(data.prefix(cut), with: key, source: "enc.mlkit") }
            #expect(error?.code == .decryptionFailed, "cut at \(cut)")
            #expect(error?.description.contains("truncated") == true, "cut at \(cut): \(error?.description ?? "")")
        }
        let extended = Fixtures.encryptionError { _ = try ModelEncryption.decrypt(data + [0], with: key) }
        #expect(extended?.code == .decryptionFailed)
        #expect(extended?.description.contains("extended") == true)
    }

    @Test("Dropping the last chunk and shortening the header's length, or swapping chunks, fails authentication")
    func chunkSurgery() throws {
        let key = ModelKey.generate()
        let (data, header) = try Self.sealed(key)
        // Keep all but the last chunk and claim that the plaintext ends there.
        let kept = (header.chunkCount - 1) * header.chunkSize
        var cut = Data(data.prefix(header.length + kept + (header.chunkCount - 1) * 16))
        withUnsafeBytes(of: UInt64(kept).littleEndian) { cut.replaceSubrange(24..<32, with: $0) }
        #expect(Fixtures.encryptionError { _ = try ModelEncryption.decrypt(cut, with: key) }?.code == .decryptionFailed)
        // Swap the first two chunks (same size).
        let size = header.chunkSize + 16
        var swapped = data
        let first = header.length..<(header.length + size), second = (header.length + size)..<(header.length + 2 * size)
        swapped.replaceSubrange(first, with: data[second])
        swapped.replaceSubrange(second, with: data[first])
        #expect(Fixtures.encryptionError { _ = try ModelEncryption.decrypt(swapped, with: key) }?.code == .decryptionFailed)
    }

    @Test("A crafted header with a 1-byte chunk and an enormous length is refused, not trusted")
    func craftedLengths() throws {
        let key = ModelKey.generate()
        var (data, _) = try Self.sealed(key)
        withUnsafeBytes(of: UInt32(1).littleEndian) { data.replaceSubrange(20..<24, with: $0) }
        for length in [UInt64(1) << 48, UInt64(1) << 60, .max] {
            withUnsafeBytes(of: length.littleEndian) { data.replaceSubrange(24..<32, with: $0) }
            #expect(Fixtures.encryptionError { _ = try ModelEncryption.decrypt(data, with: key) }?.code == .decryptionFailed)
        }
    }

    @Test("A newer encryption format version is refused, naming both versions")
    func newerVersion() throws {
        let key = ModelKey.generate()
        var (data, _) = try Self.sealed(key)
        data[8] = 2
        let error = Fixtures.encryptionError { _ = try EncryptedModelHeader(parsing: data, source: "enc.mlkit") }
        #expect(error?.code == .unsupportedEncryption)
        #expect(error?.description == "enc.mlkit: unsupported encryption: encryption format version 2 is newer than this mlkit reads (versions 1–1); upgrade mlkit")
    }
}

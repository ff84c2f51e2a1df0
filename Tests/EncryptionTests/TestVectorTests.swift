import Foundation
@_spi(Testing) @testable import MLKitEncryption
import TestSupport
import Testing

/// Fixed vectors: a known key, nonce and plaintext give exactly these bytes, so the format
/// cannot drift unnoticed. They were cross-checked against an independent implementation of
/// the layout in docs/model-format.md (Python's `cryptography` package, AESGCM and
/// ChaCha20Poly1305).
@Suite("Fixed test vectors", .onOwnThreads)
struct TestVectorTests {
    static let nonce: [UInt8] = Array(0xA0...0xAB)
    static let plaintext = Data("mlkit test vector: I love rainbows".utf8)

    static func bytes(_ hex: String) -> Data {
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            data.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return data
    }

    static let vectors: [(cipher: ModelCipher, plaintext: Data, chunkSize: Int, hex: String)] = [
        (.aes256GCM, plaintext, 16,
         "4d4c4b4954454e43010000005400000001240000100000002200000000000000a0a1a2a3a4a5a6a7a8a9aaab00000000"
         + "30303030303030302d303030302d343030302d383030302d303030303030303030303031"
         + "8b74174431eb76da1111a7a56219b4b11db976749d647e44eaf1fd8179f63da1becad6ea91efeb3d13968d25387aa3c6"
         + "a2ea6ead9b03d971a2b8ed55dfb34dc3ab1def68ace1eb1378f9d44b6eb5ce97f687"),
        (.chaCha20Poly1305, plaintext, 1 << 20,
         "4d4c4b4954454e43010000005400000002240000000010002200000000000000a0a1a2a3a4a5a6a7a8a9aaab00000000"
         + "30303030303030302d303030302d343030302d383030302d303030303030303030303031"
         + "61c7133639c6b6c8d37bd36299998994ef64f3f663060fd5d1f8a9d0180ca1631bf341a1e9fd9159e6273477b49c27d23fca"),
        (.aes128GCM, Data(), 1 << 20,
         "4d4c4b4954454e43010000005400000003240000000010000000000000000000a0a1a2a3a4a5a6a7a8a9aaab00000000"
         + "30303030303030302d303030302d343030302d383030302d303030303030303030303031"
         + "7a84d1dae8dc1a89f60f90ebf0309467"),
    ]

    @Test("Known key, nonce and plaintext give the exact bytes, and decrypt back", arguments: 0..<vectors.count)
    func vector(index: Int) throws {
        let vector = Self.vectors[index]
        let key = try Fixtures.knownKey(vector.cipher)
        let expected = Self.bytes(vector.hex)
        let sealed = try ModelEncryption._encrypt(vector.plaintext, with: key, nonce: Self.nonce, chunkSize: vector.chunkSize)
        #expect(sealed == expected, "got \(sealed.map { String(format: "%02x", $0) }.joined())")
        #expect(try ModelEncryption.decrypt(expected, with: key) == vector.plaintext)
        let header = try EncryptedModelHeader(parsing: expected)
        #expect(header.formatVersion == 1)
        #expect(header.cipher == vector.cipher)
        #expect(header.keyIdentifier == "00000000-0000-4000-8000-000000000001")
        #expect(header.plaintextLength == vector.plaintext.count)
    }
}

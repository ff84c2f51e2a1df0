// The encrypted-model reader (`TextClassifier(encryptedModelData:key:)`), in two ways chosen by
// the input's first byte:
// - even: the rest is a model file's plaintext. It is resealed (length, CRC-32) and encrypted
//   with a known key, a cipher and a chunk size taken from that byte, so every mutation of the
//   plaintext reaches the model decoder behind the authentication. Decryption must succeed and
//   give the plaintext back, which is then loaded.
// - odd: the rest is an encrypted file, header and ciphertext mutated as they come; it is read
//   with the known key of each cipher.
import Foundation
import FuzzSupport
import MLKit
@_spi(Testing) import MLKitEncryption

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked {
        var seeds: [String: Data] = [:]
        let models = try Seeds.smallModels().filter { $0.key.hasSuffix("-v3.mlkit") }
        for (name, model) in models {
            seeds["plain-\(name)"] = Data([0]) + model
            // Chunks of 1 KiB (choice 2 << 3 | cipher), so the seeds hold several chunks.
            for (index, key) in KnownKeys.all.enumerated() {
                let choice = UInt8(truncatingIfNeeded: 2 << 3 | index << 1)
                seeds["sealed-\(index)-\(name)"] = Data([1]) + encrypt(model, choice: choice, key: key)
            }
        }
        return seeds
    }
    return 0
}

/// Encrypts with the chunk size the choice byte names: 2^(8 + (choice >> 3) % 12) bytes, 256 B
/// to 512 KiB (smaller chunks only repeat the same code, a chunk at a time).
func encrypt(_ plaintext: Data, choice: UInt8, key: ModelKey) -> Data {
    let chunkSize = 1 << (8 + Int(choice >> 3) % 12)
    do {
        return try ModelEncryption._encrypt(plaintext, with: key, nonce: Array(0..<12), chunkSize: chunkSize)
    } catch {
        preconditionFailure("encryption with a known key failed: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard let (choice, rest) = FuzzInput.choice(FuzzInput.data(start, count)) else { return 0 }
    if choice & 1 == 0 {
        let plaintext = ModelFileSeal.resealed(rest)
        // An input that starts with the encrypted magic is refused by the encryptor, by design.
        guard !EncryptedModelHeader.isEncrypted(plaintext) else { return 0 }
        let key = KnownKeys.all[Int(choice >> 1 & 3) % KnownKeys.all.count]
        let sealed = encrypt(plaintext, choice: choice, key: key)
        let opened: Data
        do {
            opened = try ModelEncryption.decrypt(sealed, with: key, source: "fuzz.mlkit")
        } catch {
            preconditionFailure("a file sealed with a known key does not open with it: \(error)")
        }
        precondition(opened == plaintext, "decryption changed the plaintext")
        // What TextClassifier(encryptedModelData:key:) does once it has decrypted.
        if let classifier = try? TextClassifier(modelFileData: opened, source: "fuzz.mlkit") {
            Exercise.classifier(classifier)
        }
    } else {
        _ = try? EncryptedModelHeader(parsing: rest, source: "fuzz.mlkit")
        for key in KnownKeys.all {
            if let classifier = try? TextClassifier(encryptedModelData: rest, key: key, source: "fuzz.mlkit") {
                Exercise.classifier(classifier)
            }
        }
    }
    return 0
}

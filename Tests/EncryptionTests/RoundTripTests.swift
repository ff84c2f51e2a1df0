import Foundation
import MLKit
@_spi(Testing) @testable import MLKitEncryption
import TestSupport
import Testing

@Suite("Encrypting and loading each kind of model", .onOwnThreads)
struct RoundTripTests {
    @Test("Every model kind decrypts to the same bytes and predicts the same probabilities",
          arguments: [TextClassifierParameters.Algorithm.linearSVM, .naiveBayes, .complementNaiveBayes, .maxEnt, .embedding])
    func modelKinds(algorithm: TextClassifierParameters.Algorithm) async throws {
        let model = try Fixtures.trainedModel(algorithm)
        let file = model.modelFileData()
        let key = ModelKey.generate()
        let encrypted = try ModelEncryption.encrypt(file, with: key)
        #expect(EncryptedModelHeader.isEncrypted(encrypted))
        #expect(encrypted.range(of: file.prefix(64)) == nil, "the plaintext shows through")
        #expect(try ModelEncryption.decrypt(encrypted, with: key) == file)

        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("model.mlkit")
        try encrypted.write(to: url)
        let loaded = try await TextClassifier(contentsOf: url, keyProvider: InMemoryKeyProvider(keys: [key]))
        let direct = try TextClassifier(contentsOf: url, key: key)
        for text in Fixtures.texts {
            #expect(loaded.predictedLabelHypotheses(for: text, maximumCount: 2) == model.predictedLabelHypotheses(for: text, maximumCount: 2))
            #expect(direct.predictedLabel(for: text) == model.predictedLabel(for: text))
        }
        #expect(loaded.labels == model.labels)
        #expect(loaded.formatVersion == 3)
    }

    @Test("Each cipher round-trips, with one chunk, many chunks, and an empty plaintext",
          arguments: ModelCipher.allCases)
    func ciphers(cipher: ModelCipher) throws {
        let key = ModelKey.generate(cipher: cipher)
        #expect(key.material.count == cipher.keySize)
        let file = Fixtures.smallModelFile
        let whole = try ModelEncryption.encrypt(file, with: key)
        #expect(try EncryptedModelHeader(parsing: whole).cipher == cipher)
        #expect(try ModelEncryption.decrypt(whole, with: key) == file)
        for chunkSize in [1, 7, 4096, file.count, file.count - 1] {
            let chunked = try ModelEncryption._encrypt(file, with: key, nonce: Array(repeating: 9, count: 12), chunkSize: chunkSize)
            let header = try EncryptedModelHeader(parsing: chunked)
            #expect(header.chunkCount == (file.count + chunkSize - 1) / chunkSize)
            #expect(chunked.count == header.encryptedLength)
            #expect(try ModelEncryption.decrypt(chunked, with: key) == file)
        }
        let empty = try ModelEncryption.encrypt(Data(), with: key)
        #expect(try EncryptedModelHeader(parsing: empty).chunkCount == 1)
        #expect(try ModelEncryption.decrypt(empty, with: key) == Data())
    }

    @Test("Two encryptions of the same model differ (a fresh nonce each time)")
    func freshNonce() throws {
        let key = ModelKey.generate()
        let first = try ModelEncryption.encrypt(Fixtures.smallModelFile, with: key)
        let second = try ModelEncryption.encrypt(Fixtures.smallModelFile, with: key)
        #expect(first != second)
        #expect(try EncryptedModelHeader(parsing: first).nonce != EncryptedModelHeader(parsing: second).nonce)
    }

    @Test("Key rotation: re-encrypted under a new key, the old key is refused and the new one opens it")
    func rotation() throws {
        let old = ModelKey.generate(), new = ModelKey.generate(cipher: .chaCha20Poly1305)
        let encrypted = try ModelEncryption.encrypt(Fixtures.smallModelFile, with: old)
        let rotated = try ModelEncryption.reencrypt(encrypted, from: old, to: new)
        #expect(try EncryptedModelHeader(parsing: rotated).keyIdentifier == new.identifier)
        #expect(try ModelEncryption.decrypt(rotated, with: new) == Fixtures.smallModelFile)
        #expect(Fixtures.encryptionError { _ = try ModelEncryption.decrypt(rotated, with: old) }?.code == .wrongKey)
    }

    @Test("An encrypted file is not encrypted twice, and the core names an encrypted file for what it is")
    func doubleEncryption() throws {
        let key = ModelKey.generate()
        let encrypted = try ModelEncryption.encrypt(Fixtures.smallModelFile, with: key)
        let error = Fixtures.encryptionError { _ = try ModelEncryption.encrypt(encrypted, with: key) }
        #expect(error?.code == .alreadyEncrypted)
        #expect(error?.keyIdentifier == key.identifier)
        #expect(throws: MLKitError.self) { try TextClassifier(modelFileData: encrypted, source: "enc.mlkit") }
        do {
            _ = try TextClassifier(modelFileData: encrypted, source: "enc.mlkit")
        } catch let error as MLKitError {
            #expect(error.description.hasPrefix("enc.mlkit: the model is encrypted"))
        }
    }

    @Test("A plain model file loads through the encrypted-model entry points too, without asking for a key")
    func plainFiles() async throws {
        struct Refusing: KeyProvider {
            func key(for identifier: String) async throws -> ModelKey { throw CancellationError() }
        }
        let plain = try await TextClassifier(contentsOf: Fixtures.sentimentModel, keyProvider: Refusing())
        #expect(plain.predictedLabel(for: "I love rainbows") == "positive")
        let withoutKey = try TextClassifier(contentsOf: Fixtures.sentimentModel, key: nil)
        #expect(withoutKey.predictedLabel(for: "I am sad on cloudy days") == "negative")
    }

    @Test("Loading decrypts in memory only: the model's folder is unchanged")
    func memoryOnly() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = ModelKey.generate()
        let url = folder.appendingPathComponent("enc.mlkit")
        try ModelEncryption.encrypt(try Data(contentsOf: Fixtures.sentimentModel), with: key).write(to: url)
        let before = try Fixtures.listing(of: folder)
        let classifier = try await TextClassifier(contentsOf: url, keyProvider: InMemoryKeyProvider(keys: [key]))
        #expect(classifier.predictedLabel(for: "I love rainbows") == "positive")
        #expect(try Fixtures.listing(of: folder) == before)
        #expect(before.count == 2, "the folder itself and enc.mlkit")
    }
}

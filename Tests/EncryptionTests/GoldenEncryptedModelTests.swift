import Foundation
import MLKit
@_spi(Testing) @testable import MLKitEncryption
import TestSupport
import Testing

/// The encrypted golden files in `Fixtures/`: the version 3 golden SVM
/// (`Tests/MLKitTests/Fixtures/models/v3-topics-svm.mlkit`) sealed with each cipher, under a
/// test key whose key file sits beside it, in chunks of 4 KiB so that the file has several.
/// ``GoldenEncryptedModelTests/regenerate()`` writes them when `MLKIT_WRITE_GOLDEN_MODELS=1`
/// is set; the nonce is fixed, so writing them again changes no byte.
enum GoldenEncryptedModels {
    static let folder = Fixtures.repositoryRoot.appendingPathComponent("Tests/EncryptionTests/Fixtures")
    static let models = Fixtures.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models")
    static let plain = models.appendingPathComponent("v3-topics-svm.mlkit")
    static let nonce: [UInt8] = Array(0x10...0x1B)
    static let chunkSize = 4096

    static func name(_ cipher: ModelCipher) -> String {
        cipher.rawValue.lowercased().replacingOccurrences(of: "-", with: "")
    }
    static func model(_ cipher: ModelCipher) -> URL { folder.appendingPathComponent("v3-topics-svm-\(name(cipher)).mlkit") }
    static func keyFile(_ cipher: ModelCipher) -> URL { folder.appendingPathComponent("golden-\(name(cipher)).mlkitkey") }

    /// The test key of `cipher`: material 0x40, 0x41, …, and an identifier of its own.
    static func key(_ cipher: ModelCipher) throws -> ModelKey {
        let index = ModelCipher.allCases.firstIndex(of: cipher)!
        let material = Data((0..<cipher.keySize).map { UInt8(0x40 + $0) })
        let json = """
            {"algorithm": "\(cipher.rawValue)", "format": "mlkit-key", "identifier": "00000000-0000-4000-8000-0000000060\(index)0",
             "key": "\(material.base64EncodedString())", "version": 1}
            """
        return try ModelKey(keyFileData: Data(json.utf8), source: "golden")
    }
}

@Suite("The encrypted golden files keep decrypting and predicting", .onOwnThreads)
struct GoldenEncryptedModelTests {
    @Test("Each cipher's golden file decrypts, with its key file, to the plain golden file byte for byte",
          arguments: ModelCipher.allCases)
    func decryptsToThePlainFile(cipher: ModelCipher) throws {
        let key = try ModelKey(contentsOf: GoldenEncryptedModels.keyFile(cipher))
        let encrypted = try Data(contentsOf: GoldenEncryptedModels.model(cipher))
        let header = try EncryptedModelHeader(parsing: encrypted)
        #expect(header.formatVersion == 1)
        #expect(header.cipher == cipher)
        #expect(header.chunkCount > 1)
        #expect(try ModelEncryption.decrypt(encrypted, with: key) == Data(contentsOf: GoldenEncryptedModels.plain))
    }

    @Test("Each cipher's golden file gives the plain file's recorded probabilities within 1e-6",
          arguments: ModelCipher.allCases)
    func recordedProbabilities(cipher: ModelCipher) throws {
        let key = try ModelKey(contentsOf: GoldenEncryptedModels.keyFile(cipher))
        let classifier = try TextClassifier(contentsOf: GoldenEncryptedModels.model(cipher), key: key)
        #expect(classifier.formatVersion == 3)
        let recorded = try JSONDecoder().decode([String: [[Double]]].self,
            from: Data(contentsOf: GoldenEncryptedModels.models.appendingPathComponent("expected-probabilities.json")))
        let expected = try #require(recorded["v3-topics-svm.mlkit"])
        let texts = ["Fold the flour into the whisked eggs", "Snow and strong winds tonight", "The striker scored in extra time",
                     "A quiet afternoon at the library", "", "Don't stir-fry the cast-iron pan!!! :)"]
        #expect(texts.count == expected.count)
        for (text, row) in zip(texts, expected) {
            let hypotheses = classifier.predictedLabelHypotheses(for: text, maximumCount: classifier.labels.count)
            for (label, value) in zip(classifier.labels, row) {
                let probability = try #require(hypotheses[label])
                #expect(abs(probability - value) <= 1e-6, "\(cipher), \"\(text)\", \(label): \(probability), recorded \(value)")
            }
        }
    }

    @Test("Regenerates the encrypted golden files and their keys (MLKIT_WRITE_GOLDEN_MODELS=1)",
          .enabled(if: ProcessInfo.processInfo.environment["MLKIT_WRITE_GOLDEN_MODELS"] == "1",
                   "set MLKIT_WRITE_GOLDEN_MODELS=1 to write the golden model files again"))
    func regenerate() throws {
        let plain = try Data(contentsOf: GoldenEncryptedModels.plain)
        for cipher in ModelCipher.allCases {
            let key = try GoldenEncryptedModels.key(cipher)
            try key.keyFileData().write(to: GoldenEncryptedModels.keyFile(cipher))
            try ModelEncryption._encrypt(plain, with: key, nonce: GoldenEncryptedModels.nonce, chunkSize: GoldenEncryptedModels.chunkSize)
                .write(to: GoldenEncryptedModels.model(cipher))
        }
    }
}

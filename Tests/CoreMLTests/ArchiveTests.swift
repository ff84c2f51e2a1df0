import Foundation
@testable import MLKitEncryption
import MLKit
import MLKitCoreML
import TestSupport
import Testing

@Suite("Apple's model archives, plain and encrypted", .onOwnThreads)
struct ArchiveTests {
    /// The decryptor for `key`, as the CLI wires it.
    static func decryptor(_ key: ModelKey) -> CoreMLArchiveDecryptor {
        { file, identifier in try ModelArchiveDecryption.decrypt(file, keyIdentifier: identifier, with: key) }
    }

    /// The reference key.
    static func referenceKey() throws -> ModelKey {
        try ModelKey(contentsOf: SeedArtifacts.url(Reference.key))
    }

    /// Checks the chapter's two texts against the acceptance figures.
    static func expectAcceptance(_ model: CoreMLModel) throws {
        #expect(model.labels == ["Neg", "Pos"])
        for example in [Reference.loveRainbows, Reference.sadCloudy] {
            #expect(try model.predictedLabel(for: example.text) == example.label)
            let probability = try #require(try model.predictedLabelHypotheses(for: example.text, maximumCount: 2)[example.label])
            #expect(abs(probability - example.probability) < 1e-12, "\(example.text): \(probability)")
        }
    }

    @Test("Acceptance: the plain archive rebuilds the model, and predicts as the .mlmodel does",
          .needsSeedArtifacts(Reference.archive, Reference.model))
    func plainArchive() throws {
        let archive = try CoreMLModel(contentsOf: SeedArtifacts.url(Reference.archive))
        try Self.expectAcceptance(archive)
        let model = try CoreMLModel(contentsOf: SeedArtifacts.url(Reference.model))
        #expect(archive.info.specificationVersion == 1)
        #expect(archive.info.modelType == "pipelineClassifier")
        #expect(archive.info.stages.map(\.type) == model.info.stages.map(\.type))
        #expect(archive.info.metadata == model.info.metadata)
        #expect(archive.info.inputs == model.info.inputs)
        #expect(archive.info.outputs == model.info.outputs)
        #expect(try CoreMLModel.archiveKeyIdentifier(contentsOf: SeedArtifacts.url(Reference.archive)) == nil)
    }

    @Test("Acceptance: the encrypted archive decrypts in memory with its .mlmodelkey and predicts the same",
          .needsSeedArtifacts(Reference.encryptedArchive, Reference.key))
    func encryptedArchive() throws {
        let url = SeedArtifacts.url(Reference.encryptedArchive)
        #expect(try CoreMLModel.archiveKeyIdentifier(contentsOf: url) == Reference.keyIdentifier)
        let model = try CoreMLModel(contentsOf: url, decryptor: Self.decryptor(try Self.referenceKey()))
        try Self.expectAcceptance(model)
        #expect(model.info.metadata.author == "Vadym Markov")
    }

    @Test("Without a key, the error names the key identifier", .needsSeedArtifacts(Reference.encryptedArchive))
    func missingKey() throws {
        let url = SeedArtifacts.url(Reference.encryptedArchive)
        let error = try #require(throws: CoreMLError.self) { try CoreMLModel(contentsOf: url) }
        #expect(error.code == .keyUnavailable)
        #expect(error.description == "\(url.path): key unavailable: the archive is encrypted with key "
                + "\(Reference.keyIdentifier) and no key was given")
    }

    @Test("A key with the right identifier and other material is reported as a wrong key, never a wrong answer",
          .needsSeedArtifacts(Reference.encryptedArchive, Reference.key))
    func wrongMaterial() throws {
        let key = try Self.referenceKey()
        for material in [[UInt8](repeating: 0, count: 16), key.material.reversed(), key.material.map { $0 ^ 1 }] {
            let impostor = try ModelKey(identifier: key.identifier, cipher: key.cipher, material: material, created: nil,
                                        source: nil, initializationVector: key.initializationVector)
            let error = try #require(throws: CoreMLError.self) {
                try CoreMLModel(contentsOf: SeedArtifacts.url(Reference.encryptedArchive), decryptor: Self.decryptor(impostor))
            }
            #expect(error.code == .wrongKey)
            #expect(error.reason.hasPrefix("wrong key: entry 'coremldata.bin' does not decrypt to a model part with key "
                                           + Reference.keyIdentifier))
        }
        // The right material with another IV garbles only each page's first block, which is
        // enough to refuse it too.
        let otherIV = try ModelKey(identifier: key.identifier, cipher: key.cipher, material: key.material, created: nil,
                                   source: nil, initializationVector: [UInt8](repeating: 9, count: 16))
        let error = try #require(throws: CoreMLError.self) {
            try CoreMLModel(contentsOf: SeedArtifacts.url(Reference.encryptedArchive), decryptor: Self.decryptor(otherIV))
        }
        #expect(error.code == .wrongKey)
    }

    @Test("A key with another identifier is refused before any decryption", .needsSeedArtifacts(Reference.encryptedArchive))
    func otherIdentifier() throws {
        let other = ModelKey.generate(cipher: .aes128GCM)
        let error = try #require(throws: EncryptionError.self) {
            try CoreMLModel(contentsOf: SeedArtifacts.url(Reference.encryptedArchive), decryptor: Self.decryptor(other))
        }
        #expect(error.code == .wrongKey)
        #expect(error.message == "the archive is encrypted with key \(Reference.keyIdentifier), but the key given is \(other.identifier)")
    }

    @Test("An Apple key keeps its IV through mlkit's key file", .needsSeedArtifacts(Reference.key))
    func keyFileKeepsIV() throws {
        let key = try Self.referenceKey()
        #expect(key.initializationVector == Array(Data(base64Encoded: "bieFO5mzkTbS4YW4ySts1g==")!))
        let text = String(decoding: key.keyFileData(), as: UTF8.self)
        #expect(text.contains("\"iv\": \"bieFO5mzkTbS4YW4ySts1g==\""))
        #expect(try ModelKey(keyFileData: key.keyFileData()) == key)
    }
}

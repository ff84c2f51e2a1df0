import Foundation
import MLKit
import MLKitEncryption
import TestSupport
import Testing

@Suite("Encrypted word taggers", .onOwnThreads)
struct TaggerEncryptionTests {
    static let golden = Fixtures.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models/v4-headlines-tagger.mlkit")

    @Test("A tagger encrypts, and loads with a key provider or a key, tagging as before")
    func roundTrip() async throws {
        let file = try Data(contentsOf: Self.golden)
        let key = ModelKey.generate(cipher: .chaCha20Poly1305)
        let encrypted = try ModelEncryption.encrypt(file, with: key)
        #expect(try ModelEncryption.decrypt(encrypted, with: key) == file)
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("tagger.mlkit")
        try encrypted.write(to: url)
        let plain = try WordTagger(contentsOf: Self.golden)
        let provided = try await WordTagger(contentsOf: url, keyProvider: InMemoryKeyProvider(keys: [key]))
        let direct = try WordTagger(contentsOf: url, key: key)
        let tokens = ["Apple", "ships", "iOS", "16", "at", "WWDC"]
        #expect(provided.predictedLabels(for: tokens) == plain.predictedLabels(for: tokens))
        #expect(direct.predictedLabelHypotheses(for: tokens, maximumCount: 3) == plain.predictedLabelHypotheses(for: tokens, maximumCount: 3))
        #expect(provided.formatVersion == 4)
        guard case .wordTagger(let any) = try AnyModel(contentsOf: url, key: key) else { Issue.record("not a tagger"); return }
        #expect(any.labels == plain.labels)
    }

    @Test("Without the key, or with another, loading fails with the key's error")
    func keyErrors() async throws {
        let key = ModelKey.generate()
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("tagger.mlkit")
        try ModelEncryption.encrypt(try Data(contentsOf: Self.golden), with: key).write(to: url)
        #expect(throws: EncryptionError.self) { try WordTagger(contentsOf: url, key: nil) }
        do {
            _ = try await WordTagger(contentsOf: url, keyProvider: InMemoryKeyProvider(keys: [ModelKey.generate()]))
            Issue.record("loaded without its key")
        } catch let error as EncryptionError {
            #expect(error.code == .keyUnavailable)
            #expect(error.keyIdentifier == key.identifier)
        }
        // A classifier's loader on an encrypted tagger: decrypted, then refused by its kind.
        #expect(throws: MLKitError.self) { try TextClassifier(contentsOf: url, key: key) }
    }
}

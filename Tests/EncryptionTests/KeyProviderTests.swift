import Foundation
import MLKit
import MLKitEncryption
import Testing
import TestSupport

@Suite("Key providers and loading with them", .onOwnThreads)
struct KeyProviderTests {
    struct Failing: KeyProvider {
        struct Refused: Error, CustomStringConvertible { var description: String { "the server answered 401 Unauthorized" } }
        func key(for identifier: String) async throws -> ModelKey { throw Refused() }
    }

    struct Fixed: KeyProvider {
        let key: ModelKey
        func key(for identifier: String) async throws -> ModelKey { key }
    }

    static func encryptedModel(in folder: URL, key: ModelKey) throws -> URL {
        let url = folder.appendingPathComponent("enc.mlkit")
        try ModelEncryption.encrypt(try Data(contentsOf: Fixtures.sentimentModel), with: key).write(to: url)
        return url
    }

    /// The sentiment model encrypted with a new key in a new folder, which the caller removes.
    static func encryptedModel() throws -> (folder: URL, key: ModelKey, url: URL) {
        let folder = try Fixtures.temporaryFolder()
        let key = ModelKey.generate()
        return (folder, key, try encryptedModel(in: folder, key: key))
    }

    static func loadingError(_ url: URL, _ provider: any KeyProvider) async -> EncryptionError? {
        do {
            _ = try await TextClassifier(contentsOf: url, keyProvider: provider)
            Issue.record("loading succeeded")
        } catch let error as EncryptionError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
        }
        return nil
    }

    @Test("A key file, and a folder of key files with Apple's among them, provide their keys")
    func keyFiles() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let team = ModelKey.generate(), other = ModelKey.generate(cipher: .chaCha20Poly1305)
        try team.write(to: folder.appendingPathComponent("team.mlkitkey"))
        try other.write(to: folder.appendingPathComponent("other.mlkitkey"))
        try ProjectFixtures.appleStyleKeyFile(identifier: "DECFAB02-AF49-47DB-A794-508A94E0D633")
            .write(to: folder.appendingPathComponent("apple.mlmodelkey"))
        try Data("ignored".utf8).write(to: folder.appendingPathComponent("notes.txt"))

        let single = try KeyFileProvider(contentsOf: folder.appendingPathComponent("team.mlkitkey"))
        #expect(try await single.key(for: team.identifier) == team)
        let all = try KeyFileProvider(contentsOf: folder)
        #expect(try await all.key(for: other.identifier) == other)
        #expect(try await all.key(for: "DECFAB02-AF49-47DB-A794-508A94E0D633").cipher == .aes128GCM)

        let model = try Self.encryptedModel(in: try Fixtures.temporaryFolder(), key: other)
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        let classifier = try await TextClassifier(contentsOf: model, keyProvider: all)
        #expect(classifier.predictedLabel(for: "I love rainbows") == "positive")

        let missing = await Self.loadingError(model, single)
        #expect(missing?.code == .keyUnavailable)
        #expect(missing?.keyIdentifier == other.identifier)
        #expect(missing?.description == "\(model.path): key unavailable: no key with identifier \(other.identifier) "
                + "in \(folder.appendingPathComponent("team.mlkitkey").path) (it holds: \(team.identifier))")
    }

    @Test("A provider that throws any error is reported as key unavailable, with the key identifier and its reason")
    func failingProvider() async throws {
        let (folder, key, url) = try Self.encryptedModel()
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await Self.loadingError(url, Failing())
        #expect(error?.code == .keyUnavailable)
        #expect(error?.keyIdentifier == key.identifier)
        #expect(error?.file == url.path)
        #expect(error?.description == "\(url.path): key unavailable: the key provider could not supply key \(key.identifier): "
                + "the server answered 401 Unauthorized")
        let empty = await Self.loadingError(url, InMemoryKeyProvider(keys: []))
        #expect(empty?.description == "\(url.path): key unavailable: no key with identifier \(key.identifier) in memory (it holds: none)")
    }

    @Test("A provider that answers with another key gives a wrong-key error")
    func wrongKeyFromProvider() async throws {
        let (folder, key, url) = try Self.encryptedModel()
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await Self.loadingError(url, Fixed(key: ModelKey.generate()))
        #expect(error?.code == .wrongKey)
        #expect(error?.keyIdentifier == key.identifier)
    }

    @Test("Loading without a key names the key the model needs")
    func withoutKey() throws {
        let (folder, key, url) = try Self.encryptedModel()
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = Fixtures.encryptionError { _ = try TextClassifier(contentsOf: url, key: nil) }
        #expect(error?.code == .keyUnavailable)
        #expect(error?.description == "\(url.path): key unavailable: the model is encrypted with key \(key.identifier) (AES-256-GCM) and no key was given")
    }
}

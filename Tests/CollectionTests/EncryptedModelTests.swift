import Foundation
import MLKit
import MLKitCollections
import MLKitEncryption
import TestSupport
import Testing

@Suite("Encrypted models: the key comes from the server with a read token", .timeLimit(.minutes(10)), .onOwnThreads)
struct EncryptedModelTests {
    /// A key file and the headlines model encrypted with it, made by `mlkit keygen` and `mlkit encrypt`.
    struct EncryptedModel {
        let folder: URL
        let keyFile: URL
        let model: URL
        let keyIdentifier: String

        static func make() throws -> EncryptedModel {
            let folder = try Binary.temporaryFolder("encrypted")
            let keyFile = folder.appendingPathComponent("team.mlkitkey"), model = folder.appendingPathComponent("topic.mlkit")
            let keygen = try Binary.run(["keygen", "-o", keyFile.path])
            guard keygen.status == 0 else { throw TestFailure("keygen: \(keygen.stderr)") }
            let encrypt = try Binary.run(["encrypt", Binary.headlinesModel.path, "--key", keyFile.path, "-o", model.path])
            guard encrypt.status == 0 else { throw TestFailure("encrypt: \(encrypt.stderr)") }
            let key = try ModelKey(keyFileData: Data(contentsOf: keyFile), source: keyFile.path)
            return EncryptedModel(folder: folder, keyFile: keyFile, model: model, keyIdentifier: key.identifier)
        }
    }

    @Test("Deployed, pulled still encrypted, and decrypted in memory with the key from the server")
    func encryptedEndToEnd() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let encrypted = try EncryptedModel.make()
        defer { try? FileManager.default.removeItem(at: encrypted.folder) }

        _ = try await fixture.publisher.saveCollection("secret", description: "encrypted", modelIdentifiers: ["topic"])
        try await fixture.publisher.registerKey(Data(contentsOf: encrypted.keyFile), identifier: encrypted.keyIdentifier,
                                                collection: "secret")
        let uploaded = try await fixture.publisher.uploadModel(at: encrypted.model)
        #expect(uploaded.encrypted == true)
        #expect(uploaded.keyIdentifier == encrypted.keyIdentifier)
        _ = try await fixture.publisher.createDeployment(collection: "secret",
                                                         models: ["topic": .init(sha256: uploaded.sha256, version: "1")])

        let collection = try await fixture.access("secret")
        let entry = try #require(collection.entries["topic"])
        #expect(entry.isEncrypted)
        #expect(entry.keyIdentifier == encrypted.keyIdentifier)
        let cached = try Data(contentsOf: entry.modelURL)
        #expect(cached == (try Data(contentsOf: encrypted.model)))
        #expect(EncryptedModelHeader.isEncrypted(cached))

        let readToken = try fixture.server.token(scope: "read", collection: "secret")
        let keys = try ServerKeyProvider(server: fixture.server.url, token: readToken)
        let classifier = try await TextClassifier(contentsOf: entry.modelURL, keyProvider: keys)
        #expect(classifier.predictedLabel(for: "President Donald Trump is approving a new law") == "US Politics")

        // Without a token, or with a token for another collection: "key unavailable", naming the key.
        for token in [nil, try fixture.server.token(scope: "read", collection: "other")] {
            let provider = try ServerKeyProvider(server: fixture.server.url, token: token)
            await #expect {
                _ = try await TextClassifier(contentsOf: entry.modelURL, keyProvider: provider)
            } throws: { error in
                guard let error = error as? EncryptionError else { return false }
                return error.code == .keyUnavailable && error.keyIdentifier == encrypted.keyIdentifier
                    && error.description.contains("key unavailable") && error.description.contains(encrypted.keyIdentifier)
            }
        }
    }

    @Test("mlkit deploy --key and mlkit predict --collection with MLKIT_READ_TOKEN; without it, exit 77")
    func encryptedCommands() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let encrypted = try EncryptedModel.make()
        defer { try? FileManager.default.removeItem(at: encrypted.folder) }
        let environment = ["MLKIT_SERVER": fixture.server.url.absoluteString, "MLKIT_PUBLISH_TOKEN": fixture.publishToken,
                           "MLKIT_CACHE": fixture.cache.path, "MLKIT_READ_TOKEN": ""]

        _ = try Binary.run(["collection", "create", "secret", "--model-id", "topic"], environment: environment)
        let deployed = try Binary.run(["deploy", "secret", "--model", "topic=\(encrypted.model.path)",
                                       "--key", encrypted.keyFile.path], environment: environment)
        #expect(deployed.status == 0, "\(deployed.stderr)")
        #expect(deployed.stderr.contains("registered key \(encrypted.keyIdentifier)"))
        #expect(deployed.stdout.contains("encrypted with key \(encrypted.keyIdentifier)"))

        let text = "President Donald Trump is approving a new law"
        let readToken = try fixture.server.token(scope: "read", collection: "secret")
        let predicted = try Binary.run(["predict", "--collection", "secret", "--model-id", "topic", text],
                                       environment: environment.merging(["MLKIT_READ_TOKEN": readToken]) { $1 })
        #expect(predicted.status == 0, "\(predicted.stderr)")
        #expect(predicted.stdout == "US Politics\n")

        let refused = try Binary.run(["predict", "--collection", "secret", "--model-id", "topic", text], environment: environment)
        #expect(refused.status == 77)
        #expect(refused.stderr.contains("key unavailable"))
        #expect(refused.stderr.contains(encrypted.keyIdentifier))
    }
}

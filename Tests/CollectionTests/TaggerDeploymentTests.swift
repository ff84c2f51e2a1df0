import Foundation
import MLKit
import MLKitCollections
import MLKitEncryption
import TestSupport
import Testing

@Suite("Word taggers through a real collection server", .timeLimit(.minutes(10)), .onOwnThreads)
struct TaggerDeploymentTests {
    /// The golden word tagger trained on the headlines fixture.
    static let tagger = Binary.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models/v4-headlines-tagger.mlkit")

    @Test("mlkit deploy and pull carry a word tagger, plain and encrypted, and tag with it")
    func deployAndPull() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let environment = ["MLKIT_SERVER": fixture.server.url.absoluteString, "MLKIT_PUBLISH_TOKEN": fixture.publishToken,
                           "MLKIT_CACHE": fixture.cache.path]
        let created = try Binary.run(["collection", "create", "entities", "--model-id", "tagger"], environment: environment)
        #expect(created.status == 0, "\(created.stderr)")
        let deployed = try Binary.run(["deploy", "entities", "--model", "tagger=\(Self.tagger.path)"], environment: environment)
        #expect(deployed.status == 0, "\(deployed.stderr)")
        // The version comes from the tagger's own metadata.
        #expect(deployed.stdout.contains(" version golden-4"))

        let pulled = try Binary.run(["pull", "entities", "--json"], environment: environment)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(pulled.stdout.utf8)) as? [String: Any])
        let entry = try #require((json["entries"] as? [String: Any])?["tagger"] as? [String: Any])
        let path = try #require(entry["modelPath"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: Self.tagger))
        let tagged = try Binary.run(["tag", "--model", path, "Apple ships iOS"])
        #expect(tagged.stdout == "Apple\tCOMPANY\nships\tNONE\niOS\tOS\n")
        // The library's client gets the same file.
        let collection = try await ModelCollection.beginAccessing(identifier: "entities", server: fixture.server.url,
                                                                  cacheFolder: fixture.cache)
        let url = try #require(collection.entries["tagger"]?.modelURL)
        #expect(try WordTagger(contentsOf: url).predictedLabels(for: ["Sony", "skips", "E3"]) == ["COMPANY", "NONE", "EVENT"])

        // Encrypted: the server checks the clear header; the key goes with the deployment.
        let folder = try Binary.temporaryFolder("tagger-keys")
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("k.mlkitkey").path
        let encrypted = folder.appendingPathComponent("tagger.encrypted.mlkit").path
        #expect(try Binary.run(["keygen", "-o", key]).status == 0)
        #expect(try Binary.run(["encrypt", Self.tagger.path, "--key", key, "-o", encrypted]).status == 0)
        let secret = try Binary.run(["deploy", "entities", "--model", "tagger=\(encrypted)", "--key", key], environment: environment)
        #expect(secret.status == 0, "\(secret.stderr)")
        let again = try Binary.run(["pull", "entities", "--json"], environment: environment)
        let secretEntry = try #require(((try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])?["entries"]
            as? [String: Any])?["tagger"] as? [String: Any])
        let secretPath = try #require(secretEntry["modelPath"] as? String)
        let decrypted = try Binary.run(["tag", "--model", secretPath, "--key", key, "Apple ships iOS"])
        #expect(decrypted.stdout == "Apple\tCOMPANY\nships\tNONE\niOS\tOS\n", "\(decrypted.stderr)")
        let loaded = try WordTagger(contentsOf: URL(fileURLWithPath: secretPath), key: try ModelKey(contentsOf: URL(fileURLWithPath: key)))
        #expect(loaded.labels == ["COMPANY", "EVENT", "NONE", "OS", "PRODUCT"])

        // A damaged tagger is refused at upload.
        let damaged = folder.appendingPathComponent("damaged.mlkit")
        var bytes = try Data(contentsOf: Self.tagger)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: damaged)
        let refused = try Binary.run(["deploy", "entities", "--model", "tagger=\(damaged.path)"], environment: environment)
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("checksum mismatch"))
    }
}

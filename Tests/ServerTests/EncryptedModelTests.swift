import Foundation
import MLKit
import MLKitEncryption
import TestSupport
import Testing

/// Encrypted models on the server: uploaded without their key, deployed with their key
/// identifier, and their keys registered and served only to read tokens that may have them.
@Suite("Encrypted models and keys", .timeLimit(.minutes(10)), .onOwnThreads)
struct EncryptedModelTests {
    @Test("An encrypted model is stored and resolved with its key identifier; its key goes only to allowed read tokens")
    func encryptedModelAndKey() async throws {
        let (server, client, publish) = try ServerFixture.start()
        let key = ModelKey.generate()
        let plain = ServerFixture.model(version: "secret")
        let encrypted = try ModelEncryption.encrypt(plain, with: key)
        try await ServerFixture.createCollection(client, "private", models: ["polarity"], token: publish)
        try await ServerFixture.createCollection(client, "public", models: ["polarity"], token: publish)
        let readPrivate = try server.token(scope: "read", collection: "private")
        let readPublic = try server.token(scope: "read", collection: "public")
        let readAll = try server.token(scope: "read")

        let upload = try await client.send("POST", "/v1/models", body: encrypted, token: publish)
        #expect(upload.status == 201)
        #expect(upload.json["encrypted"] as? Bool == true)
        #expect(upload.json["keyIdentifier"] as? String == key.identifier)
        #expect(upload.json["formatVersion"] as? Int == 1)
        #expect(upload.json["kind"] == nil)
        let sha = try #require(upload.json["sha256"] as? String)
        #expect(sha == (try ServerFixture.sha256(encrypted)))

        _ = try await ServerFixture.deploy(client, "private", models: ["polarity": sha], token: publish)
        let resolved = try await client.send("GET", "/v1/collections/private")
        let entry = try #require((resolved.json["entries"] as? [String: Any])?["polarity"] as? [String: Any])
        #expect(entry["encrypted"] as? Bool == true)
        #expect(entry["keyIdentifier"] as? String == key.identifier)

        // Before the key is registered: 404 to an allowed token.
        #expect(try await client.send("GET", "/v1/keys/\(key.identifier)", token: readPrivate).status == 404)
        let registered = try await client.send("PUT", "/v1/collections/private/keys/\(key.identifier)",
                                               body: key.keyFileData(), token: publish)
        #expect(registered.status == 201)
        let again = try await client.send("PUT", "/v1/collections/private/keys/\(key.identifier)",
                                          body: key.keyFileData(), token: publish)
        #expect(again.status == 200)

        // The collection's read token and an unlimited one get the key; the model decrypts with it.
        for token in [readPrivate, readAll] {
            let answer = try await client.send("GET", "/v1/keys/\(key.identifier)", token: token)
            #expect(answer.status == 200)
            #expect(answer.header("Cache-Control") == "no-store")
            let served = try ModelKey(keyFileData: answer.body)
            #expect(served == key)
            let download = try await client.send("GET", "/v1/models/\(sha)")
            let classifier = try TextClassifier(modelFileData: try ModelEncryption.decrypt(download.body, with: served))
            #expect(classifier.metadata.version == "secret")
        }
        // Another collection's read token, a publish token, no token.
        let other = try await client.send("GET", "/v1/keys/\(key.identifier)", token: readPublic)
        #expect(other.status == 403)
        #expect(try await client.send("GET", "/v1/keys/\(key.identifier)", token: publish).status == 403)
        #expect(try await client.send("GET", "/v1/keys/\(key.identifier)").status == 401)
        // Keys never reach the log.
        server.stop()
        #expect(!server.logText.contains(key.keyFileData().base64EncodedString().prefix(16)))
    }

    @Test("A key registered for a collection is served to its read token before any deployment uses it; Apple's key works")
    func registeredKeys() async throws {
        try await ServerFixture.inProcess { server, client, publish in
            try await ServerFixture.createCollection(client, "apple", models: ["m"], token: publish)
            let read = try await server.token(scope: "read", collection: "apple")
            let appleKey = try ProjectFixtures.appleStyleKeyFile(identifier: "DECFAB02-AF49-47DB-A794-508A94E0D633")
            let identifier = try ModelKey(keyFileData: appleKey).identifier

            let registered = try await client.send("PUT", "/v1/collections/apple/keys/\(identifier)", body: appleKey, token: publish)
            #expect(registered.status == 201)
            let served = try await client.send("GET", "/v1/keys/\(identifier)", token: read)
            #expect(served.status == 200)
            // Served as the canonical mlkit key file of the same key.
            #expect(served.body == (try ModelKey(keyFileData: appleKey).keyFileData()))

            // Bad key registrations.
            let notAKey = try await client.send("PUT", "/v1/collections/apple/keys/\(identifier)", body: Data("hello".utf8), token: publish)
            #expect(notAKey.status == 422)
            let other = ModelKey.generate()
            let mismatch = try await client.send("PUT", "/v1/collections/apple/keys/\(identifier)", body: other.keyFileData(), token: publish)
            #expect(mismatch.status == 422)
            #expect(mismatch.errorMessage.contains(other.identifier))
            let unknownCollection = try await client.send("PUT", "/v1/collections/nowhere/keys/\(other.identifier)",
                                                          body: other.keyFileData(), token: publish)
            #expect(unknownCollection.status == 404)
            let readScope = try await client.send("PUT", "/v1/collections/apple/keys/\(other.identifier)", body: other.keyFileData(), token: read)
            #expect(readScope.status == 403)

            // An encrypted upload cut short is refused.
            let truncated = try ModelEncryption.encrypt(ServerFixture.model(version: "t"), with: other).dropLast(100)
            let refused = try await client.send("POST", "/v1/models", body: Data(truncated), token: publish)
            #expect(refused.status == 422)
            #expect(refused.errorMessage.contains("encrypted"))
        }
    }
}

import Foundation
import TestSupport
import Testing

/// Publish a model, deploy it, resolve the collection and download the file, end to end
/// against a real `mlkit serve`.
@Suite("Publishing, resolving and downloading", .timeLimit(.minutes(10)), .onOwnThreads)
struct PublishingTests {
    @Test("An uploaded model is stored under its SHA-256, deployed, resolved and downloaded byte for byte")
    func publishResolveDownload() async throws {
        try await ServerFixture.inProcess { server, client, token in
            let model = ServerFixture.model(version: "1.0")
            let expectedSHA = try ServerFixture.sha256(model)

            let created = try await ServerFixture.createCollection(client, "sentiment", models: ["polarity"], token: token)
            #expect(created.status == 201)
            #expect(created.json["modelIdentifiers"] as? [String] == ["polarity"])

            let upload = try await client.send("POST", "/v1/models", body: model, token: token)
            #expect(upload.status == 201)
            #expect(upload.json["sha256"] as? String == expectedSHA)
            #expect(upload.json["size"] as? Int == model.count)
            #expect(upload.json["formatVersion"] as? Int == 3)
            #expect(upload.json["encrypted"] as? Bool == false)
            #expect(upload.json["version"] as? String == "1.0")
            // Content addressing: the file sits at models/<sha256>, and nothing is left in uploads/.
            let stored = try Data(contentsOf: server.dataFolder.appendingPathComponent("models/\(expectedSHA)"))
            #expect(stored == model)
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.dataFolder.appendingPathComponent("uploads").path).isEmpty)
            // The same bytes again: 200, one copy.
            let again = try await client.send("POST", "/v1/models", body: model, token: token)
            #expect(again.status == 200)
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.dataFolder.appendingPathComponent("models").path) == [expectedSHA])

            let deploymentID = try await ServerFixture.deploy(client, "sentiment", models: ["polarity": expectedSHA], token: token)
            let resolved = try await client.send("GET", "/v1/collections/sentiment")
            #expect(resolved.status == 200)
            #expect(resolved.header("Content-Type") == "application/json")
            #expect(resolved.header("Cache-Control") == "no-cache")
            #expect(resolved.json["deploymentID"] as? String == deploymentID)
            #expect(resolved.json["collection"] as? String == "sentiment")
            let entry = try #require((resolved.json["entries"] as? [String: Any])?["polarity"] as? [String: Any])
            #expect(entry["modelIdentifier"] as? String == "polarity")
            #expect(entry["sha256"] as? String == expectedSHA)
            #expect(entry["size"] as? Int == model.count)
            #expect(entry["version"] as? String == "1.0")
            #expect(entry["formatVersion"] as? Int == 3)
            #expect(entry["encrypted"] as? Bool == false)
            #expect(entry["keyIdentifier"] == nil)
            let downloadURL = try #require(entry["downloadURL"] as? String)
            #expect(downloadURL == "/v1/models/\(expectedSHA)")

            let download = try await client.send("GET", downloadURL)
            #expect(download.status == 200)
            #expect(download.body == model)
            #expect(try ServerFixture.sha256(download.body) == expectedSHA)
            #expect(download.header("Content-Length") == String(model.count))
            #expect(download.header("ETag") == "\"\(expectedSHA)\"")
            #expect(download.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(download.header("Content-Type") == "application/octet-stream")
            #expect(download.header("Accept-Ranges") == "bytes")

            let head = try await client.send("HEAD", downloadURL)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == String(model.count))
            #expect(head.header("ETag") == "\"\(expectedSHA)\"")

            let health = try await client.send("GET", "/healthz")
            #expect(health.status == 200)
            #expect(health.json["status"] as? String == "ok")
        }
    }

    @Test("Deployments supersede, roll back and keep their whole history", arguments: StoreKind.testable)
    func rollbackAndHistory(store: StoreKind) async throws {
        try await ServerFixture.inProcess(store: store) { server, client, token in
            try await ServerFixture.createCollection(client, "news", models: ["topic"], token: token)
            var deployments: [String] = []
            for version in ["1", "2", "3"] {
                let sha = try await ServerFixture.upload(client, ServerFixture.model(version: version), token: token)
                deployments.append(try await ServerFixture.deploy(client, "news", models: ["topic": sha], token: token))
            }
            #expect(try await ServerFixture.resolved(client, "news") == deployments[2])

            let first = try await client.send("POST", "/v1/collections/news/rollback", token: token)
            #expect(first.status == 200)
            #expect(first.json["deploymentID"] as? String == deployments[1])
            #expect(try await ServerFixture.resolved(client, "news") == deployments[1])
            let second = try await client.send("POST", "/v1/collections/news/rollback", token: token)
            #expect(second.json["deploymentID"] as? String == deployments[0])
            let nothingLeft = try await client.send("POST", "/v1/collections/news/rollback", token: token)
            #expect(nothingLeft.status == 409)
            #expect(nothingLeft.errorMessage.contains("no earlier default deployment"))

            // A named rollback target, and activation of a rolled-back deployment.
            let named = try await client.send("POST", "/v1/collections/news/rollback", json: ["deploymentID": deployments[2]],
                                              token: token)
            #expect(named.status == 200)
            #expect(try await ServerFixture.resolved(client, "news") == deployments[2])
            let activated = try await client.send("POST", "/v1/collections/news/deployments/\(deployments[1])/activate", token: token)
            #expect(activated.status == 200)
            #expect(activated.json["status"] as? String == "active")
            #expect(try await ServerFixture.resolved(client, "news") == deployments[1])

            let history = try await client.send("GET", "/v1/collections/news/deployments", token: token)
            #expect(history.status == 200)
            let listed = try #require(history.json["deployments"] as? [[String: Any]])
            #expect(listed.map { $0["deploymentID"] as? String } == deployments.reversed().map(Optional.some))
            #expect(listed.map { $0["status"] as? String } == ["superseded", "active", "rolledBack"])
            let events = try #require(listed[0]["history"] as? [[String: Any]])
            #expect(events.map { $0["status"] as? String } == ["draft", "active", "rolledBack", "active", "superseded"])
            let collection = try #require(history.json["collection"] as? [String: Any])
            #expect(collection["defaultDeploymentID"] as? String == deployments[1])

            let list = try await client.send("GET", "/v1/collections", token: token)
            #expect((list.json["collections"] as? [[String: Any]])?.map { $0["identifier"] as? String } == ["news"])
        }
    }

    @Test("A draft deployment is not served until it is activated", arguments: StoreKind.testable)
    func draftUntilActivated(store: StoreKind) async throws {
        try await ServerFixture.inProcess(store: store) { server, client, token in
            try await ServerFixture.createCollection(client, "drafts", models: ["m"], token: token)
            let sha = try await ServerFixture.upload(client, ServerFixture.model(version: "d"), token: token)
            let draft = try await ServerFixture.deploy(client, "drafts", models: ["m": sha], activate: false, token: token)
            #expect(try await ServerFixture.resolved(client, "drafts") == "status 404")
            let activated = try await client.send("POST", "/v1/collections/drafts/deployments/\(draft)/activate", token: token)
            #expect(activated.status == 200)
            #expect(try await ServerFixture.resolved(client, "drafts") == draft)
        }
    }
}

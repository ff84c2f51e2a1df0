import Foundation
import MLKit
import MLKitCollections
import TestSupport
import Testing

@Suite("Publish, deploy, pull and predict against a real server", .timeLimit(.minutes(10)), .onOwnThreads)
struct EndToEndTests {
    @Test("A plain model: deployed, pulled into the cache verified, and predicting")
    func plainModel() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let deployment = try await fixture.deploy("headlines", ["topic": Binary.headlinesModel], version: "2.0")
        #expect(deployment.status == "active")

        let collection = try await fixture.access("headlines")
        #expect(collection.identifier == "headlines")
        #expect(collection.deploymentID == deployment.deploymentID)
        #expect(!collection.isStale)
        let entry = try #require(collection.entries["topic"])
        #expect(entry.modelIdentifier == "topic")
        #expect(entry.version == "2.0")
        #expect(!entry.isEncrypted)
        #expect(entry.modelURL.path.hasPrefix(fixture.cache.path))
        #expect(try Data(contentsOf: entry.modelURL) == Data(contentsOf: Binary.headlinesModel))
        #expect(entry.sha256 == deployment.models["topic"]?.sha256)

        let classifier = try TextClassifier(contentsOf: entry.modelURL)
        #expect(classifier.predictedLabel(for: "President Donald Trump is approving a new law") == "US Politics")
        #expect(classifier.predictedLabel(for: "Snap users drop for first time, but revenue climbs") == "Tech")
    }

    @Test("A new deployment replaces the cached files; endAccessing removes them")
    func newDeploymentAndEndAccessing() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        try await fixture.deploy("polarity", ["model": Binary.headlinesModel])
        let first = try await fixture.access("polarity")
        let second = try await fixture.deploy("polarity", ["model": Binary.sentimentModel], version: "2.0")

        let updated = try await fixture.access("polarity")
        #expect(updated.deploymentID == second.deploymentID)
        let entry = try #require(updated.entries["model"])
        #expect(try TextClassifier(contentsOf: entry.modelURL).predictedLabel(for: "I love rainbows") == "positive")
        // The superseded deployment's file is gone from the cache.
        #expect(!FileManager.default.fileExists(atPath: first.entries["model"]!.modelURL.path))

        #expect(try await ModelCollection.endAccessing(identifier: "polarity", cacheFolder: fixture.cache))
        #expect(!FileManager.default.fileExists(atPath: entry.modelURL.path))
        #expect(try await ModelCollection.endAccessing(identifier: "polarity", cacheFolder: fixture.cache) == false)
    }

    @Test("Publisher calls: list, history, rollback, activate, and the server's errors")
    func publisherCalls() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let first = try await fixture.deploy("news", ["topic": Binary.headlinesModel])
        let second = try await fixture.deploy("news", ["topic": Binary.sentimentModel])

        let collections = try await fixture.publisher.collections()
        #expect(collections.map(\.identifier) == ["news"])
        #expect(collections.first?.defaultDeploymentID == second.deploymentID)

        var history = try await fixture.publisher.history(of: "news")
        #expect(history.deployments.map(\.deploymentID) == [second.deploymentID, first.deploymentID])
        #expect(history.deployments.map(\.status) == ["active", "superseded"])

        let rolledBack = try await fixture.publisher.rollback(collection: "news")
        #expect(rolledBack.deploymentID == first.deploymentID)
        #expect(try await fixture.access("news").deploymentID == first.deploymentID)
        history = try await fixture.publisher.history(of: "news")
        #expect(history.deployments.first { $0.deploymentID == second.deploymentID }?.status == "rolledBack")

        let reactivated = try await fixture.publisher.activate(deploymentID: second.deploymentID, in: "news")
        #expect(reactivated.status == "active")
        #expect(try await fixture.access("news").deploymentID == second.deploymentID)

        await #expect { try await fixture.publisher.history(of: "missing") } throws: { error in
            (error as? ModelCollectionError)?.code == .notFound && (error as? ModelCollectionError)?.statusCode == 404
        }
        let notAModel = fixture.cache.appendingPathComponent("not-a-model.mlkit")
        try Data("hello, world".utf8).write(to: notAModel)
        await #expect { try await fixture.publisher.uploadModel(at: notAModel) } throws: { error in
            (error as? ModelCollectionError)?.statusCode == 422
        }
        let reader = try fixture.server.token(scope: "read")
        let readOnly = try PublisherClient(server: fixture.server.url, token: reader)
        await #expect { try await readOnly.collections() } throws: { error in
            (error as? ModelCollectionError)?.code == .forbidden
        }
        let anonymous = try PublisherClient(server: fixture.server.url, token: nil)
        await #expect { try await anonymous.collections() } throws: { error in
            (error as? ModelCollectionError)?.code == .unauthorized
        }
    }
}

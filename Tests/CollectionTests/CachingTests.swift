import Foundation
import MLKit
import MLKitCollections
import TestSupport
import Testing

@Suite("Caching and downloads: ETag revalidation, the refresh policy, Range resume, checksums", .timeLimit(.minutes(10)), .onOwnThreads)
struct CachingTests {
    @Test("An unchanged deployment is revalidated with If-None-Match and answered 304")
    func etagRevalidation() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        try await fixture.deploy("headlines", ["topic": Binary.headlinesModel])
        let proxy = try CuttingProxy(upstreamPort: fixture.server.port)
        defer { proxy.close() }

        let first = try await fixture.access("headlines", through: proxy.url)
        #expect(!proxy.requests.lowercased().contains("if-none-match"))
        proxy.clearLog()
        try await Task.sleep(for: .milliseconds(20))

        let second = try await fixture.access("headlines", through: proxy.url)
        #expect(proxy.requests.lowercased().contains("if-none-match: \""))
        #expect(proxy.responses.hasPrefix("HTTP/1.1 304"))
        #expect(!proxy.requests.contains("GET /v1/models/"))
        #expect(second.deploymentID == first.deploymentID)
        #expect(second.fetched == first.fetched)
        #expect(second.checked > first.checked)
    }

    @Test("Within the refresh interval the cache answers without asking the server")
    func refreshPolicy() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        try await fixture.deploy("headlines", ["topic": Binary.headlinesModel])
        let proxy = try CuttingProxy(upstreamPort: fixture.server.port)
        defer { proxy.close() }

        let first = try await fixture.access("headlines", through: proxy.url, policy: .atMostEvery(minutes: 60))
        proxy.clearLog()
        let second = try await fixture.access("headlines", through: proxy.url, policy: .atMostEvery(minutes: 60))
        #expect(proxy.requests.isEmpty)
        #expect(second.checked == first.checked)
        #expect(!second.isStale)

        // A different context is a different question: the server is asked again.
        _ = try await fixture.access("headlines", through: proxy.url, context: DeviceContext(languageCode: "fr"),
                                     policy: .atMostEvery(minutes: 60))
        #expect(proxy.requests.contains("GET /v1/collections/headlines?"))
    }

    @Test("A download cut in the middle keeps its partial file and resumes with Range")
    func rangeResume() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        try await fixture.deploy("sentiment", ["polarity": Binary.sentimentModel])
        let proxy = try CuttingProxy(upstreamPort: fixture.server.port)
        defer { proxy.close() }
        let size = try Data(contentsOf: Binary.sentimentModel).count
        let sha = try await fixture.sha256(of: Binary.sentimentModel)
        let partial = fixture.cache.appendingPathComponent("partial/\(sha).part")

        // Every connection breaks after 1 MB: the collection's answer gets through, the model does not.
        proxy.cutConnections(afterResponseBytes: 1_000_000)
        await #expect { try await fixture.access("sentiment", through: proxy.url) } throws: { error in
            let error = error as? ModelCollectionError
            return error?.code == .modelCollection && error?.underlyingCode == .network
        }
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber).intValue
        #expect(kept > 0 && kept < size)
        #expect(!proxy.requests.lowercased().contains("range:"))

        proxy.cutConnections(afterResponseBytes: nil)
        proxy.clearLog()
        let collection = try await fixture.access("sentiment", through: proxy.url)
        #expect(proxy.requests.lowercased().contains("range: bytes=\(kept)-"))
        #expect(proxy.responses.contains("HTTP/1.1 206"))
        #expect(proxy.forwardedResponseBytes < size)
        let entry = try #require(collection.entries["polarity"])
        #expect(try Data(contentsOf: entry.modelURL) == Data(contentsOf: Binary.sentimentModel))
        #expect(!FileManager.default.fileExists(atPath: partial.path))
        #expect(try TextClassifier(contentsOf: entry.modelURL).predictedLabel(for: "I love rainbows") == "positive")
    }

    @Test("A download whose SHA-256 is wrong is rejected, and the good cached copy kept")
    func checksumMismatch() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let good = try await fixture.deploy("headlines", ["topic": Binary.headlinesModel])
        let cached = try await fixture.access("headlines")
        let goodFile = try #require(cached.entries["topic"]).modelURL

        // A new deployment whose stored file is damaged on the server's disk after upload.
        let bad = try await fixture.deploy("headlines", ["topic": Binary.sentimentModel])
        let stored = fixture.server.storedModel(sha256: try #require(bad.models["topic"]).sha256)
        var bytes = try Data(contentsOf: stored)
        bytes[bytes.count / 2] ^= 0xFF
        try FileManager.default.removeItem(at: stored)
        try bytes.write(to: stored)

        let result = try await fixture.access("headlines")
        #expect(result.isStale)
        #expect(result.staleReason?.code == .checksumMismatch)
        #expect(result.deploymentID == good.deploymentID)
        #expect(try Data(contentsOf: goodFile) == Data(contentsOf: Binary.headlinesModel))
        let partials = try FileManager.default.contentsOfDirectory(atPath: fixture.cache.appendingPathComponent("partial").path)
        #expect(partials.filter { $0.hasSuffix(".part") }.isEmpty)

        // With no good copy to keep, the error says so.
        let emptyCache = try Binary.temporaryFolder("cache")
        defer { try? FileManager.default.removeItem(at: emptyCache) }
        await #expect {
            try await ModelCollection.beginAccessing(identifier: "headlines", server: fixture.server.url,
                                                     context: DeviceContext(), cacheFolder: emptyCache)
        } throws: { error in
            let error = error as? ModelCollectionError
            return error?.code == .modelCollection && error?.underlyingCode == .checksumMismatch
        }
    }
}

@Suite("Offline: the last good collection, marked stale, or a clear error", .timeLimit(.minutes(10)), .onOwnThreads)
struct OfflineTests {
    @Test("With the server down, the cached collection comes back stale with the error")
    func staleCache() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let deployment = try await fixture.deploy("headlines", ["topic": Binary.headlinesModel])
        let fresh = try await fixture.access("headlines")
        fixture.server.stop()

        let stale = try await fixture.access("headlines")
        #expect(stale.isStale)
        #expect(stale.staleReason?.code == .network)
        #expect(stale.deploymentID == deployment.deploymentID)
        #expect(stale.entries["topic"]?.modelURL == fresh.entries["topic"]?.modelURL)
        let classifier = try TextClassifier(contentsOf: try #require(stale.entries["topic"]).modelURL)
        #expect(classifier.predictedLabel(for: "President Donald Trump is approving a new law") == "US Politics")
    }

    @Test("With the server down and nothing cached, the error is modelCollection")
    func noCache() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        fixture.server.stop()
        await #expect {
            try await fixture.access("headlines")
        } throws: { error in
            guard let error = error as? ModelCollectionError else { return false }
            return error.code == .modelCollection && error.underlyingCode == .network
                && error.description.contains("collection \"headlines\" is unavailable, with no cached copy")
        }
    }

    @Test("An unknown collection with nothing cached is modelCollection with notFound behind it")
    func unknownCollection() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        await #expect {
            try await fixture.access("nothing-here")
        } throws: { error in
            let error = error as? ModelCollectionError
            return error?.code == .modelCollection && error?.underlyingCode == .notFound && error?.statusCode == 404
        }
        await #expect(throws: ModelCollectionError.self) {
            try await fixture.access("../etc")
        }
    }
}

@Suite("Updates: an AsyncSequence of deployments", .timeLimit(.minutes(10)), .onOwnThreads)
struct UpdateTests {
    @Test("Each new deployment arrives once, in order")
    func updates() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let first = try await fixture.deploy("headlines", ["topic": Binary.headlinesModel])
        let stream = try ModelCollection.updates(identifier: "headlines", server: fixture.server.url, context: DeviceContext(),
                                                 cacheFolder: fixture.cache, every: .milliseconds(100))
        var iterator = stream.makeAsyncIterator()
        let initial = try #require(await iterator.next())
        #expect(initial.deploymentID == first.deploymentID)

        let second = try await fixture.deploy("headlines", ["topic": Binary.sentimentModel])
        let next = try #require(await iterator.next())
        #expect(next.deploymentID == second.deploymentID)
        #expect(FileManager.default.fileExists(atPath: try #require(next.entries["topic"]).modelURL.path))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MLKit
@testable import MLKitCollections
import TestSupport
import Testing

@Suite("Stalled transfers end: a watchdog bounds what the session's own timeout does not", .timeLimit(.minutes(5)), .onOwnThreads)
struct StalledTransferTests {
    /// An accessor whose watchdog fires after 2 s, far below the session's 60 s request
    /// timeout: whatever ends a stalled transfer within the test is the watchdog.
    static func accessor(through proxy: CuttingProxy, cache: URL) throws -> CollectionAccessor {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        return try CollectionAccessor(identifier: "headlines", server: proxy.url, context: DeviceContext(),
                                      cache: ModelCache(folder: cache), configuration: configuration,
                                      watchdogInterval: 2)
    }

    @Test("The default interval is the session's request timeout plus as much again, up to 5 s; 0 means 60 s, and infinity no watch")
    func defaultInterval() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 1
        #expect(Watchdog.interval(for: configuration) == 2)
        configuration.timeoutIntervalForRequest = 60
        #expect(Watchdog.interval(for: configuration) == 65)
        configuration.timeoutIntervalForRequest = 0
        #expect(Watchdog.interval(for: configuration) == 65)
        configuration.timeoutIntervalForRequest = .infinity
        #expect(Watchdog.interval(for: configuration) == .infinity)
    }

    @Test("An infinite interval watches nothing")
    func infiniteInterval() async throws {
        let fired = Fired()
        let watchdog = Watchdog(interval: .infinity)
        watchdog.start { fired.mark("infinite") }
        try await Task.sleep(for: .milliseconds(200))
        #expect(fired.names.isEmpty)
    }

    @Test("A request whose answer stalls fails after the watchdog's interval, or gives the cached copy marked stale")
    func stalledRequest() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        try await fixture.deploy("headlines", ["topic": Binary.headlinesModel])
        let proxy = try CuttingProxy(upstreamPort: fixture.server.port)
        defer { proxy.close() }
        let cache = try Binary.temporaryFolder("cache")
        let accessor = try Self.accessor(through: proxy, cache: cache)

        // From an empty cache: the access fails, naming the stall, after about 2 s.
        proxy.stallConnections(afterResponseBytes: 0)
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: ModelCollectionError.self) { try await accessor.access(policy: .always) }
        let elapsed = clock.now - start
        #expect(error?.code == .modelCollection)
        #expect(error?.description.contains("no progress for 2 s") == true, "\(String(describing: error))")
        #expect(elapsed >= .seconds(2) && elapsed < .seconds(30), "\(elapsed)")

        // With the collection cached, the same stall gives the cached copy, marked stale.
        proxy.stallConnections(afterResponseBytes: nil)
        let fresh = try await accessor.access(policy: .always)
        #expect(!fresh.isStale)
        proxy.stallConnections(afterResponseBytes: 0)
        let stale = try await accessor.access(policy: .always)
        #expect(stale.isStale)
        #expect(stale.staleReason?.code == .network)
        #expect(stale.staleReason?.description.contains("no progress for 2 s") == true)
        #expect(stale.deploymentID == fresh.deploymentID)
        #expect(FileManager.default.fileExists(atPath: try #require(stale.entries["topic"]).modelURL.path))
    }

    @Test("A download that stalls midway ends after the watchdog's interval, keeps its partial file, and resumes")
    func stalledDownload() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        try await fixture.deploy("headlines", ["polarity": Binary.sentimentModel])
        let size = try Data(contentsOf: Binary.sentimentModel).count
        let sha = try await fixture.sha256(of: Binary.sentimentModel)
        let proxy = try CuttingProxy(upstreamPort: fixture.server.port)
        defer { proxy.close() }
        let cache = try Binary.temporaryFolder("cache")
        let accessor = try Self.accessor(through: proxy, cache: cache)

        // The deployment's answer (a few KB) passes; the model file's stalls after 64 KB, which
        // arrive at once: the watchdog counts its interval from the last bytes.
        let stallAt = 64 * 1024
        #expect(size > 2 * stallAt)
        proxy.stallConnections(afterResponseBytes: stallAt)
        let error = await #expect(throws: ModelCollectionError.self) { try await accessor.access(policy: .always) }
        #expect(error?.description.contains("the download broke after") == true, "\(String(describing: error))")
        #expect(error?.description.contains("no progress for 2 s") == true, "\(String(describing: error))")
        let partial = cache.appendingPathComponent("partial/\(sha).part")
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber).intValue
        #expect(kept > 0 && kept < stallAt)

        // Unstalled, the next access resumes from the partial file with Range.
        proxy.stallConnections(afterResponseBytes: nil)
        proxy.clearLog()
        let collection = try await accessor.access(policy: .always)
        #expect(!collection.isStale)
        #expect(proxy.requests.contains("Range: bytes=\(kept)-") || proxy.requests.lowercased().contains("range: bytes=\(kept)-"))
        #expect(FileManager.default.fileExists(atPath: try #require(collection.entries["polarity"]).modelURL.path))
    }

    @Test("Progress keeps the watchdog quiet, stopping it ends the watch, and silence ends the transfer after its interval")
    func watchdogTiming() async throws {
        let fired = Fired()

        // Progress every 20 ms for 1.5 s, with an interval of 1 s: no expiry. The progress comes
        // from a thread of its own, as URLSession's callbacks do, so that a busy pool of Swift
        // tasks (the other tests) cannot delay it.
        let busy = Watchdog(interval: 1)
        busy.start { fired.mark("busy") }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                for _ in 0..<75 {
                    Thread.sleep(forTimeInterval: 0.02)
                    busy.progressed()
                }
                busy.stop()
                done.resume()
            }
        }

        // Stopped before its interval: no expiry.
        let stopped = Watchdog(interval: 0.2)
        stopped.start { fired.mark("stopped") }
        stopped.stop()

        // Silent: expires once, after its interval.
        let clock = ContinuousClock()
        let start = clock.now
        let silent = Watchdog(interval: 0.2)
        silent.start { fired.mark("silent") }
        while !fired.names.contains("silent") && clock.now - start < .seconds(10) {
            try await Task.sleep(for: .milliseconds(10))
        }
        let elapsed = clock.now - start
        try await Task.sleep(for: .milliseconds(500))
        #expect(fired.names == ["silent"])
        #expect(elapsed >= .milliseconds(200) && elapsed < .seconds(5), "\(elapsed)")
    }
}

/// The names of the watchdogs that expired, in order.
private final class Fired: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []

    func mark(_ name: String) { lock.withLock { list.append(name) } }
    var names: [String] { lock.withLock { list } }
}

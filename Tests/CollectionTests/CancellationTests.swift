import Foundation
import MLKit
import MLKitCollections
import TestSupport
import Testing

/// Cancelling a Swift task whose request or download is in flight ends it with
/// `CancellationError`: not a hang (FoundationNetworking's async `data(for:)` deadlocks when
/// cancelled on Linux), and not a network error that would send a client to its stale cache.
///
/// The cancellations run in a test process of their own (``CancellationStress``). After a
/// thousand cancelled transfers, a socket opened later in the same process was once found
/// missing from libdispatch's epoll set, its request hanging (swift-corelibs-libdispatch issue
/// 833 describes such a loss for reused descriptors); in this process it would hang an
/// unrelated test running beside them.
@Suite("Cancellation: requests and downloads in flight", .onOwnThreads)
struct CancellationTests {
    @Test("A thousand cancelled requests and forty-odd cancelled accesses end, in a process of their own")
    func cancellationsInAChildProcess() throws {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0])
        let result = try ChildProcess.run(testBinary, ["--testing-library", "swift-testing",
                                                       "--filter", "CancellationStress"],
                                          environment: [cancellationStressVariable: "1"], deadline: 240)
        // Swift Testing reports on standard error.
        let report = result.stdout + result.stderr
        #expect(result.status == 0, "\(report)")
        #expect(report.contains("Test run with 2 tests"), "\(report)")
    }
}

/// The environment variable that enables ``CancellationStress``.
let cancellationStressVariable = "MLKIT_TEST_CANCELLATION_STRESS"

/// The cancellations themselves, enabled only in the child process that
/// ``CancellationTests`` starts.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment[cancellationStressVariable] != nil),
       .timeLimit(.minutes(3)), .onOwnThreads)
struct CancellationStress {
    @Test("A cancelled request ends with CancellationError, never a hang or a network error")
    func cancelledRequests() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        try await fixture.deploy("cancel", ["topic": Binary.headlinesModel])
        var cancelled = 0, completed = 0
        for round in 0..<1_000 {
            let publisher = fixture.publisher
            let request = Task { try await publisher.collections() }
            // Cancel at once, or up to 300 µs into the request.
            if round % 4 != 0 { try await Task.sleep(for: .microseconds(round % 7 * 50)) }
            request.cancel()
            do {
                _ = try await request.value
                completed += 1
            } catch is CancellationError {
                cancelled += 1
            }
        }
        #expect(cancelled > 0)
        #expect(cancelled + completed == 1_000)
        // The connection still serves requests afterwards.
        #expect(try await fixture.publisher.collections().map(\.identifier) == ["cancel"])
    }

    @Test("A cancelled access ends with CancellationError and leaves the cache usable")
    func cancelledAccesses() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let deployment = try await fixture.deploy("cancel", ["sentiment": Binary.sentimentModel])
        let server = fixture.server.url, cache = fixture.cache
        let access: @Sendable () async throws -> ModelCollection = {
            try await ModelCollection.beginAccessing(identifier: "cancel", server: server, cacheFolder: cache)
        }
        // The cancels sweep from the start of an access to twice as long as the first access
        // took, so that they fall on the request, the download and the saving, and some come
        // after the end. Accesses run slower under load than the first did, so if none has
        // finished by the end of the sweep the wait doubles until one does. The whole loop has a
        // budget of its own, well inside the time limit, however slow the machine.
        let clock = ContinuousClock()
        let whole = try await clock.measure { _ = try await access() }
        let sweep = 40, budget = Duration.seconds(90), start = clock.now
        var cancelled = 0, completed = 0, wait = Duration.zero, round = 0
        while clock.now - start < budget, round < sweep || cancelled == 0 || completed == 0 {
            if round < sweep {
                wait = whole * (2 * Double(round) / Double(sweep))
            } else {
                wait = completed == 0 ? wait * 2 : .zero
            }
            // From an empty cache, so that the model is downloaded again.
            try FileManager.default.removeItem(at: cache)
            let task = Task { try await access() }
            try await Task.sleep(for: min(wait, budget - (clock.now - start)))
            task.cancel()
            do {
                let collection = try await task.value
                #expect(!collection.isStale)
                completed += 1
            } catch is CancellationError {
                cancelled += 1
            }
            round += 1
        }
        #expect(cancelled > 0 && completed > 0)
        let collection = try await fixture.access("cancel")
        #expect(collection.deploymentID == deployment.deploymentID && !collection.isStale)
        let model = try TextClassifier(contentsOf: try #require(collection.entries["sentiment"]).modelURL)
        #expect(model.labels.contains("positive"))
    }
}

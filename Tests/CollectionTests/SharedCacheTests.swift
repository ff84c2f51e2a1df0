import Crypto
import Foundation
import MLKit
import MLKitCollections
import TestSupport
import Testing

@Suite("A shared cache: concurrent refreshes from tasks and processes", .timeLimit(.minutes(10)), .onOwnThreads)
struct SharedCacheTests {
    @Test("Refreshes from tasks and processes while the deployment flips: an offline client always gets the last good collection, whose files exist and verify")
    func concurrentRefreshesWhileFlipping() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let svm = try await fixture.deploy("flip", ["topic": Binary.headlinesModel])
        let cnbModel = Binary.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models/v1-headlines-cnb.mlkit")
        let cnb = try await fixture.deploy("flip", ["topic": cnbModel])
        let deployments = [svm.deploymentID, cnb.deploymentID]
        _ = try await fixture.access("flip")

        let flipping = Task {
            var flips = 0
            while !Task.isCancelled {
                do { _ = try await fixture.publisher.activate(deploymentID: deployments[flips % 2], in: "flip") } catch { break }
                flips += 1
            }
            return flips
        }
        // Other processes share the cache folder: `mlkit pull` refreshes it too.
        let pulls = try (0..<4).map { _ in try BackgroundPull("flip", server: fixture.server.url, cache: fixture.cache) }

        // Each client accesses the collection 8 times, and on while the pulls run.
        let rounds: @Sendable (_ access: @Sendable () async throws -> Void) async throws -> Int = { access in
            var count = 0
            while count < 8 || (pulls.contains(where: \.isRunning) && count < 500) {
                try await access()
                count += 1
            }
            return count
        }
        let accesses = try await withThrowingTaskGroup(of: Int.self) { group in
            // All along, a client that cannot reach the server gets the last good collection.
            group.addTask {
                _ = try await rounds {
                    let offline = try await fixture.access("flip", through: URL(string: "http://127.0.0.1:1")!)
                    #expect(offline.isStale && deployments.contains(offline.deploymentID))
                }
                return 0
            }
            for _ in 0..<12 {
                group.addTask {
                    try await rounds {
                        let collection = try await fixture.access("flip")
                        #expect(deployments.contains(collection.deploymentID))
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        flipping.cancel()
        let flips = await flipping.value
        for pull in pulls {
            #expect(try await pull.status() == 0, "mlkit pull: \(pull.stderr)")
        }
        #expect(accesses >= 96)
        #expect(flips > 2, "the deployment flipped while the cache was refreshed")

        // With the server gone, the cache still has a complete, verified collection.
        fixture.server.stop()
        let offline = try await fixture.access("flip")
        #expect(offline.isStale)
        #expect(deployments.contains(offline.deploymentID))
        let entry = try #require(offline.entries["topic"])
        let bytes = try Data(contentsOf: entry.modelURL)
        #expect(SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() == entry.sha256)
        #expect(try TextClassifier(contentsOf: entry.modelURL).labels == ["Tech", "US Politics"])
        let models = try FileManager.default.contentsOfDirectory(atPath: entry.modelURL.deletingLastPathComponent().path)
        #expect(models == [entry.modelURL.lastPathComponent], "only the manifest's files are kept")
    }
}

/// `mlkit pull COLLECTION --server URL --cache FOLDER` running in the background, its standard
/// error kept in a file.
private final class BackgroundPull: @unchecked Sendable {
    private let process = Process()
    private let log: URL

    init(_ collection: String, server: URL, cache: URL) throws {
        log = cache.appendingPathComponent("pull-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = Binary.mlkit
        process.arguments = ["pull", collection, "--server", server.absoluteString, "--cache", cache.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        try process.startAlone()
    }

    var isRunning: Bool { process.isRunning }

    /// What it wrote to standard error.
    var stderr: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The exit status, once it has exited (waiting without blocking a thread); after 120 s it
    /// is killed and the wait throws.
    func status() async throws -> Int32 {
        try await process.waitForExit(within: 120)
        return process.terminationStatus
    }
}

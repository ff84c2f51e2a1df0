import Crypto
import Foundation
import MLKit
import MLKitCollections
import TestSupport
import Testing

/// 50 clients pull a collection of two models while its deployment is activated and rolled
/// back again and again. Every access ends with both models of one deployment, whole and
/// SHA-256-verified, never one model of each. `MLKIT_LOAD_SECONDS` sets the length (10 s by
/// default; `Benchmarks/server/deploy-under-load.sh` runs it for 60 s or more).
@Suite("Deploy under load", .timeLimit(.minutes(30)), .onOwnThreads)
struct DeployUnderLoadTests {
    static let seconds = ProcessInfo.processInfo.environment["MLKIT_LOAD_SECONDS"].flatMap(Double.init) ?? 10
    static let clients = 50

    @Test("50 clients pulling while a deployment is activated and rolled back each get one deployment or the other, whole and verified")
    func pullWhileSwitching() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let folder = try Binary.temporaryFolder("load")
        defer { try? FileManager.default.removeItem(at: folder) }

        // Two deployments of two models each, about 1 MB a model, all four files different.
        let classifier = try TextClassifier(contentsOf: Binary.headlinesModel)
        var files: [String: URL] = [:]
        var sums: [String: String] = [:]
        for name in ["a-x", "a-y", "b-x", "b-y"] {
            var metadata = ModelMetadata(shortDescription: "load test model", version: name)
            metadata.additional["padding"] = String(repeating: name, count: 250_000)
            let data = classifier.modelFileData(metadata: metadata)
            let file = folder.appendingPathComponent("\(name).mlkit")
            try data.write(to: file)
            files[name] = file
            sums[name] = LoadTally.hex(SHA256.hash(data: data))
        }
        let a = try await fixture.deploy("load", ["x": try #require(files["a-x"]), "y": try #require(files["a-y"])], version: "a")
        let b = try await fixture.deploy("load", ["x": try #require(files["b-x"]), "y": try #require(files["b-y"])], version: "b")
        let expected = [a.deploymentID: ["x": sums["a-x", default: ""], "y": sums["a-y", default: ""]],
                        b.deploymentID: ["x": sums["b-x", default: ""], "y": sums["b-y", default: ""]]]

        // The publisher: B becomes the default, A is rolled back to, and again, until the end.
        let end = ContinuousClock.now + .seconds(Self.seconds)
        let publisher = fixture.publisher
        let switching = Task {
            var switches = 0
            while ContinuousClock.now < end {
                _ = try await publisher.activate(deploymentID: b.deploymentID, in: "load")
                try await Task.sleep(for: .milliseconds(150))
                let back = try await publisher.rollback(collection: "load")
                #expect(back.deploymentID == a.deploymentID)
                try await Task.sleep(for: .milliseconds(150))
                switches += 2
            }
            return switches
        }

        // The clients: each access from its own cache, half of them from an empty one, so that
        // downloads run while the deployment changes; then one last access each.
        let server = fixture.server.url
        let results = try await withThrowingTaskGroup(of: LoadTally.self) { group in
            for client in 0..<Self.clients {
                group.addTask {
                    var tally = LoadTally()
                    let cache = folder.appendingPathComponent("client-\(client)")
                    var last = false
                    while !last {
                        last = ContinuousClock.now >= end
                        let fresh = tally.accesses % 2 == 1
                        let folder = fresh ? cache.appendingPathExtension("fresh") : cache
                        let collection = try await ModelCollection.beginAccessing(
                            identifier: "load", server: server, context: DeviceContext(), cacheFolder: folder, refreshPolicy: .always)
                        tally.accesses += 1
                        try tally.record(collection, expected: expected)
                        if fresh { try? FileManager.default.removeItem(at: folder) }
                    }
                    return tally
                }
            }
            var all: [LoadTally] = []
            for try await tally in group { all.append(tally) }
            return all
        }
        let switches = try await switching.value

        let total = results.reduce(into: LoadTally()) { $0.add($1) }
        #expect(results.count == Self.clients)
        #expect(total.mixed == 0, "accesses with a file of the other deployment, or not whole")
        #expect(total.stale == 0, "accesses that fell back to the cache")
        #expect(Set(total.deployments.keys).isSubset(of: Set(expected.keys)))
        #expect(total.deployments.count == 2, "clients saw both deployments: \(total.deployments)")
        print("deploy under load: \(Self.clients) clients, \(Int(Self.seconds)) s, \(switches) switches, \(total.accesses) accesses "
              + "(\(total.deployments[a.deploymentID] ?? 0) of A, \(total.deployments[b.deploymentID] ?? 0) of B), "
              + "\(total.mixed) mixed or torn, \(total.stale) stale")
    }
}

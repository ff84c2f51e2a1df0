import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MLKit
import MLKitCollections
import TestSupport
import Testing

/// Two `mlkit serve` processes on one PostgreSQL database, behind nginx with the committed
/// configuration (`deploy/nginx/mlkit.conf`), on loopback.
@Suite("Two replicas behind nginx", .needsPostgres, .needsNginx, .serialized, .timeLimit(.minutes(20)), .onOwnThreads)
struct ReplicasEndToEndTests {
    /// Two replicas on fixed ports (kept across restarts), nginx in front, a publisher through
    /// nginx.
    struct Replicas {
        let database: URL
        let servers: [ServerProcess]
        let balancer: Balancer
        let token: String
        let publisher: PublisherClient

        static func start() throws -> Replicas {
            let database = try PostgresCluster.createDatabase("e2e")
            var servers: [ServerProcess] = []
            for _ in 0..<2 {
                servers.append(try ServerProcess(start: false, database: database, port: try Balancer.freePort()))
            }
            let token = try servers[0].token(scope: "publish")
            for server in servers { try server.start() }
            let balancer = try Balancer(replicaPorts: servers.map(\.port))
            return Replicas(database: database, servers: servers, balancer: balancer, token: token,
                            publisher: try PublisherClient(server: balancer.url, token: token))
        }

        func tearDown() {
            balancer.stop()
            for server in servers { server.shutDown() }
        }

        /// Creates the collection, uploads the files and activates a deployment, all through
        /// the balancer.
        func deploy(_ collection: String, _ files: [String: URL], version: String) async throws -> Deployment {
            _ = try await publisher.saveCollection(collection, description: "replicas", modelIdentifiers: files.keys.sorted())
            var models: [String: PublisherClient.ModelReference] = [:]
            for (identifier, file) in files {
                models[identifier] = .init(sha256: try await publisher.uploadModel(at: file).sha256, version: version)
            }
            return try await publisher.createDeployment(collection: collection, models: models)
        }
    }

    /// A model file of about `megabytes` MB whose bytes depend on `name`.
    static func modelFile(_ name: String, megabytes: Int, in folder: URL) throws -> (url: URL, sha256: String) {
        let classifier = try TextClassifier(contentsOf: Binary.headlinesModel)
        var metadata = ModelMetadata(shortDescription: "replica test model", version: name)
        metadata.additional["padding"] = String(repeating: name, count: megabytes * 1_000_000 / max(name.count, 1))
        let data = classifier.modelFileData(metadata: metadata)
        let url = folder.appendingPathComponent("\(name).mlkit")
        try data.write(to: url)
        return (url, LoadTally.hex(SHA256.hash(data: data)))
    }

    /// The deployment `url` resolves `collection` to, asked directly.
    static func resolved(_ collection: String, at url: URL) async throws -> String {
        let (data, response) = try await URLSession.shared.data(from: url.appendingPathComponent("v1/collections/\(collection)"))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            return "status \((response as? HTTPURLResponse)?.statusCode ?? 0)"
        }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["deploymentID"] as? String ?? "?"
    }

    @Test("Deploy through nginx, resolve on each replica, resume a download on the other after kill -9, roll back on both")
    func deployResolveResumeRollBack() async throws {
        let replicas = try Replicas.start()
        defer { replicas.tearDown() }
        let folder = try Binary.temporaryFolder("replicas")
        defer { try? FileManager.default.removeItem(at: folder) }
        let one = try Self.modelFile("one", megabytes: 1, in: folder)
        let big = try Self.modelFile("big", megabytes: 24, in: folder)

        let first = try await replicas.deploy("fleet", ["m": one.url], version: "1")
        let second = try await replicas.deploy("fleet", ["m": big.url], version: "2")
        for server in replicas.servers {
            #expect(try await Self.resolved("fleet", at: server.url) == second.deploymentID, "replica \(server.port)")
        }
        #expect(try await Self.resolved("fleet", at: replicas.balancer.url) == second.deploymentID)

        // A download from replica 0, cut by its kill -9, resumed with Range on replica 1.
        let part = folder.appendingPathComponent("big.part")
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "--limit-rate", "2M", "-o", part.path,
                          replicas.servers[0].url.appendingPathComponent("v1/models/\(big.sha256)").absoluteString]
        try curl.startAlone()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, ((try? FileManager.default.attributesOfItem(atPath: part.path)[.size] as? Int) ?? 0) < 2_000_000 {
            try await Task.sleep(for: .milliseconds(50))
        }
        replicas.servers[0].kill()
        curl.waitUntilExit()
        let received = (try FileManager.default.attributesOfItem(atPath: part.path)[.size] as? Int) ?? 0
        let size = try Data(contentsOf: big.url).count
        #expect(curl.terminationStatus != 0, "the first download was cut")
        #expect(received > 0 && received < size, "received \(received) of \(size) bytes before the kill")
        let resume = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), [
            "-s", "-f", "-C", "-", "-H", "If-Range: \"\(big.sha256)\"", "-o", part.path, "-w", "%{http_code}",
            replicas.servers[1].url.appendingPathComponent("v1/models/\(big.sha256)").absoluteString,
        ])
        #expect(resume.status == 0)
        #expect(resume.stdout == "206")
        #expect(LoadTally.hex(SHA256.hash(data: try Data(contentsOf: part))) == big.sha256)

        // Replica 0 comes back on its port; a rollback through nginx is visible on both at once.
        try replicas.servers[0].start()
        let back = try await replicas.publisher.rollback(collection: "fleet")
        #expect(back.deploymentID == first.deploymentID)
        for server in replicas.servers {
            #expect(try await Self.resolved("fleet", at: server.url) == first.deploymentID, "replica \(server.port)")
        }
    }

    static let loadSeconds = ProcessInfo.processInfo.environment["MLKIT_LOAD_SECONDS"].flatMap(Double.init) ?? 10

    @Test("50 clients through nginx while deployments switch and a replica is killed and restarted: every access whole and verified")
    func loadWithAReplicaKilled() async throws {
        let replicas = try Replicas.start()
        defer { replicas.tearDown() }
        let folder = try Binary.temporaryFolder("replicas-load")
        defer { try? FileManager.default.removeItem(at: folder) }
        var files: [String: (url: URL, sha256: String)] = [:]
        for name in ["a-x", "a-y", "b-x", "b-y"] { files[name] = try Self.modelFile(name, megabytes: 1, in: folder) }
        func file(_ name: String) throws -> (url: URL, sha256: String) { try #require(files[name]) }
        let a = try await replicas.deploy("load", ["x": try file("a-x").url, "y": try file("a-y").url], version: "a")
        let b = try await replicas.deploy("load", ["x": try file("b-x").url, "y": try file("b-y").url], version: "b")
        let expected = [a.deploymentID: ["x": try file("a-x").sha256, "y": try file("a-y").sha256],
                        b.deploymentID: ["x": try file("b-x").sha256, "y": try file("b-y").sha256]]

        let start = ContinuousClock.now
        let end = start + .seconds(Self.loadSeconds)
        let publisher = replicas.publisher
        // A publisher call under way on the replica that is killed is cut, and nginx answers 502
        // (it does not resend a POST that reached a replica). Both calls name their target, so
        // repeating one that was cut is safe, as docs/deploying.md tells publishers to do.
        func repeatingIfCut<T: Sendable>(_ call: @Sendable () async throws -> T) async throws -> T {
            for _ in 0..<5 {
                do {
                    return try await call()
                } catch let error as ModelCollectionError where [502, 503].contains(error.statusCode ?? 0) || error.code == .network {
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            return try await call()
        }
        let switching = Task {
            var switches = 0
            while ContinuousClock.now < end {
                _ = try await repeatingIfCut { try await publisher.activate(deploymentID: b.deploymentID, in: "load") }
                try await Task.sleep(for: .milliseconds(150))
                _ = try await repeatingIfCut { try await publisher.rollback(collection: "load", to: a.deploymentID) }
                try await Task.sleep(for: .milliseconds(150))
                switches += 2
            }
            return switches
        }
        // Replica 1 dies with kill -9 a third of the way in, and starts again at two thirds.
        let victim = replicas.servers[1]
        let killing = Task.detached {
            try await Task.sleep(until: start + .seconds(Self.loadSeconds / 3))
            victim.kill()
            try await Task.sleep(until: start + .seconds(Self.loadSeconds * 2 / 3))
            try victim.start()
        }

        let server = replicas.balancer.url
        let results = try await withThrowingTaskGroup(of: LoadTally.self) { group in
            for client in 0..<50 {
                group.addTask {
                    var tally = LoadTally()
                    let cache = folder.appendingPathComponent("client-\(client)")
                    var last = false
                    while !last {
                        last = ContinuousClock.now >= end
                        let fresh = tally.accesses % 2 == 1
                        let folder = fresh ? cache.appendingPathExtension("fresh") : cache
                        tally.accesses += 1
                        do {
                            let collection = try await ModelCollection.beginAccessing(
                                identifier: "load", server: server, context: DeviceContext(), cacheFolder: folder,
                                refreshPolicy: .always)
                            try tally.record(collection, expected: expected)
                            if last { tally.lastSucceeded = true }
                        } catch let error as ModelCollectionError {
                            // A transfer cut by the kill: the library keeps the partial file and
                            // resumes it on the next access.
                            // An access from an empty cache reports a failed fetch as
                            // `modelCollection`; what it failed on is the underlying code.
                            let code = error.code == .modelCollection ? error.underlyingCode ?? error.code : error.code
                            tally.errors["\(code)", default: 0] += 1
                            if last { last = false }
                            continue
                        }
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
        try await killing.value

        let total = results.reduce(into: LoadTally()) { $0.add($1) }
        #expect(results.allSatisfy { $0.lastSucceeded }, "every client ends with a verified collection")
        #expect(total.mixed == 0, "accesses with a file of the other deployment, or not whole")
        #expect(Set(total.errors.keys).isSubset(of: ["network"]), "errors the library does not resume: \(total.errors)")
        #expect(total.deployments.count == 2, "clients saw both deployments: \(total.deployments)")
        print("replicas under load: 50 clients through nginx, \(Int(Self.loadSeconds)) s, \(switches) switches, "
              + "\(total.accesses) accesses (\(total.deployments[a.deploymentID] ?? 0) of A, \(total.deployments[b.deploymentID] ?? 0) of B), "
              + "\(total.mixed) mixed or torn, \(total.stale) stale, errors \(total.errors)")
    }
}

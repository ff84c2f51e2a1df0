import Foundation
import GRDB
import NIOConcurrencyHelpers
import TestSupport
import Testing

/// `kill -9` of `mlkit serve` while it writes: uploads, deployments, activations and
/// rollbacks under way. After a restart the SQLite store passes `integrity_check`, no partial
/// model file is visible or served, and every deployment is complete or absent.
@Suite("Crashes: kill -9 of mlkit serve", .timeLimit(.minutes(10)), .onOwnThreads)
struct CrashTests {
    /// Rounds of load and kill; `MLKIT_CRASH_ROUNDS` sets more.
    static let rounds = ProcessInfo.processInfo.environment["MLKIT_CRASH_ROUNDS"].flatMap(Int.init) ?? 8

    @Test("kill -9 during uploads, deployments, activations and rollbacks leaves a store that is intact, with no partial model and no partial deployment")
    func killDuringWrites() async throws {
        let server = try ServerProcess()
        let token = try server.token(scope: "publish")
        var client = HTTPClient(base: server.url)
        try await ServerFixture.createCollection(client, "crash", models: ["a", "b"], token: token)
        var shas: [String] = []
        for version in 0..<4 {
            shas.append(try await ServerFixture.upload(client, ServerFixture.model(version: "crash-\(version)"), token: token))
        }
        var cut = 0, answered = 0
        for round in 0..<Self.rounds {
            let load = Load(client: client, token: token, shas: shas, round: round)
            async let results = load.run()
            // Once the publishers are under way (a few answers in), at a random moment.
            let started = ContinuousClock.now
            while load.answers.withLockedValue({ $0 }) < 4, ContinuousClock.now - started < .seconds(30) {
                try await Task.sleep(for: .milliseconds(5))
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...400)))
            let killed = ContinuousClock.now
            server.kill()
            let (done, failedStarts) = await results
            answered += done
            cut += failedStarts.filter { $0 < killed }.count

            // Before the restart: whatever sits in models/ is a whole file, named by its SHA-256.
            try Self.expectWholeModelFiles(in: server.dataFolder)
            try server.restart()
            client = HTTPClient(base: server.url)
            #expect(try FileManager.default.contentsOfDirectory(
                atPath: server.dataFolder.appendingPathComponent("uploads").path).isEmpty, "round \(round): uploads/ is emptied")
            try Self.expectIntactStore(server.dataFolder, round: round)
            try await Self.expectServedWhole(client, server.dataFolder, round: round)
        }
        #expect(cut > 0, "some requests were under way at the kills")
        print("crash: \(Self.rounds) kills, \(answered) requests answered, \(cut) cut by the kill")
        server.stop()
    }

    /// Every file in `models/` has the SHA-256 its name says.
    static func expectWholeModelFiles(in dataFolder: URL) throws {
        let folder = dataFolder.appendingPathComponent("models")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        guard !names.isEmpty else { return }
        let sums = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                        ["sha256sum"] + names.map { folder.appendingPathComponent($0).path })
        for line in sums.stdout.split(separator: "\n") {
            let sum = line.prefix(64), name = line.split(separator: "/").last.map(String.init) ?? ""
            #expect(String(sum) == name, "models/\(name) is not whole: its SHA-256 is \(sum)")
        }
    }

    /// The SQLite store: `integrity_check`, foreign keys, and every deployment whole.
    static func expectIntactStore(_ dataFolder: URL, round: Int) throws {
        var configuration = Configuration()
        configuration.readonly = true
        let database = try DatabaseQueue(path: dataFolder.appendingPathComponent("mlkit.sqlite").path,
                                         configuration: configuration)
        try database.read { db in
            #expect(try String.fetchAll(db, sql: "PRAGMA integrity_check") == ["ok"], "round \(round)")
            #expect(try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").isEmpty, "round \(round)")
            let collections = try Row.fetchAll(db, sql: "SELECT identifier, modelIdentifiers FROM collection")
            var identifiers: [String: Set<String>] = [:]
            for row in collections {
                let list: String = row["modelIdentifiers"]
                identifiers[row["identifier"]] = Set(try JSONDecoder().decode([String].self, from: Data(list.utf8)))
            }
            for deployment in try Row.fetchAll(db, sql: "SELECT id, collection, status, isDefault FROM deployment") {
                let id: String = deployment["id"], collection: String = deployment["collection"]
                let models = try String.fetchAll(db, sql: "SELECT modelIdentifier FROM deploymentModel WHERE deploymentID = ?",
                                                 arguments: [id])
                #expect(Set(models) == identifiers[collection], "round \(round): deployment \(id) has models \(models)")
                let events = try String.fetchAll(db, sql: "SELECT status FROM deploymentEvent WHERE deploymentID = ? ORDER BY sequence",
                                                 arguments: [id])
                #expect(events.first == "draft" && events.last == deployment["status"],
                        "round \(round): deployment \(id) is \(deployment["status"] as String) after \(events)")
            }
            let defaults = try Int.fetchAll(db, sql: """
                SELECT COUNT(*) FROM deployment WHERE status = 'active' AND isDefault GROUP BY collection
                """)
            #expect(defaults.allSatisfy { $0 <= 1 }, "round \(round): one active default deployment at most")
            for file in try Row.fetchAll(db, sql: "SELECT sha256, size FROM modelFile") {
                let sha: String = file["sha256"], size: Int64 = file["size"]
                let attributes = try? FileManager.default.attributesOfItem(
                    atPath: dataFolder.appendingPathComponent("models/\(sha)").path)
                #expect((attributes?[.size] as? NSNumber)?.int64Value == size, "round \(round): model \(sha) is recorded but not whole")
            }
        }
    }

    /// What the restarted server serves: the resolved deployment, each of its files whole.
    static func expectServedWhole(_ client: HTTPClient, _ dataFolder: URL, round: Int) async throws {
        let resolved = try await client.send("GET", "/v1/collections/crash")
        guard resolved.status == 200 else {
            #expect(resolved.status == 404, "round \(round): \(resolved.status)")
            return
        }
        let entries = try #require(resolved.json["entries"] as? [String: [String: Any]])
        #expect(Set(entries.keys) == ["a", "b"], "round \(round)")
        for (_, entry) in entries {
            let sha = try #require(entry["sha256"] as? String)
            let download = try await client.send("GET", "/v1/models/\(sha)")
            #expect(download.status == 200 && download.body.count == entry["size"] as? Int, "round \(round)")
            #expect(try ServerFixture.sha256(download.body) == sha, "round \(round)")
        }
    }

    /// Publishers at work until the server goes: two uploading 3 MB models, four deploying,
    /// activating and rolling back.
    final class Load: Sendable {
        let client: HTTPClient
        let token: String
        let shas: [String]
        let round: Int
        /// How many requests have been answered so far.
        let answers = NIOLockedValueBox(0)

        init(client: HTTPClient, token: String, shas: [String], round: Int) {
            self.client = client
            self.token = token
            self.shas = shas
            self.round = round
        }

        /// Runs until every worker's request fails; returns the requests answered, and when
        /// each worker sent the request that failed.
        func run() async -> (answered: Int, failedStarts: [ContinuousClock.Instant]) {
            await withTaskGroup(of: (Int, ContinuousClock.Instant).self) { group in
                for worker in 0..<2 {
                    group.addTask { [self] in
                        var answered = 0
                        for index in 0... {
                            let model = ServerFixture.model(version: "r\(round)-w\(worker)-\(index)", padding: 3_000_000)
                            let start = ContinuousClock.now
                            guard (try? await client.send("POST", "/v1/models", body: model, token: token)) != nil else {
                                return (answered, start)
                            }
                            answered += 1
                            answers.withLockedValue { $0 += 1 }
                        }
                        return (answered, .now)
                    }
                }
                for _ in 0..<4 {
                    group.addTask { [self] in
                        var answered = 0
                        var deployments: [String] = []
                        while true {
                            let start = ContinuousClock.now
                            let answer: HTTPAnswer?
                            switch Int.random(in: 0..<4) {
                            case 0 where !deployments.isEmpty:
                                answer = try? await client.send(
                                    "POST", "/v1/collections/crash/deployments/\(deployments.randomElement()!)/activate", token: token)
                            case 1:
                                answer = try? await client.send("POST", "/v1/collections/crash/rollback", token: token)
                            default:
                                let body: [String: Any] = [
                                    "models": ["a": ["sha256": shas.randomElement()!], "b": ["sha256": shas.randomElement()!]],
                                    "activate": Bool.random(),
                                ]
                                answer = try? await client.send("POST", "/v1/collections/crash/deployments", json: body, token: token)
                                if let id = answer?.json["deploymentID"] as? String { deployments.append(id) }
                            }
                            guard let answer else { return (answered, start) }
                            #expect(answer.status < 500, "\(answer.status) \(answer.errorMessage)")
                            answered += 1
                            answers.withLockedValue { $0 += 1 }
                        }
                    }
                }
                var total = (answered: 0, failedStarts: [ContinuousClock.Instant]())
                for await (answered, start) in group {
                    total.answered += answered
                    total.failedStarts.append(start)
                }
                return total
            }
        }
    }
}

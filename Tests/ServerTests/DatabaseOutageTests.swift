import Foundation
import Hummingbird
import HummingbirdTesting
@testable import MLKitServer
import TestSupport
import Testing

/// A replica whose PostgreSQL database goes away: publisher calls answer 503 at once,
/// resolutions and downloads come from its caches (and say so), and it recovers by itself.
@Suite("Losing the shared database", .needsPostgres, .timeLimit(.minutes(10)), .onOwnThreads)
struct DatabaseOutageTests {
    @Test("Without the database: 503 for publishers, cached answers for devices, and recovery when it returns")
    func outageAndRecovery() async throws {
        let cluster = try PostgresCluster(owned: true)
        defer { cluster.remove() }
        let database = try cluster.createDatabase("outage")
        let folder = try ChildProcess.temporaryFolder("replica")
        defer { try? FileManager.default.removeItem(at: folder) }
        let harness = try await _InProcessCollectionServer(dataFolder: folder, database: database)
        let token = try await InProcessServer(dataFolder: folder, database: database).token(scope: "publish")
        do {
            try await Application(responder: harness.responder).test(.router) { router in
                let client = RouterClient(client: router, reached: nil)
                try await ServerFixture.createCollection(client, "news", models: ["topic"], token: token)
                let model = ServerFixture.model(version: "1")
                let sha = try await ServerFixture.upload(client, model, token: token)
                let deployed = try await ServerFixture.deploy(client, "news", models: ["topic": sha], token: token)
                #expect(try await ServerFixture.resolved(client, "news") == deployed)
                let health = try await client.send("GET", "/healthz")
                #expect(health.json["database"] as? String == "ok")
                #expect(health.json["store"] as? String == "postgres")

                try cluster.stop()

                let resolved = try await client.send("GET", "/v1/collections/news")
                #expect(resolved.status == 200)
                #expect(resolved.json["deploymentID"] as? String == deployed)
                #expect(resolved.header("X-MLKit-Database") == "unavailable")
                let download = try await client.send("GET", "/v1/models/\(sha)", headers: ["Range": "bytes=10-19"])
                #expect(download.status == 206)
                #expect(download.body == model[10..<20])
                #expect(download.header("X-MLKit-Database") == "unavailable")
                let degraded = try await client.send("GET", "/healthz")
                #expect(degraded.status == 200)
                #expect(degraded.json["status"] as? String == "degraded")
                #expect(degraded.json["database"] as? String == "unavailable")

                let clock = ContinuousClock()
                let started = clock.now
                let refused = try await ServerFixture.deployAnswer(client, "news", sha: sha, token: token)
                #expect(refused.status == 503)
                #expect(refused.header("Retry-After") == "1")
                #expect(refused.errorMessage.contains("unavailable"))
                let upload = try await client.send("POST", "/v1/models", body: ServerFixture.model(version: "2"), token: token)
                #expect(upload.status == 503)
                #expect(clock.now - started < .seconds(2), "publisher calls are refused at once")
                // A collection this replica never cached cannot be answered.
                let unknown = try await client.send("GET", "/v1/collections/other")
                #expect(unknown.status == 503)

                try cluster.start()
                let deadline = clock.now + .seconds(20)
                var recovered = false
                while clock.now < deadline {
                    let answer = try await client.send("GET", "/healthz")
                    if answer.json["database"] as? String == "ok" {
                        recovered = true
                        break
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(recovered, "the replica noticed the database's return")
                let again = try await ServerFixture.deployAnswer(client, "news", sha: sha, token: token)
                #expect(again.status == 201, "\(again.status) \(again.errorMessage)")
                let fresh = try await client.send("GET", "/v1/collections/news")
                #expect(fresh.header("X-MLKit-Database") == nil)
                #expect(fresh.json["deploymentID"] as? String == again.json["deploymentID"] as? String)
            }
        } catch {
            await harness.close()
            throw error
        }
        await harness.close()
    }
}

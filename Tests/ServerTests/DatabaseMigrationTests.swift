import Foundation
import TestSupport
import Testing

/// `mlkit serve migrate`: the shared database's schema under an advisory lock, and the copy of
/// an SQLite data folder into PostgreSQL.
@Suite("Migrating to PostgreSQL", .needsPostgres, .timeLimit(.minutes(10)), .onOwnThreads)
struct DatabaseMigrationTests {
    @Test("Replicas that start together migrate once: the others wait for the advisory lock and find nothing to do")
    func concurrentMigrations() async throws {
        let database = try PostgresCluster.createDatabase("migrate")
        let results = try await withThrowingTaskGroup(of: ChildProcess.Result.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try ChildProcess.run(ServerProcess.binary, ["serve", "migrate", "--database", database.absoluteString])
                }
            }
            var all: [ChildProcess.Result] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        let outputs = results.map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(outputs.filter { $0 == "schema version 1: applied 1" }.count == 1, "\(outputs)")
        #expect(outputs.filter { $0 == "schema version 1: up to date" }.count == 3, "\(outputs)")
        #expect(try PostgresCluster.psql(database, "SELECT string_agg(version::text, ',') FROM mlkit_migration") == "1")
    }

    @Test("An SQLite data folder is copied into PostgreSQL with its model files, and a replica serves it as before")
    func copyFromSQLite() async throws {
        // A single SQLite server with a collection, two deployments (one rolled back) and a token.
        let sqlite = try ServerProcess()
        defer { sqlite.shutDown() }
        let client = HTTPClient(base: sqlite.url)
        let token = try sqlite.token(scope: "publish")
        try await ServerFixture.createCollection(client, "news", models: ["topic"], token: token)
        let models = [ServerFixture.model(version: "1", padding: 1_500_000), ServerFixture.model(version: "2")]
        var shas: [String] = []
        var deployments: [String] = []
        for model in models {
            let sha = try await ServerFixture.upload(client, model, token: token)
            shas.append(sha)
            deployments.append(try await ServerFixture.deploy(client, "news", models: ["topic": sha], token: token))
        }
        let rolledBack = try await client.send("POST", "/v1/collections/news/rollback", token: token)
        #expect(rolledBack.json["deploymentID"] as? String == deployments[0])
        let historyBefore = try await client.send("GET", "/v1/collections/news/deployments", token: token)
        #expect(sqlite.stop() == 0)

        let database = try PostgresCluster.createDatabase("copy")
        let copy = try ChildProcess.run(ServerProcess.binary, [
            "serve", "migrate", "--from", sqlite.dataFolder.path, "--to", database.absoluteString,
        ])
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(copy.stdout.contains("copied 1 collections, 2 deployments, 2 model files"), "\(copy.stdout)")
        #expect(copy.stdout.contains("every SHA-256 verified"))
        #expect(copy.stdout.contains("1 tokens"))

        // A replica over the database: the same answers, the same token, the same bytes.
        let replica = try ServerProcess(start: false, database: database)
        defer { replica.shutDown() }
        try replica.start()
        let shared = HTTPClient(base: replica.url)
        #expect(try await ServerFixture.resolved(shared, "news") == deployments[0])
        let historyAfter = try await shared.send("GET", "/v1/collections/news/deployments", token: token)
        #expect(historyAfter.status == 200)
        #expect(historyAfter.body == historyBefore.body)
        for (model, sha) in zip(models, shas) {
            let download = try await shared.send("GET", "/v1/models/\(sha)")
            #expect(download.body == model)
        }
        let newer = try await ServerFixture.deploy(shared, "news", models: ["topic": shas[1]], token: token)
        #expect(try await ServerFixture.resolved(shared, "news") == newer)

        // A second copy into a database that holds data is refused, and changes nothing.
        let again = try ChildProcess.run(ServerProcess.binary, [
            "serve", "migrate", "--from", sqlite.dataFolder.path, "--to", database.absoluteString,
        ])
        #expect(again.status == 65)
        #expect(again.stderr.contains("already holds"))
    }

    @Test("A bad database URL is a usage error that names the part at fault and never shows the password")
    func badURLs() throws {
        for (url, part) in [("mysql://u@h/db", "scheme"), ("postgres://h/db", "user"), ("postgres://u:secret@h", "database"),
                            ("postgres://u:secret@h/db?sslmode=maybe", "sslmode")] {
            let result = try ChildProcess.run(ServerProcess.binary, ["serve", "migrate", "--database", url])
            #expect(result.status == 64, "\(url)")
            #expect(result.stderr.contains(part), "\(url): \(result.stderr)")
            #expect(!result.stderr.contains("secret"), "\(url): \(result.stderr)")
        }
        let unreachable = try ChildProcess.run(ServerProcess.binary, [
            "serve", "token", "create", "--scope", "publish", "--database", "postgres://mlkit@127.0.0.1:1/none?sslmode=disable",
        ])
        #expect(unreachable.status == 69, "\(unreachable.stderr)")
    }
}

import Foundation
@testable import MLKitServer
import TestSupport
import Testing

/// Several replicas over one PostgreSQL database, in this process: what one replica commits,
/// every other serves at once, and rollouts answer alike everywhere.
@Suite("Replicas over one PostgreSQL database", .needsPostgres, .timeLimit(.minutes(10)), .onOwnThreads)
struct ReplicaTests {
    @Test("A deployment or rollback made through one replica is served by the other as soon as the call returns")
    func changesAreVisibleAtOnce() async throws {
        try await ServerFixture.replicas(2) { replicas, token, _ in
            let (first, second) = (replicas[0], replicas[1])
            try await ServerFixture.createCollection(first, "news", models: ["topic"], token: token)
            var shas: [String] = []
            for version in 0..<4 {
                shas.append(try await ServerFixture.upload(first, ServerFixture.model(version: "v\(version)"), token: token))
            }
            // Both replicas have the collection cached before each change.
            var delays: [Duration] = []
            let clock = ContinuousClock()
            for round in 0..<12 {
                _ = try await ServerFixture.resolved(first, "news")
                _ = try await ServerFixture.resolved(second, "news")
                let publisher = round % 2 == 0 ? first : second
                let reader = round % 2 == 0 ? second : first
                let expected: String
                if round % 3 == 2 {
                    let answer = try await publisher.send("POST", "/v1/collections/news/rollback", token: token)
                    #expect(answer.status == 200, "rollback: \(answer.status) \(answer.errorMessage)")
                    expected = answer.json["deploymentID"] as? String ?? ""
                } else {
                    expected = try await ServerFixture.deploy(publisher, "news", models: ["topic": shas[round % shas.count]],
                                                              token: token)
                }
                let returned = clock.now
                // The very next request to the other replica already sees it.
                #expect(try await ServerFixture.resolved(reader, "news") == expected, "round \(round)")
                delays.append(clock.now - returned)
            }
            let slowest = delays.max() ?? .zero
            print("cross-replica visibility: first read after the publish call, slowest \(slowest), of \(delays.count)")
        }
    }

    @Test("Rollout buckets and targeting give the same answer on every replica")
    func rolloutsAgree() async throws {
        try await ServerFixture.replicas(2) { replicas, token, _ in
            try await ServerFixture.createCollection(replicas[0], "split", models: ["m"], token: token)
            let base = try await ServerFixture.upload(replicas[0], ServerFixture.model(version: "base"), token: token)
            let half = try await ServerFixture.upload(replicas[0], ServerFixture.model(version: "half"), token: token)
            let french = try await ServerFixture.upload(replicas[0], ServerFixture.model(version: "fr"), token: token)
            let baseID = try await ServerFixture.deploy(replicas[0], "split", models: ["m": base], token: token)
            let halfID = try await ServerFixture.deploy(replicas[1], "split", models: ["m": half], rollout: 50, token: token)
            let frenchID = try await ServerFixture.deploy(replicas[0], "split", models: ["m": french],
                                                          targeting: ["languageCodes": ["fr"]], token: token)
            var counts: [String: Int] = [:]
            for n in 0..<300 {
                let language = n % 4 == 0 ? "fr" : "en"
                let query = "installationID=device-\(n)&languageCode=\(language)"
                let one = try await ServerFixture.resolved(replicas[0], "split", query: query)
                let two = try await ServerFixture.resolved(replicas[1], "split", query: query)
                #expect(one == two, "device-\(n) (\(language))")
                counts[one, default: 0] += 1
            }
            #expect(counts[frenchID] == 75)
            #expect((85...140).contains(counts[halfID] ?? 0), "\(counts)")
            #expect((counts[baseID] ?? 0) + (counts[halfID] ?? 0) == 225)
        }
    }

    @Test("A model uploaded through one replica downloads from the other, whole or in ranges, with its ETag")
    func downloadsFromTheDatabase() async throws {
        try await ServerFixture.replicas(2) { replicas, token, database in
            let model = ServerFixture.model(version: "big", padding: 3 << 20)
            let sha = try await ServerFixture.upload(replicas[0], model, token: token)
            #expect(sha == (try ServerFixture.sha256(model)))
            let range = try await replicas[1].send("GET", "/v1/models/\(sha)", headers: ["Range": "bytes=1000-2999"])
            #expect(range.status == 206)
            #expect(range.body == model[1000..<3000])
            #expect(range.header("ETag") == "\"\(sha)\"")
            let whole = try await replicas[1].send("GET", "/v1/models/\(sha)")
            #expect(whole.status == 200)
            #expect(whole.body == model)
            let notModified = try await replicas[1].send("GET", "/v1/models/\(sha)", headers: ["If-None-Match": "\"\(sha)\""])
            #expect(notModified.status == 304)
            // In the database: in chunks of 1 MiB, never one value.
            let chunks = try PostgresCluster.psql(database, "SELECT count(*) FROM model_chunk WHERE sha256 = '\(sha)'")
            #expect(Int(chunks) == (model.count + PostgresSchema.chunkSize - 1) / PostgresSchema.chunkSize)
        }
    }
}

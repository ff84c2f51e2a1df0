import Foundation
import TestSupport
import Testing

/// Many clients at once.
@Suite("Load", .timeLimit(.minutes(10)), .onOwnThreads)
struct LoadTests {
    @Test("50 clients download a model at once, each getting every byte")
    func fiftyConcurrentDownloads() async throws {
        let server = try ServerProcess()
        let token = try server.token(scope: "publish")
        let model = ServerFixture.model(version: "load", padding: 2_000_000)
        let sha = try await ServerFixture.upload(HTTPClient(base: server.url), model, token: token)

        let results = try await withThrowingTaskGroup(of: (Int, Data).self) { group in
            for _ in 0..<50 {
                // One session each: 50 separate connections.
                let client = HTTPClient(base: server.url)
                group.addTask {
                    let answer = try await client.send("GET", "/v1/models/\(sha)")
                    return (answer.status, answer.body)
                }
            }
            var all: [(Int, Data)] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0.0 == 200 && $0.1 == model })
        #expect(try await HTTPClient(base: server.url).send("GET", "/healthz").status == 200)
        server.stop()
    }
}

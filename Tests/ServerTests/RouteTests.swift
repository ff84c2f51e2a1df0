import Foundation
import HTTPTypes
import MLKitEncryption
@testable import MLKitServer
import TestSupport
import Testing

/// Every endpoint of the router, reached in process through HummingbirdTesting: its usual
/// answer, and the answers every path shares (404, 405 with `Allow`, 400 for a broken path).
@Suite("Routes, in process", .timeLimit(.minutes(10)), .onOwnThreads)
struct RouteTests {
    @Test("Every endpoint answers in process, each with a status it declares")
    func everyEndpoint() async throws {
        let reached = ReachedEndpoints()
        try await ServerFixture.inProcess(noting: reached) { server, client, token in
            let health = try await client.send("GET", "/healthz")
            #expect(health.status == 200 && health.json["status"] as? String == "ok")
            let healthHead = try await client.send("HEAD", "/healthz")
            #expect(healthHead.status == 200 && healthHead.body.isEmpty)

            #expect(try await client.send("GET", "/v1/collections", token: token).json["collections"] as? [Any] != nil)
            let created = try await client.send("PUT", "/v1/collections/routes", json: ["modelIdentifiers": ["m"]], token: token)
            #expect(created.status == 201)
            let updated = try await client.send("PUT", "/v1/collections/routes",
                                                json: ["description": "d", "modelIdentifiers": ["m"]], token: token)
            #expect(updated.status == 200 && updated.json["description"] as? String == "d")

            let model = ServerFixture.model(version: "routes")
            let sha = try await ServerFixture.upload(client, model, token: token)
            let draft = try await ServerFixture.deploy(client, "routes", models: ["m": sha], activate: false, token: token)
            let activated = try await client.send("POST", "/v1/collections/routes/deployments/\(draft)/activate", token: token)
            #expect(activated.status == 200 && activated.json["status"] as? String == "active")

            let resolved = try await client.send("GET", "/v1/collections/routes")
            #expect(resolved.status == 200 && resolved.json["deploymentID"] as? String == draft)
            let eTag = try #require(resolved.header("ETag"))
            #expect(try await client.send("GET", "/v1/collections/routes", headers: ["If-None-Match": eTag]).status == 304)

            let download = try await client.send("GET", "/v1/models/\(sha)")
            #expect(download.status == 200 && download.body == model)
            let range = try await client.send("GET", "/v1/models/\(sha)", headers: ["Range": "bytes=0-7"])
            #expect(range.status == 206 && range.body == model.prefix(8))
            let head = try await client.send("HEAD", "/v1/models/\(sha)")
            #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == String(model.count))

            let second = try await ServerFixture.deploy(client, "routes", models: ["m": sha], token: token)
            let rolledBack = try await client.send("POST", "/v1/collections/routes/rollback", token: token)
            #expect(rolledBack.status == 200 && rolledBack.json["deploymentID"] as? String == draft)
            let history = try await client.send("GET", "/v1/collections/routes/deployments", token: token)
            let listed = (history.json["deployments"] as? [[String: Any]])?.compactMap { $0["deploymentID"] as? String }
            #expect(listed == [second, draft])

            let key = ModelKey.generate()
            let registered = try await client.send("PUT", "/v1/collections/routes/keys/\(key.identifier)",
                                                   body: key.keyFileData(), token: token)
            #expect(registered.status == 201)
            let read = try await server.token(scope: "read", collection: "routes")
            let served = try await client.send("GET", "/v1/keys/\(key.identifier)", token: read)
            #expect(served.status == 200 && served.body == key.keyFileData())
        }
        let all = Set(Endpoint.all.map { "\($0.method.rawValue) \($0.path)" })
        #expect(reached.all == all, "not reached: \(all.subtracting(reached.all).sorted())")
    }

    @Test("A path with no endpoint is 404, one with other methods 405 with Allow, a broken one 400")
    func sharedAnswers() async throws {
        try await ServerFixture.inProcess { _, client, token in
            let nowhere = try await client.send("GET", "/v1/nowhere")
            #expect(nowhere.status == 404 && nowhere.errorMessage == "no endpoint at /v1/nowhere")
            let cases: [(method: String, path: String, allow: String)] = [
                ("DELETE", "/healthz", "GET, HEAD"),
                ("POST", "/v1/collections", "GET"),
                ("DELETE", "/v1/collections/c", "GET, PUT"),
                ("PUT", "/v1/collections/c/deployments", "GET, POST"),
                ("GET", "/v1/collections/c/rollback", "POST"),
                ("GET", "/v1/collections/c/deployments/\(UUID().uuidString)/activate", "POST"),
                ("GET", "/v1/collections/c/keys/k", "PUT"),
                ("GET", "/v1/models", "POST"),
                ("PUT", "/v1/models/\(String(repeating: "a", count: 64))", "GET, HEAD"),
                ("POST", "/v1/keys/k", "GET"),
                ("PROPFIND", "/healthz", "GET, HEAD"),
            ]
            for (method, path, allow) in cases {
                let answer = try await client.send(method, path, token: token)
                #expect(answer.status == 405, "\(method) \(path)")
                #expect(answer.header("Allow") == allow, "\(method) \(path)")
                #expect(answer.errorMessage == "\(method) is not allowed here (allowed: \(allow))")
            }
            // Segments are matched percent-decoded; an invalid collection is a 400 whatever the method.
            #expect(try await client.send("GET", "/v1/%63ollections", token: token).status == 200)
            #expect(try await client.send("DELETE", "/v1/collections/..%2F").status == 400)
            let broken = try await client.send("GET", "/v1/models/%zz")
            #expect(broken.status == 400 && broken.errorMessage == "the path segment '%zz' is not valid percent-encoding")
            #expect(try await client.send("GET", "//v1//collections/", token: token).status == 200)
        }
    }
}

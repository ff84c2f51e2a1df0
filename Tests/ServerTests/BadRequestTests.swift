import Foundation
import TestSupport
import Testing

/// Bad requests get the right status and a JSON message, and the server keeps serving.
@Suite("Bad requests and tokens", .timeLimit(.minutes(10)), .onOwnThreads)
struct BadRequestTests {
    @Test("Path traversal, malformed JSON, unknown names, invalid and oversized models")
    func badRequests() async throws {
        let (server, client, token) = try ServerFixture.start(arguments: ["--max-upload-size", "64K"])
        let port = try #require(server.url.port)
        try await ServerFixture.createCollection(client, "bad", models: ["m"], token: token)

        // Path traversal, percent-encoded (URLSession keeps it) and raw (sent by hand).
        for path in ["/v1/models/..%2Fmlkit.sqlite", "/v1/models/..%2F..%2F..%2Fetc%2Fpasswd",
                     "/v1/collections/..%2F..%2Fetc", "/v1/collections/%2E%2E", "/v1/keys/..%2Fmlkit.sqlite"] {
            let answer = try await client.send("GET", path, token: token)
            #expect(answer.status == 400, "\(path)")
            #expect(!answer.errorMessage.isEmpty)
        }
        for path in ["/v1/models/../mlkit.sqlite", "/v1/models/../../../../etc/passwd", "/v1/models/%2e%2e/mlkit.sqlite",
                     "/../../etc/passwd"] {
            let answer = try RawConnection.request(port: port, "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n")
            #expect(answer.status == 400 || answer.status == 404, "\(path): \(answer.text.prefix(80))")
            #expect(!answer.text.contains("SQLite format") && !answer.text.contains("root:"), "\(path)")
        }

        // Malformed JSON, a wrong type and an unknown field: 400 naming the problem.
        let malformed = try await client.send("PUT", "/v1/collections/bad", body: Data("{\"modelIdentifiers\": [".utf8),
                                              token: token)
        #expect(malformed.status == 400)
        #expect(malformed.errorMessage.contains("malformed JSON"))
        let wrongType = try await client.send("PUT", "/v1/collections/bad", json: ["modelIdentifiers": "m"], token: token)
        #expect(wrongType.status == 400)
        #expect(wrongType.errorMessage.contains("modelIdentifiers"))
        let unknownField = try await client.send("PUT", "/v1/collections/bad", json: ["modelIdentifiers": ["m"], "colour": 1],
                                                 token: token)
        #expect(unknownField.status == 400)
        #expect(unknownField.errorMessage.contains("colour"))
        let badIdentifier = try await client.send("PUT", "/v1/collections/bad", json: ["modelIdentifiers": ["a/b"]], token: token)
        #expect(badIdentifier.status == 400)

        // Unknown collection, deployment, model; an endpoint that does not exist; a wrong method.
        #expect(try await client.send("GET", "/v1/collections/nowhere").status == 404)
        let unknownDeploy = try await client.send("POST", "/v1/collections/nowhere/deployments",
                                                  json: ["models": [:] as [String: Any]], token: token)
        #expect(unknownDeploy.status == 404)
        let noSuchDeployment = try await client.send("POST", "/v1/collections/bad/deployments/\(UUID().uuidString)/activate",
                                                     token: token)
        #expect(noSuchDeployment.status == 404)
        #expect(try await client.send("GET", "/v1/models/\(String(repeating: "a", count: 64))").status == 404)
        #expect(try await client.send("GET", "/v1/nothing").status == 404)
        let wrongMethod = try await client.send("DELETE", "/v1/models/\(String(repeating: "a", count: 64))")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET, HEAD")

        // Invalid model files: 422 with the reason; nothing is stored.
        let notAModel = try await client.send("POST", "/v1/models", body: Data("hello, world".utf8), token: token)
        #expect(notAModel.status == 422)
        #expect(notAModel.errorMessage.contains("MLKITMOD"))
        var corrupt = ServerFixture.model(version: "corrupt")
        corrupt[corrupt.count / 2] ^= 0xFF
        let corrupted = try await client.send("POST", "/v1/models", body: corrupt, token: token)
        #expect(corrupted.status == 422)
        #expect(corrupted.errorMessage.contains("checksum"))
        let truncated = try await client.send("POST", "/v1/models", body: ServerFixture.model(version: "t").prefix(5000), token: token)
        #expect(truncated.status == 422)
        let empty = try await client.send("POST", "/v1/models", body: Data(), token: token)
        #expect(empty.status == 422)

        // Over the 64 KiB limit: 413, with and without a declared length.
        let oversized = ServerFixture.model(version: "big", padding: 100_000)
        let tooLarge = try await client.send("POST", "/v1/models", body: oversized, token: token)
        #expect(tooLarge.status == 413)
        let chunked = try RawConnection.request(port: port, """
            POST /v1/models HTTP/1.1\r
            Host: x\r
            Authorization: Bearer \(token)\r
            Transfer-Encoding: chunked\r
            Connection: close\r

            """, body: Data("\(String(oversized.count, radix: 16))\r\n".utf8) + oversized + Data("\r\n0\r\n\r\n".utf8))
        #expect(chunked.status == 413)
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.dataFolder.appendingPathComponent("models").path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.dataFolder.appendingPathComponent("uploads").path).isEmpty)

        // A deployment naming a model that was never uploaded, or missing an identifier: 422.
        let unknownModel = try await client.send("POST", "/v1/collections/bad/deployments",
                                                 json: ["models": ["m": ["sha256": String(repeating: "b", count: 64)]]], token: token)
        #expect(unknownModel.status == 422)
        let sha = try await ServerFixture.upload(client, ServerFixture.model(version: "ok"), token: token)
        let extra = try await client.send("POST", "/v1/collections/bad/deployments",
                                          json: ["models": ["m": ["sha256": sha], "other": ["sha256": sha]]], token: token)
        #expect(extra.status == 422)
        #expect(extra.errorMessage.contains("'other'"))
        let missing = try await client.send("POST", "/v1/collections/bad/deployments",
                                            json: ["models": [:] as [String: Any]], token: token)
        #expect(missing.status == 422)
        #expect(missing.errorMessage.contains("'m'"))
        let nothingToRollBack = try await client.send("POST", "/v1/collections/bad/rollback", token: token)
        #expect(nothingToRollBack.status == 409)

        // Still serving.
        #expect(try await client.send("GET", "/healthz").status == 200)
        server.stop()
    }

    @Test("Tokens: none or unknown is 401, the wrong scope or collection is 403")
    func tokens() async throws {
        let server = try ServerProcess()
        let client = HTTPClient(base: server.url)
        let publish = try server.token(scope: "publish")
        let read = try server.token(scope: "read")
        let limited = try server.token(scope: "publish", collection: "mine")
        #expect(publish.hasPrefix("mlk_") && publish != read)

        let none = try await client.send("PUT", "/v1/collections/mine", json: ["modelIdentifiers": ["m"]], token: nil)
        #expect(none.status == 401)
        #expect(none.header("WWW-Authenticate") == "Bearer")
        let unknown = try await client.send("PUT", "/v1/collections/mine", json: ["modelIdentifiers": ["m"]], token: "mlk_nope")
        #expect(unknown.status == 401)
        let readScope = try await client.send("PUT", "/v1/collections/mine", json: ["modelIdentifiers": ["m"]], token: read)
        #expect(readScope.status == 403)
        #expect(try await client.send("POST", "/v1/models", body: Data("x".utf8), token: read).status == 403)
        let own = try await client.send("PUT", "/v1/collections/mine", json: ["modelIdentifiers": ["m"]], token: limited)
        #expect(own.status == 201)
        let other = try await client.send("PUT", "/v1/collections/theirs", json: ["modelIdentifiers": ["m"]], token: limited)
        #expect(other.status == 403)
        #expect(other.errorMessage.contains("limited to collection 'mine'"))
        _ = try await client.send("PUT", "/v1/collections/theirs", json: ["modelIdentifiers": ["m"]], token: publish)
        let listed = try await client.send("GET", "/v1/collections", token: limited)
        #expect((listed.json["collections"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == ["mine"])

        // Keys need a read token; a publish token is the wrong scope; an unknown key is 404.
        #expect(try await client.send("GET", "/v1/keys/some-key").status == 401)
        #expect(try await client.send("GET", "/v1/keys/some-key", token: publish).status == 403)
        #expect(try await client.send("GET", "/v1/keys/some-key", token: read).status == 404)

        // The collection endpoints need no token; tokens never reach the log.
        #expect(try await client.send("GET", "/healthz").status == 200)
        server.stop()
        let log = server.logText
        for token in [publish, read, limited] { #expect(!log.contains(token)) }
        #expect(log.contains("\"status\":\"401\"") || log.contains("\"status\":401"))
    }
}

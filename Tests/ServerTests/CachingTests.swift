import Foundation
import TestSupport
import Testing

/// ETags, 304s and byte ranges: what lets a client revalidate cheaply and resume a download.
@Suite("Caching and ranges", .timeLimit(.minutes(10)), .onOwnThreads)
struct CachingTests {
    @Test("A resolved collection has an ETag; If-None-Match answers 304 until the deployment changes")
    func resolvedETag() async throws {
        try await ServerFixture.inProcess { server, client, token in
            try await ServerFixture.createCollection(client, "etag", models: ["m"], token: token)
            let sha = try await ServerFixture.upload(client, ServerFixture.model(version: "e1"), token: token)
            _ = try await ServerFixture.deploy(client, "etag", models: ["m": sha], token: token)

            let first = try await client.send("GET", "/v1/collections/etag")
            let eTag = try #require(first.header("ETag"))
            // The ETag is the SHA-256 of the body, quoted.
            #expect(eTag == "\"\(try ServerFixture.sha256(first.body))\"")
            let again = try await client.send("GET", "/v1/collections/etag", headers: ["If-None-Match": eTag])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == eTag)
            let listed = try await client.send("GET", "/v1/collections/etag", headers: ["If-None-Match": "\"other\", \(eTag)"])
            #expect(listed.status == 304)
            let stale = try await client.send("GET", "/v1/collections/etag", headers: ["If-None-Match": "\"other\""])
            #expect(stale.status == 200)

            let newSHA = try await ServerFixture.upload(client, ServerFixture.model(version: "e2"), token: token)
            _ = try await ServerFixture.deploy(client, "etag", models: ["m": newSHA], token: token)
            let changed = try await client.send("GET", "/v1/collections/etag", headers: ["If-None-Match": eTag])
            #expect(changed.status == 200)
            #expect(changed.header("ETag") != eTag)
        }
    }

    @Test("Range requests give 206 with Content-Range; past the end gives 416")
    func ranges() async throws {
        try await ServerFixture.inProcess { server, client, token in
            // About 3 MB, so that ranges cross the server's read chunks.
            let model = ServerFixture.model(version: "big", padding: 3_000_000)
            let sha = try await ServerFixture.upload(client, model, token: token)
            let size = model.count
            let path = "/v1/models/\(sha)"

            let cases: [(range: String, lower: Int, upper: Int)] = [
                ("bytes=0-99", 0, 99),
                ("bytes=1000000-", 1_000_000, size - 1),
                ("bytes=-500", size - 500, size - 1),
                ("bytes=\(size - 10)-\(size + 1000)", size - 10, size - 1),
                ("bytes=262143-262144", 262_143, 262_144),
            ]
            for (range, lower, upper) in cases {
                let answer = try await client.send("GET", path, headers: ["Range": range])
                #expect(answer.status == 206, "\(range)")
                #expect(answer.header("Content-Range") == "bytes \(lower)-\(upper)/\(size)", "\(range)")
                #expect(answer.header("Content-Length") == String(upper - lower + 1), "\(range)")
                #expect(answer.body == model[lower...upper], "\(range)")
            }
            // A resumed download: the first part, then the rest from where it stopped.
            let head = try await client.send("GET", path, headers: ["Range": "bytes=0-1234566"])
            let tail = try await client.send("GET", path, headers: ["Range": "bytes=1234567-"])
            #expect(head.body + tail.body == model)

            let past = try await client.send("GET", path, headers: ["Range": "bytes=\(size)-"])
            #expect(past.status == 416)
            #expect(past.header("Content-Range") == "bytes */\(size)")
            // A malformed range is ignored: the whole file.
            let ignored = try await client.send("GET", path, headers: ["Range": "pages=1-2"])
            #expect(ignored.status == 200)
            #expect(ignored.body == model)
            // A model file's ETag is its SHA-256, and it revalidates too.
            let revalidated = try await client.send("GET", path, headers: ["If-None-Match": "\"\(sha)\""])
            #expect(revalidated.status == 304)
        }
    }

    @Test("A download cut off midway resumes with Range and gives the same bytes")
    func resumeAfterCutConnection() async throws {
        let (server, client, token) = try ServerFixture.start()
        let model = ServerFixture.model(version: "cut", padding: 4_000_000)
        let sha = try await ServerFixture.upload(client, model, token: token)
        let port = try #require(server.url.port)

        // Read the headers and part of the body, then close the connection.
        let connection = try RawConnection(port: port)
        try connection.write(Data("GET /v1/models/\(sha) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        let partial = connection.readAll(limit: 1_000_000)
        let separator = try #require(partial.range(of: Data("\r\n\r\n".utf8)))
        let received = partial[separator.upperBound...]
        #expect(!received.isEmpty && received.count < model.count)
        #expect(received == model.prefix(received.count))
        connection.close()

        let rest = try await client.send("GET", "/v1/models/\(sha)", headers: ["Range": "bytes=\(received.count)-"])
        #expect(rest.status == 206)
        #expect(Data(received) + rest.body == model)
        // The server is still well.
        #expect(try await client.send("GET", "/healthz").status == 200)
        server.stop()
    }
}

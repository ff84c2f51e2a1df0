import Foundation
@testable import MLKitServer
import TestSupport
import Testing

/// The server's memory of refused tokens: an unknown token is answered 401 without a database
/// read for `--token-refusal-seconds`, and at most 10,000 of them are remembered. A database
/// read shows in the debug log as "reloaded the token hashes".
@Suite("Token refusals", .timeLimit(.minutes(10)), .onOwnThreads)
struct TokenRefusalTests {
    @Test("A refused token keeps getting 401 with no database read, even once it is stored; another unknown token's reread lets it in")
    func refusedTokenStaysRefused() async throws {
        let server = try ServerProcess(arguments: ["--log-level", "debug", "--token-refusal-seconds", "600"])
        let client = HTTPClient(base: server.url)
        let log = ServerLog(server: server, client: client)
        let token = "mlk_refused-then-stored"

        for _ in 0..<5 { #expect(try await Self.status(of: token, client) == 401) }
        #expect(try await log.reloads() == 1, "only the first refusal reads the database")

        try await Self.store(token, in: server)
        #expect(try await Self.status(of: token, client) == 401, "still remembered as refused")
        #expect(try await log.reloads() == 1)

        // Another unknown token makes the server reread the tokens, and the stored one is among them.
        #expect(try await Self.status(of: "mlk_someone-else", client) == 401)
        #expect(try await Self.status(of: token, client) == 200)
        #expect(try await log.reloads() == 2)
        server.stop()
    }

    @Test("A token stored after it was refused is accepted once the refusal lifetime has passed")
    func refusalExpires() async throws {
        let server = try ServerProcess(arguments: ["--token-refusal-seconds", "0.3"])
        let client = HTTPClient(base: server.url)
        let token = "mlk_stored-after-refusal"

        #expect(try await Self.status(of: token, client) == 401)
        let refused = ContinuousClock.now
        try await Self.store(token, in: server)
        try await Task.sleep(until: refused + .milliseconds(400), clock: .continuous)
        #expect(try await Self.status(of: token, client) == 200)
        server.stop()
    }

    @Test("Past 10,000 refused tokens the list starts again, and the server keeps answering")
    func refusalLimit() async throws {
        let server = try ServerProcess(arguments: ["--log-level", "notice", "--token-refusal-seconds", "600"])
        let client = HTTPClient(base: server.url)
        let limit = TokenVerifier.refusalLimit
        #expect(limit == 10_000)
        let wrong = (0...limit).map { "mlk_wrong-\($0)" }

        let statuses = try await Self.statuses(of: Array(wrong[..<limit]), port: server.url.port ?? 0)
        #expect(statuses == [401: limit])
        // The list is full, and still remembers the first token: stored now, it is refused.
        try await Self.store(wrong[0], in: server)
        #expect(try await Self.status(of: wrong[0], client) == 401)

        // One more starts the list again. A token refused before that and stored after it is
        // then read from the database at once.
        #expect(try await Self.status(of: wrong[limit], client) == 401)
        try await Self.store(wrong[1], in: server)
        #expect(try await Self.status(of: wrong[1], client) == 200)
        #expect(try await client.send("GET", "/healthz").status == 200)
        #expect(server.stop() == 0)
        let notices = server.logText.split(separator: "\n").filter { $0.contains("the list of refused tokens was full") }
        #expect(notices.count == 1 && notices.first?.contains("\"forgotten\":\"\(limit)\"") == true)
    }

    /// The status of a publisher request (the collection list) with `token`.
    private static func status(of token: String, _ client: HTTPClient) async throws -> Int {
        try await client.send("GET", "/v1/collections", token: token).status
    }

    /// How many requests with `tokens` got each status: pipelined, 100 a connection, on four
    /// connections at a time.
    private static func statuses(of tokens: [String], port: Int) async throws -> [Int: Int] {
        try await withThrowingTaskGroup(of: [Int: Int].self) { group in
            let batches = stride(from: 0, to: tokens.count, by: 100).map { Array(tokens[$0..<min($0 + 100, tokens.count)]) }
            for lane in 0..<4 {
                group.addTask {
                    var counts: [Int: Int] = [:]
                    for batch in stride(from: lane, to: batches.count, by: 4).map({ batches[$0] }) {
                        counts.merge(try await pipelined(batch, port: port), uniquingKeysWith: +)
                    }
                    return counts
                }
            }
            var all: [Int: Int] = [:]
            for try await counts in group { all.merge(counts, uniquingKeysWith: +) }
            return all
        }
    }

    /// Sends one publisher request per token on one connection, all written at once, the last
    /// with `Connection: close`, and counts the statuses of the answers.
    private static func pipelined(_ tokens: [String], port: Int) async throws -> [Int: Int] {
        let connection = try RawConnection(port: port)
        let requests = tokens.enumerated().map { index, token in
            "GET /v1/collections HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                + (index == tokens.count - 1 ? "Connection: close\r\n\r\n" : "\r\n")
        }
        try connection.write(Data(requests.joined().utf8))
        let answers = String(decoding: connection.readAll(limit: 16 << 20), as: UTF8.self)
        var counts: [Int: Int] = [:]
        for answer in answers.components(separatedBy: "HTTP/1.1 ").dropFirst() {
            counts[Int(answer.prefix(3)) ?? 0, default: 0] += 1
        }
        return counts
    }

    /// Stores a publish token of the test's choosing in the running server's SQLite database, as
    /// `mlkit serve token create` would, but with a value the test has already sent.
    private static func store(_ token: String, in server: ServerProcess) async throws {
        let store = try SQLiteCollectionStore(path: server.dataFolder.appendingPathComponent("mlkit.sqlite").path)
        try await store.addToken(TokenRecord(hash: AccessToken.hash(token), scope: .publish, collection: nil), at: Date())
    }
}

/// Reads the server's log once everything before now has reached it: a `/healthz` request is
/// sent and the log is read when its line arrives.
private struct ServerLog {
    let server: ServerProcess
    let client: HTTPClient

    /// How many times the server has read the token hashes from its database.
    func reloads() async throws -> Int {
        try await count("\"message\":\"reloaded the token hashes\"")
    }

    /// How many log lines contain `text`, counting every line logged before the call.
    func count(_ text: String) async throws -> Int {
        let marker = "\"path\":\"/healthz\""
        let before = lines(containing: marker).count
        #expect(try await client.send("GET", "/healthz").status == 200)
        let deadline = ContinuousClock.now + .seconds(30)
        while lines(containing: marker).count <= before {
            guard ContinuousClock.now < deadline else { throw ServerTestError("the /healthz line never reached the log") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return lines(containing: text).count
    }

    private func lines(containing text: String) -> [Substring] {
        server.logText.split(separator: "\n").filter { $0.contains(text) }
    }
}

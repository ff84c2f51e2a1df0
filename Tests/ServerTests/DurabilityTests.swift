import Foundation
import TestSupport
import Testing

/// What survives a restart and a crash.
@Suite("Durability", .timeLimit(.minutes(10)), .onOwnThreads)
struct DurabilityTests {
    @Test("A restarted server keeps collections, deployments, model files and tokens")
    func restartKeepsEverything() async throws {
        let server = try ServerProcess()
        var client = HTTPClient(base: server.url)
        let token = try server.token(scope: "publish")
        try await ServerFixture.createCollection(client, "kept", models: ["m"], token: token)
        let model = ServerFixture.model(version: "kept")
        let sha = try await ServerFixture.upload(client, model, token: token)
        let first = try await ServerFixture.deploy(client, "kept", models: ["m": sha], token: token)
        let targeted = try await ServerFixture.deploy(client, "kept", models: ["m": sha], targeting: ["regionCodes": ["FR"]],
                                                      token: token)
        let before = try await client.send("GET", "/v1/collections/kept")
        let history = try await client.send("GET", "/v1/collections/kept/deployments", token: token)

        #expect(server.stop() == 0, "a graceful shutdown exits 0")
        try server.restart()
        client = HTTPClient(base: server.url)

        let after = try await client.send("GET", "/v1/collections/kept")
        #expect(after.status == 200)
        #expect(after.body == before.body)
        #expect(after.header("ETag") == before.header("ETag"))
        #expect(try await ServerFixture.resolved(client, "kept", query: "regionCode=FR") == targeted)
        #expect(try await ServerFixture.resolved(client, "kept") == first)
        #expect(try await client.send("GET", "/v1/models/\(sha)").body == model)
        // The publish token still works, and the history is the same.
        let historyAfter = try await client.send("GET", "/v1/collections/kept/deployments", token: token)
        #expect(historyAfter.status == 200)
        #expect(historyAfter.body == history.body)
        server.stop()
    }

    @Test("kill -9 during an upload leaves no partial model, and the server starts clean")
    func killDuringUpload() async throws {
        let server = try ServerProcess(arguments: Self.noIdleTimeout)
        let token = try server.token(scope: "publish")
        let model = ServerFixture.model(version: "killed", padding: 2_000_000)
        let partialSHA = try ServerFixture.sha256(model.prefix(1_000_000))
        let fullSHA = try ServerFixture.sha256(model)
        let uploads = server.dataFolder.appendingPathComponent("uploads")
        let models = server.dataFolder.appendingPathComponent("models")

        // Send the headers and half the body, then kill the server while it waits for the rest.
        let connection = try await Self.startStalledUpload(model, server: server, token: token, uploads: uploads)
        server.kill()
        connection.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: models.path).isEmpty, "no partial model is visible")

        try server.restart()
        let client = HTTPClient(base: server.url)
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads.path).isEmpty, "the leftover is removed")
        #expect(server.logText.contains("removed unfinished uploads"))
        #expect(try await client.send("GET", "/v1/models/\(partialSHA)").status == 404)
        #expect(try await client.send("GET", "/v1/models/\(fullSHA)").status == 404)
        // The same upload now succeeds.
        let sha = try await ServerFixture.upload(client, model, token: token)
        #expect(sha == fullSHA)
        #expect(try await client.send("GET", "/v1/models/\(sha)").body == model)
        server.stop()
    }

    @Test("SIGTERM during a stalled upload: the server waits its grace period, cancels it, and exits 0")
    func shutdownDuringStalledUpload() async throws {
        let server = try ServerProcess(arguments: ["--shutdown-grace-seconds", "1"] + Self.noIdleTimeout)
        let token = try server.token(scope: "publish")
        let model = ServerFixture.model(version: "stalled", padding: 2_000_000)
        let uploads = server.dataFolder.appendingPathComponent("uploads")

        // Half the body, and then nothing: the request stays under way.
        let connection = try await Self.startStalledUpload(model, server: server, token: token, uploads: uploads)
        defer { connection.close() }

        let stopping = ContinuousClock.now
        #expect(server.stop() == 0, "a shutdown that had to cancel a request still exits 0")
        let took = ContinuousClock.now - stopping
        #expect(took >= .milliseconds(900), "the request under way had its grace period (\(took))")
        #expect(took < .seconds(8), "the grace period is 1 s, not the default 10 s or forever (\(took))")
        #expect(try FileManager.default.contentsOfDirectory(
            atPath: server.dataFolder.appendingPathComponent("models").path).isEmpty, "no partial model is visible")

        try server.restart()
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads.path).isEmpty, "the leftover is removed")
        server.stop()
    }

    @Test("A grace period that is not a number of seconds from 0 to 3600 is a usage error naming the option")
    func badShutdownGrace() throws {
        for value in ["-1", "nan", "3601"] {
            let result = try MLKitBinary.run(["serve", "--port", "0", "--shutdown-grace-seconds", value])
            #expect(result.status == 64, "\(value): \(result.stderr)")
            #expect(result.stderr.contains("--shutdown-grace-seconds"), "\(value): \(result.stderr)")
        }
    }

    /// The servers of the stalled uploads keep a silent connection open: the idle timeout
    /// (30 s by default, tested by SlowlorisTests) would otherwise end the upload under test if
    /// this test's task waited that long for a thread on a loaded machine.
    private static let noIdleTimeout = ["--idle-timeout-seconds", "0"]

    /// Sends an upload's headers and the first 1,000,000 bytes of `model`, never the rest, and
    /// waits until the server has its temporary file in `uploads`: up to 60 s, since beside the
    /// whole suite (servers, database clusters, builds) a loaded machine can take over 10 s.
    /// When the file does not come, the failure shows the server's log and the sockets of its
    /// port (`ss`), which tell a connection the server never accepted from a request it did
    /// not finish.
    private static func startStalledUpload(_ model: Data, server: ServerProcess, token: String,
                                           uploads: URL) async throws -> RawConnection {
        let port = server.port
        let connection = try RawConnection(port: port)
        try connection.write(Data("""
            POST /v1/models HTTP/1.1\r
            Host: 127.0.0.1\r
            Authorization: Bearer \(token)\r
            Content-Type: application/octet-stream\r
            Content-Length: \(model.count)\r
            \r

            """.utf8))
        try connection.write(model.prefix(1_000_000))
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, (try FileManager.default.contentsOfDirectory(atPath: uploads.path)).isEmpty {
            try await Task.sleep(for: .milliseconds(50))
        }
        if try FileManager.default.contentsOfDirectory(atPath: uploads.path).count != 1 {
            let sockets = try? ChildProcess.run(URL(fileURLWithPath: "/bin/sh"),
                                                ["-c", "ss -tanpei '( sport = :\(port) or dport = :\(port) )'"])
            Issue.record("""
                the upload is not under way after 60 s; the server answered: \(connection.availableAnswer() ?? "nothing"); \
                closed by the server: \(connection.isClosedByPeer). The server's log:
                \(server.logText)
                The sockets of port \(port) (ss):
                \(sockets.map { $0.stdout + $0.stderr } ?? "ss did not run")
                """)
        }
        return connection
    }
}

import Foundation
import TestSupport
import Testing

/// A full disk, on a small tmpfs mounted for the test: a clear error naming the path, nothing
/// partial left, and the server keeps serving what it has. Mounting needs root (and a sandbox
/// that allows it); elsewhere the tests say so and are skipped.
@Suite("A full disk", .timeLimit(.minutes(10)), .onOwnThreads)
struct DiskFullTests {
    @Test("The server answers 507 naming the file when its disk is full, keeps nothing partial, serves what it has, and writes again once there is room",
          .enabled(if: SmallFileSystem.canMount, SmallFileSystem.cannotMount))
    func server() async throws {
        let disk = try SmallFileSystem(megabytes: 4)
        defer { disk.remove() }
        let data = disk.folder.appendingPathComponent("data")
        let server = try ServerProcess(dataFolder: data)
        defer { server.stop() }
        let token = try server.token(scope: "publish")
        let client = HTTPClient(base: server.url)
        try await ServerFixture.createCollection(client, "full", models: ["m"], token: token)
        let model = ServerFixture.model(version: "small")
        let sha = try await ServerFixture.upload(client, model, token: token)
        let deployment = try await ServerFixture.deploy(client, "full", models: ["m": sha], token: token)

        // An upload larger than the room left: 507 naming the upload's file; nothing kept.
        let big = try await client.send("POST", "/v1/models", body: ServerFixture.model(version: "big", padding: 6_000_000),
                                         token: token)
        #expect(big.status == 507, "\(big.status) \(big.errorMessage)")
        #expect(big.errorMessage.contains(data.appendingPathComponent("uploads").path) && big.errorMessage.contains("the disk is full"),
                "\(big.errorMessage)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("uploads").path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("models").path) == [sha])

        // The disk filled to the last byte: the database cannot grow either. A change may
        // still fit in the database's own free pages; once none does, it is a 507 naming the
        // database, and none is half made.
        try disk.fill()
        var statuses: [Int] = []
        for index in 0..<40 where !statuses.contains(507) {
            let answer = try await client.send("PUT", "/v1/collections/full-\(index)",
                                               json: ["description": String(repeating: "d", count: 50_000), "modelIdentifiers": ["m"]],
                                               token: token)
            statuses.append(answer.status)
            if answer.status == 507 {
                #expect(answer.errorMessage.contains(data.appendingPathComponent("mlkit.sqlite").path), "\(answer.errorMessage)")
            }
        }
        #expect(statuses.allSatisfy { $0 == 201 || $0 == 507 } && statuses.contains(507), "\(statuses)")
        let deploy = try await client.send("POST", "/v1/collections/full/deployments", json: ["models": ["m": ["sha256": sha]]],
                                           token: token)
        #expect(deploy.status == 507, "\(deploy.status) \(deploy.errorMessage)")

        // Still serving what it has.
        #expect(try await ServerFixture.resolved(client, "full") == deployment)
        let download = try await client.send("GET", "/v1/models/\(sha)")
        #expect(download.status == 200 && download.body == model)
        #expect(try await client.send("GET", "/healthz").status == 200)

        // Room again: writes work.
        disk.unfill()
        #expect(try await client.send("PUT", "/v1/collections/again", json: ["modelIdentifiers": ["m"]], token: token).status == 201)
        #expect(try await client.send("POST", "/v1/models", body: ServerFixture.model(version: "after"), token: token).status == 201)
        #expect(server.stop() == 0)
        #expect(server.logText.contains("\"message\":\"request failed\""), "the failures are logged")
        try CrashTests.expectIntactStore(data, round: 0)
    }

    @Test("mlkit train -o M and mlkit encrypt -o M on a full disk fail naming M, and leave M as it was",
          .enabled(if: SmallFileSystem.canMount, SmallFileSystem.cannotMount))
    func commandLine() throws {
        let disk = try SmallFileSystem(megabytes: 2)
        defer { disk.remove() }
        let model = disk.folder.appendingPathComponent("model.mlkit")
        let headlines = ChildProcess.repositoryRoot.appendingPathComponent("Tests/Fixtures/headlines.json").path
        #expect(try MLKitBinary.run(["train", headlines, "-o", model.path]).status == 0)
        let before = try Data(contentsOf: model)
        let key = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-diskfull-\(UUID().uuidString).mlkitkey")
        defer { try? FileManager.default.removeItem(at: key) }
        #expect(try MLKitBinary.run(["keygen", "-o", key.path]).status == 0)
        try disk.fill()

        let runs = [
            ("train", try MLKitBinary.run(["train", headlines, "-o", model.path, "--version", "2"])),
            ("encrypt", try MLKitBinary.run(["encrypt", ChildProcess.repositoryRoot.appendingPathComponent("trained/sentiment.mlkit").path,
                                              "--key", key.path, "-o", model.path])),
        ]
        for (command, result) in runs {
            #expect(result.status == 70, "\(command): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("\(model.path): cannot write the file") && result.stderr.contains("No space left on device"),
                    "\(command): \(result.stderr)")
            #expect(try Data(contentsOf: model) == before, "\(command): M is unchanged")
            #expect(try FileManager.default.contentsOfDirectory(atPath: disk.folder.path).sorted() == ["filler", "model.mlkit"],
                    "\(command): nothing partial is left")
        }
    }
}

/// A tmpfs of a few megabytes, mounted on a new temporary folder.
struct SmallFileSystem {
    let folder: URL

    /// Mounts one.
    init(megabytes: Int) throws {
        folder = try ChildProcess.temporaryFolder("tmpfs")
        let mounted = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                           ["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", folder.path])
        guard mounted.status == 0 else {
            try? FileManager.default.removeItem(at: folder)
            throw ServerTestError("mount: \(mounted.stderr)")
        }
    }

    /// Fills what is left with a file, `filler`.
    func fill() throws {
        let filler = folder.appendingPathComponent("filler").path
        let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["dd", "if=/dev/zero", "of=\(filler)", "bs=4096"])
        guard result.stderr.contains("No space left") else { throw ServerTestError("dd did not fill the disk: \(result.stderr)") }
    }

    /// Removes the filler.
    func unfill() {
        try? FileManager.default.removeItem(at: folder.appendingPathComponent("filler"))
    }

    /// Unmounts it and removes the folder.
    func remove() {
        _ = try? ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["umount", folder.path])
        try? FileManager.default.removeItem(at: folder)
    }

    /// Whether this process may mount a tmpfs (it tries once).
    static let canMount: Bool = {
        guard let disk = try? SmallFileSystem(megabytes: 1) else { return false }
        disk.remove()
        return true
    }()

    static let cannotMount: Comment = "skipped: mounting a small tmpfs is not permitted here (it needs root in a sandbox that allows mount)"
}

import Foundation
import Hummingbird
import HummingbirdTesting
import MLKit
@testable import MLKitServer
import TestSupport
import Testing

/// Model files for the tests, made from the core's golden fixtures, and the steps every suite
/// takes: a collection, an upload, a deployment.
enum ServerFixture {
    static let repositoryRoot = ChildProcess.repositoryRoot

    /// A trained headline classifier (Tech / US Politics).
    static let classifier: TextClassifier = {
        let url = repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models/v1-headlines-svm.mlkit")
        do { return try TextClassifier(contentsOf: url) } catch { fatalError("the fixture model does not load: \(error)") }
    }()

    /// A valid model file whose bytes depend on `version`; `padding` bytes of metadata make it
    /// as large as a test needs.
    static func model(version: String, padding: Int = 0) -> Data {
        var metadata = ModelMetadata(shortDescription: "server test model", version: version)
        if padding > 0 {
            metadata.additional["padding"] = String(repeating: "x", count: padding)
        }
        return classifier.modelFileData(metadata: metadata)
    }

    /// The hex SHA-256 of bytes, computed by `sha256sum` so that the test does not trust the
    /// server's own code.
    static func sha256(_ data: Data) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-sha-\(UUID().uuidString)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let text = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["sha256sum", file.path]).stdout
        return String(text.prefix(64))
    }

    /// Starts a server process over a new data folder, with a publish token and a client.
    static func start(arguments: [String] = []) throws -> (server: ServerProcess, client: HTTPClient, token: String) {
        let server = try ServerProcess(arguments: arguments)
        return (server, HTTPClient(base: server.url), try server.token(scope: "publish"))
    }

    /// Runs `body` against the server's router in this process, over a new data folder, with a
    /// publish token; the folder is removed afterwards.
    static func inProcess<Value: Sendable>(
        store: StoreKind = .sqlite,
        maxUploadSize: Int64 = CollectionServer.Configuration.defaultMaxUploadSize, noting reached: ReachedEndpoints? = nil,
        _ body: @Sendable (_ server: InProcessServer, _ client: RouterClient, _ token: String) async throws -> Value
    ) async throws -> Value {
        let folder = try ChildProcess.temporaryFolder("server")
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = store == .postgres ? try PostgresCluster.createDatabase("server") : nil
        let harness = if let database {
            try await _InProcessCollectionServer(dataFolder: folder, database: database, maxUploadSize: maxUploadSize)
        } else {
            try _InProcessCollectionServer(dataFolder: folder, maxUploadSize: maxUploadSize)
        }
        let server = InProcessServer(dataFolder: folder, database: database)
        do {
            let token = try await server.token(scope: "publish")
            let value = try await Application(responder: harness.responder).test(.router) { client in
                try await body(server, RouterClient(client: client, reached: reached), token)
            }
            await harness.close()
            return value
        } catch {
            await harness.close()
            throw error
        }
    }

    /// Runs `body` against `count` replicas in this process over one new PostgreSQL database,
    /// each with a data folder (its cache) of its own, with a publish token.
    static func replicas<Value: Sendable>(
        _ count: Int = 2,
        _ body: @Sendable (_ clients: [RouterClient], _ token: String, _ database: URL) async throws -> Value
    ) async throws -> Value {
        let database = try PostgresCluster.createDatabase("replicas")
        var harnesses: [_InProcessCollectionServer] = []
        var folders: [URL] = []
        defer { for folder in folders { try? FileManager.default.removeItem(at: folder) } }
        do {
            for _ in 0..<count {
                let folder = try ChildProcess.temporaryFolder("replica")
                folders.append(folder)
                harnesses.append(try await _InProcessCollectionServer(dataFolder: folder, database: database))
            }
            let token = try await InProcessServer(dataFolder: folders[0], database: database).token(scope: "publish")
            let value = try await withClients(harnesses[...], []) { clients in try await body(clients, token, database) }
            for harness in harnesses { await harness.close() }
            return value
        } catch {
            for harness in harnesses { await harness.close() }
            throw error
        }
    }

    private static func withClients<Value: Sendable>(
        _ rest: ArraySlice<_InProcessCollectionServer>, _ clients: [RouterClient],
        _ body: @Sendable ([RouterClient]) async throws -> Value
    ) async throws -> Value {
        guard let first = rest.first else { return try await body(clients) }
        return try await Application(responder: first.responder).test(.router) { client in
            try await withClients(rest.dropFirst(), clients + [RouterClient(client: client, reached: nil)], body)
        }
    }

    /// Creates a collection.
    @discardableResult
    static func createCollection(_ client: some APIClient, _ identifier: String, models: [String], token: String) async throws -> HTTPAnswer {
        let answer = try await client.send("PUT", "/v1/collections/\(identifier)",
                                           json: ["description": "test collection", "modelIdentifiers": models], token: token)
        #expect(answer.status == 201 || answer.status == 200, "PUT collection: \(answer.status) \(answer.errorMessage)")
        return answer
    }

    /// Uploads a model file and returns its SHA-256 as the server reports it.
    static func upload(_ client: some APIClient, _ data: Data, token: String) async throws -> String {
        let answer = try await client.send("POST", "/v1/models", body: data,
                                           headers: ["Content-Type": "application/octet-stream"], token: token)
        #expect(answer.status == 201 || answer.status == 200, "upload: \(answer.status) \(answer.errorMessage)")
        return answer.json["sha256"] as? String ?? ""
    }

    /// Deploys one model file per identifier, with optional targeting and rollout.
    static func deploy(_ client: some APIClient, _ collection: String, models: [String: String], targeting: [String: Any]? = nil,
                       rollout: Double? = nil, activate: Bool = true, token: String) async throws -> String {
        var body: [String: Any] = [
            "models": models.mapValues { ["sha256": $0] },
            "activate": activate,
        ]
        if let targeting { body["targeting"] = targeting }
        if let rollout { body["rolloutPercentage"] = rollout }
        let answer = try await client.send("POST", "/v1/collections/\(collection)/deployments", json: body, token: token)
        #expect(answer.status == 201, "deploy: \(answer.status) \(answer.errorMessage)")
        return answer.json["deploymentID"] as? String ?? ""
    }

    /// The answer to a deployment of one model file, whatever its status.
    static func deployAnswer(_ client: some APIClient, _ collection: String, sha: String, token: String) async throws -> HTTPAnswer {
        try await client.send("POST", "/v1/collections/\(collection)/deployments",
                              json: ["models": ["topic": ["sha256": sha]], "activate": true], token: token)
    }

    /// The deployment a device context resolves to, or the status when none does.
    static func resolved(_ client: some APIClient, _ collection: String, query: String = "",
                         headers: [String: String] = [:]) async throws -> String {
        let answer = try await client.send("GET", "/v1/collections/\(collection)\(query.isEmpty ? "" : "?" + query)",
                                           headers: headers)
        guard answer.status == 200 else { return "status \(answer.status)" }
        return answer.json["deploymentID"] as? String ?? "no deploymentID"
    }
}

/// The data folder of a server run in this process, and its tokens.
struct InProcessServer: Sendable {
    /// The data folder.
    let dataFolder: URL
    /// The shared PostgreSQL database, if the server runs over one.
    var database: URL? = nil

    /// Makes a token as `mlkit serve token create` does.
    func token(scope: String, collection: String? = nil) async throws -> String {
        guard let scope = TokenScope(rawValue: scope) else { throw ServerTestError("no scope \(scope)") }
        return try await CollectionServer.createToken(dataFolder: dataFolder, database: database, scope: scope,
                                                      collection: collection)
    }
}

/// The two collection stores, for the tests that run against both.
enum StoreKind: String, Sendable, CaseIterable, CustomTestStringConvertible {
    /// SQLite and `models/` in the data folder.
    case sqlite
    /// PostgreSQL (a database of the tests' own cluster) and a replica's cache.
    case postgres

    var testDescription: String { rawValue }

    /// Both stores. PostgreSQL is left out only where its server binaries are not installed
    /// and CI does not require them (`PostgresCluster.isAvailable`); `.ci/run` installs them.
    static var testable: [StoreKind] { PostgresCluster.isAvailable ? allCases : [.sqlite] }
}

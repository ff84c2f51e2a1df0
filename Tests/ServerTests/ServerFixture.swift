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
        maxUploadSize: Int64 = CollectionServer.Configuration.defaultMaxUploadSize, noting reached: ReachedEndpoints? = nil,
        _ body: @Sendable (_ server: InProcessServer, _ client: RouterClient, _ token: String) async throws -> Value
    ) async throws -> Value {
        let folder = try ChildProcess.temporaryFolder("server")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = InProcessServer(dataFolder: folder)
        let harness = try _InProcessCollectionServer(dataFolder: folder, maxUploadSize: maxUploadSize)
        let token = try await server.token(scope: "publish")
        return try await Application(responder: harness.responder).test(.router) { client in
            try await body(server, RouterClient(client: client, reached: reached), token)
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

    /// Makes a token as `mlkit serve token create` does.
    func token(scope: String, collection: String? = nil) async throws -> String {
        guard let scope = TokenScope(rawValue: scope) else { throw ServerTestError("no scope \(scope)") }
        return try await CollectionServer.createToken(dataFolder: dataFolder, scope: scope, collection: collection)
    }
}

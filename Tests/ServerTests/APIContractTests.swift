import Foundation
import HTTPTypes
import Hummingbird
@testable import MLKitServer
import TestSupport
import Testing
import Yams

/// `docs/openapi.yaml` against the server: the same routes, methods and statuses as the
/// router, and schemathesis, generating requests from it, against a live server.
@Suite("The API contract", .timeLimit(.minutes(10)), .onOwnThreads)
struct APIContractTests {
    static let document = ChildProcess.repositoryRoot.appendingPathComponent("docs/openapi.yaml")

    @Test("docs/openapi.yaml lists every route of the router, with the statuses each answers with, and nothing else")
    func documentMatchesRouter() async throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let root = try #require(try Yams.load(yaml: text) as? [String: Any])
        let paths = try #require(root["paths"] as? [String: Any])
        var documented: [String: Set<Int>] = [:]
        for (path, item) in paths {
            let item = try #require(item as? [String: Any], "\(path)")
            for method in ["get", "head", "post", "put", "delete", "patch", "options", "trace"] {
                guard let operation = item[method] as? [String: Any] else { continue }
                let responses = try #require(operation["responses"] as? [AnyHashable: Any], "\(method) \(path)")
                documented["\(method.uppercased()) \(path)"] = Set(responses.keys.compactMap { Int("\($0)") })
            }
        }

        let folder = try ChildProcess.temporaryFolder("contract")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try _InProcessCollectionServer(dataFolder: folder)
        let routes = Endpoint.router(state: server.responder.state).routes
        let routed = Set(routes.map { "\($0.method.rawValue) \($0.path)" })
        #expect(routed.count == Endpoint.all.count)
        #expect(routed.subtracting(documented.keys).isEmpty, "not in the document: \(routed.subtracting(documented.keys).sorted())")
        #expect(Set(documented.keys).subtracting(routed).isEmpty,
                "not in the router: \(Set(documented.keys).subtracting(routed).sorted())")
        for endpoint in Endpoint.all {
            let name = "\(endpoint.method.rawValue) \(endpoint.path)"
            #expect(documented[name] == endpoint.statuses,
                    "\(name): the document lists \(documented[name]?.sorted() ?? []), the endpoint \(endpoint.statuses.sorted())")
        }
    }

    @Test("schemathesis, over 1,000 requests generated from docs/openapi.yaml, finds no server error and no answer that breaks the document",
          .enabled(if: Schemathesis.isInstalled, Schemathesis.missing))
    func schemathesis() async throws {
        let server = try ServerProcess(arguments: ["--log-level", "debug"])
        let publish = try server.token(scope: "publish")
        let read = try server.token(scope: "read")
        try await Schemathesis.seed(HTTPClient(base: server.url), token: publish)

        let folder = try ChildProcess.temporaryFolder("schemathesis")
        defer { try? FileManager.default.removeItem(at: folder) }
        let report = folder.appendingPathComponent("report.json")
        let result = try ChildProcess.run(
            Schemathesis.executable,
            ["--config-file", Schemathesis.configuration.path, "run", Self.document.path, "--url", server.url.absoluteString,
             "--checks", "all", "--max-examples", "100", "--no-color", "--generation-database", "none",
             "--report", "json", "--report-json-path", report.path],
            environment: ["MLKIT_PUBLISH_TOKEN": publish, "MLKIT_READ_TOKEN": read], directory: folder, deadline: 540)
        #expect(server.stop() == 0)

        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any],
                                "no report; schemathesis said: \(result.stdout.suffix(4000)) \(result.stderr.suffix(2000))")
        let cases = json["test_cases"] as? [String: Any] ?? [:]
        let failures = json["failures"] as? [Any] ?? []
        let errors = json["errors"] as? [Any] ?? []
        #expect(failures.isEmpty && errors.isEmpty && result.status == 0,
                "schemathesis (seed \(json["seed"] ?? "?")): \(result.stdout.suffix(6000))")
        #expect((cases["generated"] as? Int ?? 0) >= 1_000, "\(cases)")

        // What the server itself answered, from its log: every request, none a server error.
        let statuses = server.logText.split(separator: "\n").filter { $0.contains("\"message\":\"request\"") }.compactMap { line in
            line.range(of: "\"status\":\"").flatMap { Int(line[$0.upperBound...].prefix(3)) }
        }
        let counts = Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count).sorted { $0.key < $1.key }
        print("schemathesis: \(cases["generated"] ?? "?") test cases, \(statuses.count) requests answered: "
              + counts.map { "\($0.value) × \($0.key)" }.joined(separator: ", "))
        #expect(statuses.count >= 1_000, "\(statuses.count) requests")
        #expect(statuses.allSatisfy { $0 < 500 }, "server errors: \(statuses.filter { $0 >= 500 })")
        #expect(!server.logText.contains("request failed"))
    }
}

/// schemathesis, from PyPI, in the virtual environment `.venv-schemathesis` beside the
/// package (`.ci/run` makes it from `Tests/Fixtures/schemathesis/requirements.txt`).
enum Schemathesis {
    static let executable = ChildProcess.repositoryRoot.appendingPathComponent(".venv-schemathesis/bin/schemathesis")
    static let configuration = ChildProcess.repositoryRoot.appendingPathComponent("Tests/Fixtures/schemathesis/schemathesis.toml")
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }
    static let missing: Comment = """
        skipped: schemathesis is not installed; make it with python3 -m venv .venv-schemathesis && \
        .venv-schemathesis/bin/pip install -r Tests/Fixtures/schemathesis/requirements.txt (.ci/run does)
        """

    /// The examples of `docs/openapi.yaml`, so that generated requests reach real data: the
    /// collection `sentiment` with two deployments of the headline model, and a key.
    static func seed(_ client: HTTPClient, token: String) async throws {
        let model = try Data(contentsOf: ChildProcess.repositoryRoot
            .appendingPathComponent("Tests/MLKitTests/Fixtures/models/v1-headlines-svm.mlkit"))
        try await ServerFixture.createCollection(client, "sentiment", models: ["polarity"], token: token)
        let sha = try await ServerFixture.upload(client, model, token: token)
        #expect(sha == "67343b833d447845ef0fa3ca9efc297d00ef5b5980470b73d513d60cf6c86ea4", "the document's example")
        for _ in 0..<2 { _ = try await ServerFixture.deploy(client, "sentiment", models: ["polarity": sha], token: token) }
        let key = """
            {"algorithm": "AES-256-GCM", "format": "mlkit-key", "identifier": "B9BA88F5-476E-45C2-82B9-E7A11DEF56D6",
             "key": "X1onTgE5coAcyNLAgO1yfUzb5aPG+QAVCU6wDuJoSSk=", "version": 1}
            """
        let registered = try await client.send("PUT", "/v1/collections/sentiment/keys/B9BA88F5-476E-45C2-82B9-E7A11DEF56D6",
                                               body: Data(key.utf8), token: token)
        #expect(registered.status == 201)
    }
}

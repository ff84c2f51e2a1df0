import Foundation
import TestSupport
import Testing

@Suite("mlkit collection, deploy, pull and predict --collection against a real server", .timeLimit(.minutes(10)), .onOwnThreads)
struct CommandTests {
    @Test("Create, deploy, list, show, pull, predict, target, roll back: the built binary end to end")
    func publisherAndAppVerbs() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let environment = ["MLKIT_SERVER": fixture.server.url.absoluteString, "MLKIT_PUBLISH_TOKEN": fixture.publishToken,
                           "MLKIT_CACHE": fixture.cache.path]

        let created = try Binary.run(["collection", "create", "headlines", "--model-id", "topic", "--description", "News topics"],
                                     environment: environment)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout == "collection headlines: models topic\n")

        let first = try Binary.run(["deploy", "headlines", "--model", "topic=\(Binary.headlinesModel.path)",
                                    "--model-version", "topic=3.0"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("uploaded \(Binary.headlinesModel.path) as "))
        let firstID = try #require(deploymentID(in: first.stdout))
        #expect(first.stdout.contains("deployment \(firstID)  active"))
        #expect(first.stdout.contains("topic: ") && first.stdout.contains(" version 3.0"))

        let listed = try Binary.run(["collection", "list"], environment: environment)
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("headlines\ttopic\t\(firstID)\tNews topics"))

        let pulled = try Binary.run(["pull", "headlines", "--json"], environment: environment)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(pulled.stdout.utf8)) as? [String: Any])
        #expect(json["deploymentID"] as? String == firstID)
        #expect(json["stale"] as? Bool == false)
        let entry = try #require((json["entries"] as? [String: Any])?["topic"] as? [String: Any])
        let path = try #require(entry["modelPath"] as? String)
        #expect(path.hasPrefix(fixture.cache.path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contentsOf: Binary.headlinesModel))

        let predicted = try Binary.run(["predict", "--collection", "headlines", "--model-id", "topic",
                                        "President Donald Trump is approving a new law"], environment: environment)
        #expect(predicted.status == 0, "\(predicted.stderr)")
        #expect(predicted.stdout == "US Politics\n")

        // A targeted deployment: English speakers get the sentiment model, others the default.
        let targeted = try Binary.run(["deploy", "headlines", "--model", "topic=\(Binary.sentimentModel.path)",
                                       "--language", "en", "--os-version", ">=1", "--rollout", "100"], environment: environment)
        #expect(targeted.status == 0, "\(targeted.stderr)")
        #expect(targeted.stdout.contains("targeting language en; os version >=1"))
        let english = try Binary.run(["predict", "--collection", "headlines", "--model-id", "topic", "--language", "en",
                                      "I love rainbows"], environment: environment)
        #expect(english.stdout == "positive\n", "\(english.stderr)")
        let other = try Binary.run(["pull", "headlines", "--language", "de"], environment: environment)
        #expect(other.stdout.hasPrefix("collection headlines deployment \(firstID)\n"), "\(other.stderr)")

        // A second default deployment, then a rollback to the first.
        let second = try Binary.run(["deploy", "headlines", "--model", "topic=\(Binary.sentimentModel.path)"],
                                    environment: environment)
        let secondID = try #require(deploymentID(in: second.stdout))
        let rollback = try Binary.run(["deploy", "rollback", "headlines"], environment: environment)
        #expect(rollback.status == 0, "\(rollback.stderr)")
        #expect(rollback.stdout.hasPrefix("deployment \(firstID)  active"))
        let shown = try Binary.run(["collection", "show", "headlines"], environment: environment)
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("default deployment  \(firstID)"))
        #expect(shown.stdout.contains("deployment \(secondID)  rolledBack"))
        #expect(shown.stdout.contains("deployments         3"))
        let back = try Binary.run(["deploy", "rollback", "headlines", "--to", secondID, "--json"], environment: environment)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stdout.contains("\"deploymentID\" : \"\(secondID)\""))
    }

    @Test("Errors: no token (64), a refused token (77), a missing file (66), server down (69), a stale cache (0)")
    func errors() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let server = ["MLKIT_SERVER": fixture.server.url.absoluteString, "MLKIT_CACHE": fixture.cache.path]

        let noToken = try Binary.run(["collection", "list"], environment: server.merging(["MLKIT_PUBLISH_TOKEN": ""]) { $1 })
        #expect(noToken.status == 64)
        #expect(noToken.stderr.contains("--token"))
        let refused = try Binary.run(["collection", "list", "--token", "not-a-token"], environment: server)
        #expect(refused.status == 77)
        let environment = server.merging(["MLKIT_PUBLISH_TOKEN": fixture.publishToken]) { $1 }
        let missing = try Binary.run(["deploy", "headlines", "--model", "topic=/no/such/file.mlkit"], environment: environment)
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("/no/such/file.mlkit"))
        let badPair = try Binary.run(["deploy", "headlines", "--model", "topic"], environment: environment)
        #expect(badPair.status == 64)
        #expect(badPair.stderr.contains("--model"))

        _ = try Binary.run(["collection", "create", "headlines", "--model-id", "topic"], environment: environment)
        _ = try Binary.run(["deploy", "headlines", "--model", "topic=\(Binary.headlinesModel.path)"], environment: environment)
        let pulled = try Binary.run(["pull", "headlines"], environment: environment)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        fixture.server.stop()

        let stale = try Binary.run(["pull", "headlines"], environment: environment)
        #expect(stale.status == 0)
        #expect(stale.stdout.contains("(stale)"))
        #expect(stale.stderr.contains("warning: using the cached copy of collection \"headlines\" (stale)"))
        let predicted = try Binary.run(["predict", "--collection", "headlines", "--model-id", "topic",
                                        "President Donald Trump is approving a new law"], environment: environment)
        #expect(predicted.stdout == "US Politics\n")

        let empty = try Binary.temporaryFolder("cache")
        defer { try? FileManager.default.removeItem(at: empty) }
        let unavailable = try Binary.run(["pull", "headlines", "--cache", empty.path], environment: environment)
        #expect(unavailable.status == 69)
        #expect(unavailable.stderr.contains("collection \"headlines\" is unavailable, with no cached copy"))
    }

    private func deploymentID(in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix("deployment ") }?.split(separator: " ").dropFirst().first.map(String.init)
    }
}

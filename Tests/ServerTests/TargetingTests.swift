import Foundation
import TestSupport
import Testing

/// Which deployment a device gets: a table of device contexts against targeting rules, and
/// percentage rollouts over many installation IDs.
@Suite("Targeting and rollouts", .timeLimit(.minutes(10)), .onOwnThreads)
struct TargetingTests {
    @Test("A table of device contexts resolves to the right deployment")
    func contextTable() async throws {
        try await ServerFixture.inProcess { server, client, token in
            try await ServerFixture.createCollection(client, "targets", models: ["m"], token: token)
            func deploy(_ version: String, _ targeting: [String: Any]?) async throws -> String {
                let sha = try await ServerFixture.upload(client, ServerFixture.model(version: version), token: token)
                return try await ServerFixture.deploy(client, "targets", models: ["m": sha], targeting: targeting, token: token)
            }
            // Activated in this order; the newest matching targeted deployment wins.
            let base = try await deploy("default", nil)
            let english = try await deploy("en", ["languageCodes": ["en"]])
            let newPhones = try await deploy("phones", ["deviceClasses": ["phone"], "osVersion": ">=17.4"])
            let linuxApp2 = try await deploy("linux", ["operatingSystems": ["linux"], "appVersion": ">=2.0,<3"])
            let frenchUS = try await deploy("fr-US", ["languageCodes": ["fr"], "regionCodes": ["US"]])

            let table: [(query: String, headers: [String: String], expected: String, why: String)] = [
                ("", [:], base, "no context: the default"),
                ("languageCode=en", [:], english, "language rule"),
                ("languageCode=en-GB", [:], english, "en matches en-GB"),
                ("languageCode=EN_us", [:], english, "case and underscore"),
                ("languageCode=de", [:], base, "another language"),
                ("deviceClass=phone&osVersion=17.4", [:], newPhones, "lower bound included"),
                ("deviceClass=phone&osVersion=17.3.9", [:], base, "below the range"),
                ("deviceClass=phone", [:], base, "a range rule needs the key"),
                ("deviceClass=tablet&osVersion=18", [:], base, "other device class"),
                ("deviceClass=phone&osVersion=18.0.1&languageCode=en", [:], newPhones, "newest match wins over english"),
                ("operatingSystem=Linux&appVersion=2.5", [:], linuxApp2, "os case-insensitive, app range"),
                ("operatingSystem=linux&appVersion=3", [:], base, "upper bound excluded"),
                ("operatingSystem=linux&appVersion=3.0.0", [:], base, "3.0.0 equals 3"),
                ("operatingSystem=linux&appVersion=1.9", [:], base, "below lower bound"),
                ("languageCode=fr&regionCode=us", [:], frenchUS, "every rule must hold"),
                ("languageCode=fr&regionCode=CA", [:], base, "one rule fails"),
                ("", ["X-MLKit-Language-Code": "en"], english, "context from headers"),
                ("languageCode=de", ["X-MLKit-Language-Code": "en"], base, "the query wins over the header"),
                ("", ["X-MLKit-Device-Class": "phone", "X-MLKit-OS-Version": "17.5"], newPhones, "range from a header"),
            ]
            for row in table {
                let got = try await ServerFixture.resolved(client, "targets", query: row.query, headers: row.headers)
                #expect(got == row.expected, "\(row.why): query '\(row.query)' headers \(row.headers)")
            }
        }
    }

    @Test("A rollout covers about its share of 10,000 installation IDs, the same ones every time")
    func rolloutShare() async throws {
        try await ServerFixture.inProcess { _, client, token in try await Self.rolloutShare(client, token: token) }
    }

    /// The body of ``rolloutShare()``, outside the closure: as a closure it crashes the Swift
    /// 6.3.1 compiler's SendNonSendable pass.
    private static func rolloutShare(_ client: RouterClient, token: String) async throws {
        try await ServerFixture.createCollection(client, "rollout", models: ["m"], token: token)
        let baseSHA = try await ServerFixture.upload(client, ServerFixture.model(version: "base"), token: token)
        let base = try await ServerFixture.deploy(client, "rollout", models: ["m": baseSHA], token: token)
        let canarySHA = try await ServerFixture.upload(client, ServerFixture.model(version: "canary"), token: token)
        let canary = try await ServerFixture.deploy(client, "rollout", models: ["m": canarySHA], rollout: 25, token: token)

        let ids = (0..<10_000).map { "installation-\($0)" }
        let first = try await Self.resolveAll(client, ids)
        let inCanary = first.values.filter { $0 == canary }.count
        #expect(first.values.allSatisfy { $0 == canary || $0 == base })
        // 25% of 10,000: the binomial standard deviation is 43, so ±300 is about 7 of them.
        #expect((2_200...2_800).contains(inCanary), "\(inCanary) of 10,000 in a 25% rollout")

        // Stable: the same IDs land in the same deployment again.
        let sample = Array(ids.prefix(1_000))
        let second = try await Self.resolveAll(client, sample)
        #expect(sample.allSatisfy { first[$0] == second[$0] })
        // No installation ID: only full rollouts.
        #expect(try await ServerFixture.resolved(client, "rollout") == base)
        // The installation ID also comes from the header.
        let fromHeader = try await ServerFixture.resolved(client, "rollout", headers: ["X-MLKit-Installation-ID": ids[0]])
        #expect(fromHeader == first[ids[0]])
    }

    @Test("Rules and percentages that cannot be used are refused with the field named")
    func invalidRules() async throws {
        try await ServerFixture.inProcess { server, client, token in
            try await ServerFixture.createCollection(client, "rules", models: ["m"], token: token)
            let sha = try await ServerFixture.upload(client, ServerFixture.model(version: "r"), token: token)
            let cases: [([String: Any], String)] = [
                (["models": ["m": ["sha256": sha]], "targeting": ["osVersion": ">=fourteen"]], "targeting.osVersion"),
                (["models": ["m": ["sha256": sha]], "targeting": ["appVersion": "~2"]], "targeting.appVersion"),
                (["models": ["m": ["sha256": sha]], "targeting": ["languageCode": ["en"]]], "unknown field 'targeting.languageCode'"),
                (["models": ["m": ["sha256": sha]], "rolloutPercentage": 120], "rolloutPercentage"),
                (["models": ["m": ["sha256": sha]], "rolloutPercentage": -1], "rolloutPercentage"),
            ]
            for (body, field) in cases {
                let answer = try await client.send("POST", "/v1/collections/rules/deployments", json: body, token: token)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.errorMessage.contains(field), "\(answer.errorMessage)")
            }
        }
    }

    /// Resolves each installation ID, 32 requests at a time.
    private static func resolveAll(_ client: some APIClient, _ ids: [String]) async throws -> [String: String] {
        try await withThrowingTaskGroup(of: (String, String).self) { group in
            var results: [String: String] = [:]
            var next = 0
            func add() {
                let id = ids[next]
                next += 1
                group.addTask { (id, try await ServerFixture.resolved(client, "rollout", query: "installationID=\(id)")) }
            }
            while next < min(32, ids.count) { add() }
            while let (id, deployment) = try await group.next() {
                results[id] = deployment
                if next < ids.count { add() }
            }
            return results
        }
    }
}

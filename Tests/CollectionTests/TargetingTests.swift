import Crypto
import Foundation
import MLKitCollections
import TestSupport
import Testing

@Suite("Targeting from the client side: the device context picks the deployment", .timeLimit(.minutes(10)), .onOwnThreads)
struct TargetingTests {
    @Test("A table of contexts against rules, version ranges and a rollout")
    func contextTable() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let model = ["topic": Binary.headlinesModel]
        let standard = try await fixture.deploy("news", model)
        let french = try await fixture.deploy("news", model, targeting: Targeting(languageCodes: ["fr"], osVersion: ">=14"))
        let american = try await fixture.deploy("news", model, targeting: Targeting(regionCodes: ["US"], appVersion: ">=2.0,<3"),
                                                rollout: 50)
        let inside = try installationID(in: true, collection: "news", deployment: american.deploymentID)
        let outside = try installationID(in: false, collection: "news", deployment: american.deploymentID)

        let table: [(DeviceContext, Deployment, Comment)] = [
            (DeviceContext(installationID: inside), standard, "no keys: the default"),
            (DeviceContext(languageCode: "fr", osVersion: "14.1", installationID: inside), french, "fr, OS 14.1"),
            (DeviceContext(languageCode: "fr-CA", osVersion: "14", installationID: inside), french, "fr-CA matches fr"),
            (DeviceContext(languageCode: "fr", osVersion: "13.9", installationID: inside), standard, "OS too old"),
            (DeviceContext(languageCode: "fr", installationID: inside), standard, "a rule on a key the context lacks"),
            (DeviceContext(regionCode: "US", appVersion: "2.5", installationID: inside), american, "US, app 2.5, in the rollout"),
            (DeviceContext(regionCode: "us", appVersion: "2", installationID: inside), american, "region case-insensitive, 2 = 2.0"),
            (DeviceContext(regionCode: "US", appVersion: "3.0", installationID: inside), standard, "app version past the range"),
            (DeviceContext(regionCode: "US", appVersion: "2.5", installationID: outside), standard, "outside the rollout"),
            (DeviceContext(languageCode: "fr", osVersion: "15", regionCode: "US", appVersion: "2.5", installationID: outside),
             french, "outside the newer rollout, inside the older rule"),
            (DeviceContext(languageCode: "fr", osVersion: "15", regionCode: "US", appVersion: "2.5", installationID: inside),
             american, "both match: the newest activation wins"),
        ]
        for (context, expected, comment) in table {
            let collection = try await fixture.access("news", context: context)
            #expect(collection.deploymentID == expected.deploymentID, comment)
        }
    }

    @Test("Every field of the client's Targeting reaches the server's rules and comes back unchanged")
    func targetingWireFormat() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let model = ["topic": Binary.headlinesModel]
        let standard = try await fixture.deploy("wire", model)
        // MLKitServer keeps its own Targeting (it parses the ranges and evaluates the rules), so
        // this test is what keeps the two types in step: see docs/architecture.md.
        let rules = Targeting(languageCodes: ["de", "fr"], deviceClasses: ["phone", "tablet"], operatingSystems: ["linux", "ios"],
                              osVersion: ">=14,<17.4", regionCodes: ["FR", "BE"], appVersion: ">=2.0,<3")
        let targeted = try await fixture.deploy("wire", model, targeting: rules)
        #expect(targeted.targeting == rules)
        let history = try await fixture.publisher.history(of: "wire")
        #expect(history.deployments.first { $0.deploymentID == targeted.deploymentID }?.targeting == rules)

        let matching = DeviceContext(languageCode: "fr", deviceClass: "tablet", operatingSystem: "ios", osVersion: "16.2",
                                     regionCode: "BE", appVersion: "2.5", installationID: "wire")
        #expect(try await fixture.access("wire", context: matching).deploymentID == targeted.deploymentID)
        // Each rule on its own turns a device away, so the server read every field.
        let mismatches: [(WritableKeyPath<DeviceContext, String?>, String)] = [
            (\.languageCode, "en"), (\.deviceClass, "desktop"), (\.operatingSystem, "macos"),
            (\.osVersion, "17.4"), (\.regionCode, "US"), (\.appVersion, "3.0"),
        ]
        for (field, value) in mismatches {
            var context = matching
            context[keyPath: field] = value
            #expect(try await fixture.access("wire", context: context).deploymentID == standard.deploymentID, "\(field) = \(value)")
        }
    }

    @Test("The rollout follows the documented bucket for each installation ID, about half of them at 50%")
    func rolloutShare() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        let model = ["topic": Binary.headlinesModel]
        _ = try await fixture.deploy("news", model)
        let half = try await fixture.deploy("news", model, targeting: Targeting(regionCodes: ["US"]), rollout: 50)
        var included = 0
        let count = 200
        for index in 0..<count {
            let id = "installation-\(index)"
            let context = DeviceContext(regionCode: "US", installationID: id)
            let resolved = try await fixture.access("news", context: context).deploymentID
            let expected = bucket(collection: "news", deployment: half.deploymentID, installation: id) < 5000
            #expect((resolved == half.deploymentID) == expected, "installation \(id)")
            if resolved == half.deploymentID { included += 1 }
            if index < 10 {  // stable: the same ID gets the same answer again
                #expect(try await fixture.access("news", context: context).deploymentID == resolved)
            }
        }
        #expect((70...130).contains(included), "\(included) of \(count)")
    }

    @Test("Without an installation ID, the cache folder's own one is made once and kept")
    func installationIDPersisted() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.tearDown() }
        try await fixture.deploy("news", ["topic": Binary.headlinesModel])
        _ = try await fixture.access("news")
        let file = fixture.cache.appendingPathComponent("installation-id")
        let id = try String(contentsOf: file, encoding: .utf8)
        #expect(UUID(uuidString: id.trimmingCharacters(in: .whitespacesAndNewlines)) != nil)
        _ = try await fixture.access("news")
        #expect(try String(contentsOf: file, encoding: .utf8) == id)
    }

    /// The rollout bucket of `docs/collection-server.md`.
    private func bucket(collection: String, deployment: String, installation: String) -> UInt64 {
        let digest = SHA256.hash(data: Data("\(collection):\(deployment):\(installation)".utf8))
        return digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 10_000
    }

    private func installationID(in rollout: Bool, collection: String, deployment: String) throws -> String {
        for index in 0..<1000 {
            let id = "device-\(index)"
            if (bucket(collection: collection, deployment: deployment, installation: id) < 5000) == rollout { return id }
        }
        throw TestFailure("no installation ID found")
    }
}

import Foundation
@testable import MLKitServer
import TestSupport
import Testing

/// A collection store and its model file store, opened as a server opens them, over a data
/// folder (and a PostgreSQL database) of the test's own.
struct OpenedStores: Sendable {
    let kind: StoreKind
    let folder: URL
    let storage: ServerStorage
    let database: URL?
    /// Whether ``close()`` removes the folder (a second SQLite connection shares the first's).
    var ownsFolder = true
    var store: any CollectionStore { storage.store }
    var files: any ModelFileStore { storage.files }

    /// Opens new, empty stores of `kind`.
    static func open(_ kind: StoreKind) async throws -> OpenedStores {
        let folder = try ChildProcess.temporaryFolder("store")
        let database = kind == .postgres ? try PostgresCluster.createDatabase("contract") : nil
        let configuration = CollectionServer.Configuration(dataFolder: folder, port: 0, database: database)
        let storage = try await ServerStorage.open(configuration, logger: CollectionServer.quietLogger)
        return OpenedStores(kind: kind, folder: folder, storage: storage, database: database)
    }

    /// Opens the same stores again, as a second replica (PostgreSQL, with a cache folder of
    /// its own) or a second connection to the same file (SQLite).
    func openAnother() async throws -> OpenedStores {
        let folder = kind == .postgres ? try ChildProcess.temporaryFolder("store") : self.folder
        let configuration = CollectionServer.Configuration(dataFolder: folder, port: 0, database: database)
        let storage = try await ServerStorage.open(configuration, logger: CollectionServer.quietLogger)
        return OpenedStores(kind: kind, folder: folder, storage: storage, database: database, ownsFolder: kind == .postgres)
    }

    func close() async {
        await storage.close()
        if ownsFolder { try? FileManager.default.removeItem(at: folder) }
    }

    /// Runs `body` over new stores of `kind`, closed afterwards.
    static func with<Value: Sendable>(_ kind: StoreKind,
                                      _ body: (OpenedStores) async throws -> Value) async throws -> Value {
        let stores = try await open(kind)
        do {
            let value = try await body(stores)
            await stores.close()
            return value
        } catch {
            await stores.close()
            throw error
        }
    }
}

/// The contract every ``CollectionStore`` keeps, run against SQLite and PostgreSQL alike so
/// that the two cannot drift apart.
@Suite("The store contract (SQLite and PostgreSQL)", .timeLimit(.minutes(10)), .onOwnThreads)
struct StoreContractTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func file(_ n: Int, key: String? = nil) -> ModelFileRecord {
        ModelFileRecord(sha256: String(repeating: String(n % 10), count: 64), size: Int64(100 + n), formatVersion: 3,
                        encrypted: key != nil, keyIdentifier: key, kind: "linear", version: "\(n)", created: now)
    }

    static func deployment(_ id: String, collection: String, file: ModelFileRecord, targeting: Targeting = .everyone,
                           rollout: Double = 100) -> DeploymentRecord {
        DeploymentRecord(deploymentID: id, collection: collection,
                         models: ["m": DeployedModel(file: file, version: file.version ?? "")],
                         targeting: targeting, rolloutPercentage: rollout, status: .draft, created: now)
    }

    @Test("Collections are created, updated, listed in order and bump their revision", arguments: StoreKind.testable)
    func collections(kind: StoreKind) async throws {
        try await OpenedStores.with(kind) { (stores) async throws in
            let store = stores.store
            #expect(try await store.collection("news") == nil)
            #expect(try await store.revision(collection: "news") == nil)
            let (created, isNew) = try await store.saveCollection(identifier: "news", description: "first",
                                                                  modelIdentifiers: ["b", "a"], at: Self.now)
            #expect(isNew)
            #expect(created.modelIdentifiers == ["b", "a"])
            #expect(created.defaultDeploymentID == nil)
            let before = try #require(try await store.revision(collection: "news"))
            let (updated, isNewAgain) = try await store.saveCollection(
                identifier: "news", description: "second", modelIdentifiers: ["a"], at: Self.now.addingTimeInterval(5))
            #expect(!isNewAgain)
            #expect(updated.description == "second")
            #expect(updated.created == Self.now)
            #expect(updated.updated == Self.now.addingTimeInterval(5))
            #expect(try #require(try await store.revision(collection: "news")) > before)
            _ = try await store.saveCollection(identifier: "Alpha", description: "", modelIdentifiers: [], at: Self.now)
            _ = try await store.saveCollection(identifier: "beta", description: "", modelIdentifiers: [], at: Self.now)
            #expect(try await store.collections().map(\.identifier) == ["Alpha", "beta", "news"])
        }
    }

    @Test("Model file records are added once and read back whole", arguments: StoreKind.testable)
    func modelFiles(kind: StoreKind) async throws {
        try await OpenedStores.with(kind) { (stores) async throws in
            let file = Self.file(1, key: "k1")
            #expect(try await stores.store.modelFile(file.sha256) == nil)
            #expect(try await stores.store.addModelFile(file))
            #expect(try await !stores.store.addModelFile(file))
            #expect(try await stores.store.modelFile(file.sha256) == file)
        }
    }

    @Test("Deployments activate, supersede and roll back, with their whole history", arguments: StoreKind.testable)
    func deployments(kind: StoreKind) async throws {
        try await OpenedStores.with(kind) { (stores) async throws in
            let store = stores.store
            _ = try await store.saveCollection(identifier: "news", description: "", modelIdentifiers: ["m"], at: Self.now)
            for n in 1...3 { _ = try await store.addModelFile(Self.file(n)) }
            let first = try await store.createDeployment(Self.deployment("d1", collection: "news", file: Self.file(1)),
                                                         activate: true, at: Self.now)
            #expect(first.status == .active)
            #expect(first.activationSequence == 1)
            let draft = try await store.createDeployment(Self.deployment("d2", collection: "news", file: Self.file(2)),
                                                         activate: false, at: Self.now)
            #expect(draft.status == .draft)
            #expect(try await store.activeDeployments(collection: "news")?.map(\.deploymentID) == ["d1"])
            let targeted = try await store.createDeployment(
                Self.deployment("t1", collection: "news", file: Self.file(3), targeting: Targeting(languageCodes: ["fr"])),
                activate: true, at: Self.now)
            #expect(targeted.status == .active)
            let activated = try await store.activateDeployment("d2", collection: "news", at: Self.now.addingTimeInterval(1))
            #expect(activated.status == .active)
            #expect(Set(try #require(try await store.activeDeployments(collection: "news")).map(\.deploymentID)) == ["d2", "t1"])
            #expect(try await store.collection("news")?.defaultDeploymentID == "d2")

            let back = try await store.rollback(collection: "news", to: nil, at: Self.now.addingTimeInterval(2))
            #expect(back.deploymentID == "d1")
            #expect(try await store.collection("news")?.defaultDeploymentID == "d1")
            await #expect(throws: CollectionServerError.self) {
                try await store.rollback(collection: "news", to: nil, at: Self.now)
            }
            let all = try await store.deployments(collection: "news")
            #expect(all.map(\.deploymentID) == ["t1", "d2", "d1"])
            #expect(all.map(\.status) == [.active, .rolledBack, .active])
            #expect(all[2].events.map(\.status) == [.draft, .active, .superseded, .active])
            #expect(all[1].events.map(\.status) == [.draft, .active, .rolledBack])
            #expect(all[1].models["m"]?.file == Self.file(2))
            #expect(all[0].targeting == Targeting(languageCodes: ["fr"]))

            await #expect(throws: CollectionServerError.self) {
                try await store.activateDeployment("nope", collection: "news", at: Self.now)
            }
            #expect(try await store.activeDeployments(collection: "unknown") == nil)
            #expect(try await store.deployments(collection: "unknown").isEmpty)
        }
    }

    @Test("Every change of a collection's deployments moves its revision", arguments: StoreKind.testable)
    func revisions(kind: StoreKind) async throws {
        try await OpenedStores.with(kind) { (stores) async throws in
            let store = stores.store
            _ = try await store.saveCollection(identifier: "c", description: "", modelIdentifiers: ["m"], at: Self.now)
            _ = try await store.addModelFile(Self.file(1))
            _ = try await store.addModelFile(Self.file(2))
            var last = try #require(try await store.revision(collection: "c"))
            func moved() async throws -> Bool {
                let now = try #require(try await store.revision(collection: "c"))
                defer { last = now }
                return now > last
            }
            _ = try await store.createDeployment(Self.deployment("a", collection: "c", file: Self.file(1)), activate: true, at: Self.now)
            #expect(try await moved())
            _ = try await store.createDeployment(Self.deployment("b", collection: "c", file: Self.file(2)), activate: false, at: Self.now)
            #expect(try await moved())
            _ = try await store.activateDeployment("b", collection: "c", at: Self.now)
            #expect(try await moved())
            _ = try await store.rollback(collection: "c", to: "a", at: Self.now)
            #expect(try await moved())
        }
    }

    @Test("Keys are registered once per identifier, and their use is known", arguments: StoreKind.testable)
    func keys(kind: StoreKind) async throws {
        try await OpenedStores.with(kind) { (stores) async throws in
            let store = stores.store
            _ = try await store.saveCollection(identifier: "a", description: "", modelIdentifiers: ["m"], at: Self.now)
            _ = try await store.saveCollection(identifier: "b", description: "", modelIdentifiers: ["m"], at: Self.now)
            let key = KeyRecord(identifier: "k1", keyFile: Data("key file one".utf8))
            #expect(try await store.saveKey(key, collection: "a", at: Self.now))
            #expect(try await !store.saveKey(key, collection: "a", at: Self.now))
            #expect(try await store.saveKey(key, collection: "b", at: Self.now))
            await #expect(throws: CollectionServerError.self) {
                try await store.saveKey(KeyRecord(identifier: "k1", keyFile: Data("another".utf8)), collection: "a", at: Self.now)
            }
            #expect(try await store.key("k1") == key)
            #expect(try await store.key("k2") == nil)
            #expect(try await store.collectionUsesKey("k1", collection: "a"))
            #expect(try await store.collectionUsesKey("k1", collection: nil))
            #expect(try await !store.collectionUsesKey("k2", collection: nil))
            // A key used by a deployment's model file counts too.
            let encrypted = Self.file(7, key: "k2")
            _ = try await store.addModelFile(encrypted)
            _ = try await store.createDeployment(Self.deployment("e", collection: "b", file: encrypted), activate: true, at: Self.now)
            #expect(try await store.collectionUsesKey("k2", collection: "b"))
            #expect(try await !store.collectionUsesKey("k2", collection: "a"))
        }
    }

    @Test("Tokens are kept as their hashes, with scope and collection", arguments: StoreKind.testable)
    func tokens(kind: StoreKind) async throws {
        try await OpenedStores.with(kind) { (stores) async throws in
            let one = TokenRecord(hash: AccessToken.hash("one"), scope: .publish, collection: nil)
            let two = TokenRecord(hash: AccessToken.hash("two"), scope: .read, collection: "news")
            try await stores.store.addToken(one, at: Self.now)
            try await stores.store.addToken(two, at: Self.now)
            #expect(Set(try await stores.store.tokens()) == [one, two])
        }
    }

    @Test("Model file bytes are committed whole and read back as a verified local file", arguments: StoreKind.testable)
    func modelBytes(kind: StoreKind) async throws {
        try await OpenedStores.with(kind) { (stores) async throws in
            // Three and a half chunks of PostgreSQL's 1 MiB.
            var bytes = Data(count: PostgresSchema.chunkSize * 7 / 2)
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ index >> 9) }
            let sha256 = try ServerFixture.sha256(bytes)
            let upload = try stores.files.beginUpload()
            try bytes.withUnsafeBytes { try upload.append($0) }
            #expect(try upload.finish() == sha256)
            try await stores.files.commit(upload, sha256: sha256)
            #expect(try await stores.files.contains(sha256, size: Int64(bytes.count)))
            #expect(try await !stores.files.contains(sha256, size: 1))
            let record = ModelFileRecord(sha256: sha256, size: Int64(bytes.count), formatVersion: 3, encrypted: false,
                                         keyIdentifier: nil, kind: nil, version: nil, created: Self.now)
            _ = try await stores.store.addModelFile(record)
            let local = try #require(try await stores.files.localFile(sha256, record: { record }))
            #expect(local.size == Int64(bytes.count))
            #expect(try Data(contentsOf: URL(fileURLWithPath: local.path)) == bytes)
            #expect(try await stores.files.localFile(String(repeating: "0", count: 64), record: { nil }) == nil)

            // Another replica has none of it cached: it reads the bytes from the database,
            // chunk by chunk, into a verified file of its own.
            let other = try await stores.openAnother()
            let copy = try #require(try await other.files.localFile(sha256, record: { record }))
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy.path)) == bytes)
            await other.close()
            if kind == .postgres {
                #expect(copy.path != local.path)
                #expect(copy.path.hasPrefix(other.folder.appendingPathComponent("cache").path))
                let chunks = try PostgresCluster.psql(try #require(stores.database),
                                                      "SELECT count(*), max(length(bytes)) FROM model_chunk")
                #expect(chunks == "4|\(PostgresSchema.chunkSize)")
            }
        }
    }

    @Test("Replicas that activate different defaults at once leave exactly one active", arguments: StoreKind.testable)
    func activationRace(kind: StoreKind) async throws {
        try await OpenedStores.with(kind) { (stores) async throws in
            let other = try await stores.openAnother()
            let store = stores.store
            _ = try await store.saveCollection(identifier: "race", description: "", modelIdentifiers: ["m"], at: Self.now)
            let count = 16
            for n in 0..<count {
                _ = try await store.addModelFile(Self.file(n))
                _ = try await store.createDeployment(Self.deployment("d\(n)", collection: "race", file: Self.file(n)),
                                                     activate: false, at: Self.now)
            }
            for round in 0..<3 {
                let replicas = [stores.store, other.store]
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in 0..<count {
                        let replica = replicas[n % 2]
                        group.addTask {
                            if round == 2, n % 3 == 0 {
                                _ = try? await replica.rollback(collection: "race", to: nil, at: Self.now)
                            } else {
                                _ = try await replica.activateDeployment("d\((n + round) % count)", collection: "race", at: Self.now)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let all = try await store.deployments(collection: "race")
                let active = all.filter { $0.status == .active && $0.isDefault }
                #expect(active.count == 1, "round \(round): active defaults \(active.map(\.deploymentID))")
                let sequences = all.compactMap(\.activationSequence)
                #expect(Set(sequences).count == sequences.count, "round \(round): activation sequences repeat: \(sequences)")
                #expect(try await other.store.collection("race")?.defaultDeploymentID == active.first?.deploymentID)
            }
            await other.close()
        }
    }
}

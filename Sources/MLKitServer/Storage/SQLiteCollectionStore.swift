import Foundation
import GRDB

/// The collection store in SQLite, through GRDB: one database file in the data folder, in WAL
/// mode, so that reads run side by side with a write. Its schema comes from numbered
/// migrations (``SQLiteCollectionStore/migrator``); a newer server migrates an older file in
/// place at start-up.
final class SQLiteCollectionStore: CollectionStore {
    private let database: DatabasePool
    /// The database file.
    private let path: String

    /// Opens (or creates) the database and runs the migrations it lacks.
    /// - Throws: ``CollectionServerError`` (storage) naming the file.
    init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "mlkit.collections"
        do {
            database = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(database)
        } catch let error as DatabaseError {
            throw Self.failure(error, path: path, "cannot open the database")
        }
    }

    // MARK: Schema

    /// The schema, one migration per change; a migration that shipped is never edited.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: collections, model files, deployments, keys, tokens") { db in
            try db.execute(sql: """
                CREATE TABLE collection (
                    identifier TEXT PRIMARY KEY NOT NULL,
                    description TEXT NOT NULL,
                    modelIdentifiers TEXT NOT NULL,
                    created DATETIME NOT NULL,
                    updated DATETIME NOT NULL
                );
                CREATE TABLE modelFile (
                    sha256 TEXT PRIMARY KEY NOT NULL,
                    size INTEGER NOT NULL,
                    formatVersion INTEGER NOT NULL,
                    encrypted BOOLEAN NOT NULL,
                    keyIdentifier TEXT,
                    kind TEXT,
                    version TEXT,
                    created DATETIME NOT NULL
                );
                CREATE TABLE deployment (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    collection TEXT NOT NULL REFERENCES collection(identifier),
                    targeting TEXT NOT NULL,
                    rolloutPercentage DOUBLE NOT NULL,
                    isDefault BOOLEAN NOT NULL,
                    status TEXT NOT NULL,
                    created DATETIME NOT NULL,
                    activated DATETIME,
                    activationSequence INTEGER
                );
                CREATE INDEX deploymentByCollection ON deployment(collection, status);
                CREATE TABLE deploymentModel (
                    deploymentID TEXT NOT NULL REFERENCES deployment(id),
                    modelIdentifier TEXT NOT NULL,
                    sha256 TEXT NOT NULL REFERENCES modelFile(sha256),
                    version TEXT NOT NULL,
                    PRIMARY KEY (deploymentID, modelIdentifier)
                );
                CREATE TABLE deploymentEvent (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    deploymentID TEXT NOT NULL REFERENCES deployment(id),
                    status TEXT NOT NULL,
                    at DATETIME NOT NULL
                );
                CREATE INDEX deploymentEventByDeployment ON deploymentEvent(deploymentID);
                CREATE TABLE key (
                    identifier TEXT PRIMARY KEY NOT NULL,
                    keyFile BLOB NOT NULL,
                    created DATETIME NOT NULL
                );
                CREATE TABLE collectionKey (
                    collection TEXT NOT NULL REFERENCES collection(identifier),
                    keyIdentifier TEXT NOT NULL REFERENCES key(identifier),
                    PRIMARY KEY (collection, keyIdentifier)
                );
                CREATE TABLE token (
                    hash BLOB PRIMARY KEY NOT NULL,
                    scope TEXT NOT NULL,
                    collection TEXT,
                    created DATETIME NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2: collection revisions, one active default deployment") { db in
            try db.execute(sql: """
                ALTER TABLE collection ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
                CREATE UNIQUE INDEX oneActiveDefault ON deployment(collection) WHERE status = 'active' AND isDefault;
                """)
        }
        return migrator
    }

    /// One server owns the file: its own changes clear its cache, and an entry expires after a
    /// second for the changes of other processes.
    var freshness: ActiveDeploymentCache.Freshness { .expiring(.seconds(1)) }

    func revision(collection: String) async throws -> Int64? {
        try await read { db in
            try Int64.fetchOne(db, sql: "SELECT revision FROM collection WHERE identifier = ?", arguments: [collection])
        }
    }

    /// Bumps a collection's revision.
    /// - Throws: ``CollectionServerError`` 404 for an unknown collection.
    private static func bumpRevision(_ db: Database, _ collection: String) throws {
        try db.execute(sql: "UPDATE collection SET revision = revision + 1 WHERE identifier = ?", arguments: [collection])
        guard db.changesCount > 0 else { throw CollectionServerError.notFound("no collection '\(collection)'") }
    }

    // MARK: Collections

    func collections() async throws -> [CollectionRecord] {
        try await read { db in
            try Row.fetchAll(db, sql: "\(Self.collectionQuery) ORDER BY c.identifier").map(Self.collection)
        }
    }

    func collection(_ identifier: String) async throws -> CollectionRecord? {
        try await read { db in try Self.collection(db, identifier) }
    }

    func saveCollection(identifier: String, description: String, modelIdentifiers: [String],
                        at date: Date) async throws -> (collection: CollectionRecord, created: Bool) {
        let list = String(decoding: try JSONEncoder().encode(modelIdentifiers), as: UTF8.self)
        return try await write { db in
            let exists = try Self.collection(db, identifier) != nil
            if exists {
                try db.execute(sql: """
                    UPDATE collection SET description = ?, modelIdentifiers = ?, updated = ?, revision = revision + 1
                    WHERE identifier = ?
                    """,
                               arguments: [description, list, date, identifier])
            } else {
                try db.execute(sql: "INSERT INTO collection (identifier, description, modelIdentifiers, created, updated) VALUES (?, ?, ?, ?, ?)",
                               arguments: [identifier, description, list, date, date])
            }
            guard let saved = try Self.collection(db, identifier) else {
                throw CollectionServerError.storage("collection '\(identifier)' vanished while being saved")
            }
            return (saved, !exists)
        }
    }

    private static let collectionQuery = """
        SELECT c.*, (SELECT d.id FROM deployment d
                     WHERE d.collection = c.identifier AND d.status = 'active' AND d.isDefault) AS defaultDeploymentID
        FROM collection c
        """

    private static func collection(_ db: Database, _ identifier: String) throws -> CollectionRecord? {
        try Row.fetchOne(db, sql: "\(collectionQuery) WHERE c.identifier = ?", arguments: [identifier]).map(collection)
    }

    private static func collection(_ row: Row) throws -> CollectionRecord {
        let list: String = row["modelIdentifiers"]
        return CollectionRecord(
            identifier: row["identifier"], description: row["description"],
            modelIdentifiers: try JSONDecoder().decode([String].self, from: Data(list.utf8)),
            created: row["created"], updated: row["updated"], defaultDeploymentID: row["defaultDeploymentID"])
    }

    // MARK: Model files

    func modelFile(_ sha256: String) async throws -> ModelFileRecord? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM modelFile WHERE sha256 = ?", arguments: [sha256]).map(Self.modelFile)
        }
    }

    func addModelFile(_ file: ModelFileRecord) async throws -> Bool {
        try await write { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO modelFile (sha256, size, formatVersion, encrypted, keyIdentifier, kind, version, created)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [file.sha256, file.size, file.formatVersion, file.encrypted, file.keyIdentifier,
                                 file.kind, file.version, file.created])
            return db.changesCount > 0
        }
    }

    private static func modelFile(_ row: Row) -> ModelFileRecord {
        ModelFileRecord(sha256: row["sha256"], size: row["size"], formatVersion: row["formatVersion"],
                        encrypted: row["encrypted"], keyIdentifier: row["keyIdentifier"], kind: row["kind"],
                        version: row["version"], created: row["created"])
    }

    // MARK: Deployments

    func createDeployment(_ deployment: DeploymentRecord, activate: Bool, at date: Date) async throws -> DeploymentRecord {
        let targeting = String(decoding: try JSONEncoder().encode(deployment.targeting), as: UTF8.self)
        return try await write { db in
            try Self.bumpRevision(db, deployment.collection)
            try db.execute(sql: """
                INSERT INTO deployment (id, collection, targeting, rolloutPercentage, isDefault, status, created)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [deployment.deploymentID, deployment.collection, targeting, deployment.rolloutPercentage,
                                 deployment.isDefault, DeploymentRecord.Status.draft.rawValue, date])
            try Self.addEvent(db, deployment.deploymentID, .draft, date)
            for (identifier, model) in deployment.models {
                try db.execute(sql: "INSERT INTO deploymentModel (deploymentID, modelIdentifier, sha256, version) VALUES (?, ?, ?, ?)",
                               arguments: [deployment.deploymentID, identifier, model.file.sha256, model.version])
            }
            if activate {
                try Self.activate(db, deployment.deploymentID, collection: deployment.collection, at: date)
            }
            return try Self.deployment(db, deployment.deploymentID, collection: deployment.collection)
        }
    }

    func activateDeployment(_ deploymentID: String, collection: String, at date: Date) async throws -> DeploymentRecord {
        try await write { db in
            try Self.bumpRevision(db, collection)
            try Self.activate(db, deploymentID, collection: collection, at: date)
            return try Self.deployment(db, deploymentID, collection: collection)
        }
    }

    func rollback(collection: String, to target: String?, at date: Date) async throws -> DeploymentRecord {
        try await write { db in
            try Self.bumpRevision(db, collection)
            let all = try Self.deployments(db, collection: collection, where: "")
            let changes = try DeploymentLifecycle.rollback(to: target, among: all, collection: collection)
            try Self.apply(db, changes, at: date)
            guard let active = changes.first(where: { $0.status == .active }) else {
                throw CollectionServerError.storage("a rollback activated nothing")
            }
            return try Self.deployment(db, active.deploymentID, collection: collection)
        }
    }

    func deployments(collection: String) async throws -> [DeploymentRecord] {
        try await read { db in
            var deployments = try Self.deployments(db, collection: collection, where: "")
            let events = try Row.fetchAll(db, sql: """
                SELECT e.deploymentID, e.status, e.at FROM deploymentEvent e JOIN deployment d ON d.id = e.deploymentID
                WHERE d.collection = ? ORDER BY e.sequence
                """, arguments: [collection])
            var byDeployment: [String: [DeploymentRecord.Event]] = [:]
            for row in events {
                let status = DeploymentRecord.Status(rawValue: row["status"]) ?? .draft
                byDeployment[row["deploymentID"], default: []].append(.init(status: status, at: row["at"]))
            }
            for index in deployments.indices {
                deployments[index].events = byDeployment[deployments[index].deploymentID] ?? []
            }
            return deployments
        }
    }

    func activeDeployments(collection: String) async throws -> [DeploymentRecord]? {
        try await read { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM collection WHERE identifier = ?", arguments: [collection]) != nil
            else { return nil }
            return try Self.deployments(db, collection: collection, where: "AND d.status = 'active'")
        }
    }

    private static func activate(_ db: Database, _ deploymentID: String, collection: String, at date: Date) throws {
        let all = try deployments(db, collection: collection, where: "")
        guard let target = all.first(where: { $0.deploymentID == deploymentID }) else {
            throw CollectionServerError.notFound("collection '\(collection)' has no deployment '\(deploymentID)'")
        }
        try apply(db, DeploymentLifecycle.activate(target, among: all), at: date)
    }

    private static func apply(_ db: Database, _ changes: [DeploymentLifecycle.Change], at date: Date) throws {
        for change in changes {
            if let sequence = change.activationSequence {
                try db.execute(sql: "UPDATE deployment SET status = ?, activated = ?, activationSequence = ? WHERE id = ?",
                               arguments: [change.status.rawValue, date, sequence, change.deploymentID])
            } else {
                try db.execute(sql: "UPDATE deployment SET status = ? WHERE id = ?",
                               arguments: [change.status.rawValue, change.deploymentID])
            }
            try addEvent(db, change.deploymentID, change.status, date)
        }
    }

    private static func addEvent(_ db: Database, _ deploymentID: String, _ status: DeploymentRecord.Status, _ date: Date) throws {
        try db.execute(sql: "INSERT INTO deploymentEvent (deploymentID, status, at) VALUES (?, ?, ?)",
                       arguments: [deploymentID, status.rawValue, date])
    }

    private static func deployment(_ db: Database, _ deploymentID: String, collection: String) throws -> DeploymentRecord {
        guard let found = try deployments(db, collection: collection, where: "AND d.id = ?", [deploymentID]).first else {
            throw CollectionServerError.notFound("collection '\(collection)' has no deployment '\(deploymentID)'")
        }
        return found
    }

    /// The deployments of a collection with their models, newest first.
    private static func deployments(_ db: Database, collection: String, where condition: String,
                                    _ extra: [String] = []) throws -> [DeploymentRecord] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT d.sequence, d.id, d.collection, d.targeting, d.rolloutPercentage, d.status, d.created, d.activated,
                   d.activationSequence, m.modelIdentifier, m.version AS deployedVersion, f.*
            FROM deployment d
            JOIN deploymentModel m ON m.deploymentID = d.id
            JOIN modelFile f ON f.sha256 = m.sha256
            WHERE d.collection = ? \(condition)
            ORDER BY d.sequence DESC
            """, arguments: StatementArguments([collection] + extra))
        var deployments: [DeploymentRecord] = []
        for row in rows {
            let id: String = row["id"]
            if deployments.last?.deploymentID != id {
                let targeting: String = row["targeting"]
                let statusText: String = row["status"]
                guard let status = DeploymentRecord.Status(rawValue: statusText) else {
                    throw CollectionServerError.storage("deployment '\(id)' has an unknown status '\(statusText)'")
                }
                deployments.append(DeploymentRecord(
                    deploymentID: id, collection: row["collection"], models: [:],
                    targeting: try JSONDecoder().decode(Targeting.self, from: Data(targeting.utf8)),
                    rolloutPercentage: row["rolloutPercentage"], status: status, created: row["created"],
                    activated: row["activated"], activationSequence: row["activationSequence"]))
            }
            deployments[deployments.count - 1].models[row["modelIdentifier"]] =
                DeployedModel(file: modelFile(row), version: row["deployedVersion"])
        }
        return deployments
    }

    // MARK: Keys

    func saveKey(_ key: KeyRecord, collection: String, at date: Date) async throws -> Bool {
        try await write { db in
            if let stored = try Data.fetchOne(db, sql: "SELECT keyFile FROM key WHERE identifier = ?", arguments: [key.identifier]) {
                guard stored == key.keyFile else {
                    throw CollectionServerError.conflict("a different key with the identifier '\(key.identifier)' is registered")
                }
            } else {
                try db.execute(sql: "INSERT INTO key (identifier, keyFile, created) VALUES (?, ?, ?)",
                               arguments: [key.identifier, key.keyFile, date])
            }
            try db.execute(sql: "INSERT OR IGNORE INTO collectionKey (collection, keyIdentifier) VALUES (?, ?)",
                           arguments: [collection, key.identifier])
            return db.changesCount > 0
        }
    }

    func key(_ identifier: String) async throws -> KeyRecord? {
        try await read { db in
            try Data.fetchOne(db, sql: "SELECT keyFile FROM key WHERE identifier = ?", arguments: [identifier])
                .map { KeyRecord(identifier: identifier, keyFile: $0) }
        }
    }

    func collectionUsesKey(_ identifier: String, collection: String?) async throws -> Bool {
        try await read { db in
            let filter = collection == nil ? "" : "AND collection = ?"
            let arguments = StatementArguments([identifier] + (collection.map { [$0] } ?? []))
            let registered = try Bool.fetchOne(
                db, sql: "SELECT 1 FROM collectionKey WHERE keyIdentifier = ? \(filter)", arguments: arguments) != nil
            if registered { return true }
            return try Bool.fetchOne(db, sql: """
                SELECT 1 FROM deploymentModel m JOIN modelFile f ON f.sha256 = m.sha256
                JOIN deployment d ON d.id = m.deploymentID
                WHERE f.keyIdentifier = ? \(collection == nil ? "" : "AND d.collection = ?")
                """, arguments: arguments) != nil
        }
    }

    // MARK: Tokens

    func addToken(_ token: TokenRecord, at date: Date) async throws {
        try await write { db in
            try db.execute(sql: "INSERT INTO token (hash, scope, collection, created) VALUES (?, ?, ?, ?)",
                           arguments: [Data(token.hash), token.scope.rawValue, token.collection, date])
        }
    }

    func tokens() async throws -> [TokenRecord] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT hash, scope, collection FROM token").compactMap { row in
                let hash: Data = row["hash"]
                guard let scope = TokenScope(rawValue: row["scope"]) else { return nil }
                return TokenRecord(hash: Array(hash), scope: scope, collection: row["collection"])
            }
        }
    }

    // MARK: Access

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.read(body)
        } catch let error as DatabaseError {
            throw Self.failure(error, path: path, "cannot read the database")
        }
    }

    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await database.write(body)
        } catch let error as DatabaseError {
            throw Self.failure(error, path: path, "cannot write the database")
        }
    }

    /// A database error as the server's error, naming the file: `insufficientStorage` when the
    /// disk is full (the change is rolled back whole), `storage` otherwise.
    private static func failure(_ error: DatabaseError, path: String, _ what: String) -> CollectionServerError {
        let reason = error.message ?? "\(error)"
        if error.resultCode == .SQLITE_FULL {
            return CollectionServerError(.insufficientStorage, "\(path): \(what): the disk is full (\(reason))")
        }
        return .storage("\(path): \(what): \(reason)")
    }
}

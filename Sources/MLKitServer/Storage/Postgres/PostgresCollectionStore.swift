import Foundation
import PostgresNIO

/// The collection store in PostgreSQL, shared by every replica (`mlkit serve --database`).
///
/// Each change of a collection is one transaction that starts by bumping the collection's
/// `revision`: that row lock makes concurrent changes to one collection, from any replica,
/// take turns, and the revision tells every replica's cache that its copy is old. A partial
/// unique index keeps at most one default deployment active per collection, whatever happens.
final class PostgresCollectionStore: CollectionStore {
    let database: SharedDatabase
    private var logger: Logger { database.queryLogger }

    private init(database: SharedDatabase) {
        self.database = database
    }

    /// Runs the migrations the database lacks (under an advisory lock) and opens the store.
    static func open(_ database: SharedDatabase) async throws -> PostgresCollectionStore {
        try await PostgresSchema.migrate(database)
        return PostgresCollectionStore(database: database)
    }

    var freshness: ActiveDeploymentCache.Freshness { .readThrough }

    // MARK: Collections

    func revision(collection: String) async throws -> Int64? {
        let logger = self.logger
        return try await database.withConnection { connection in
            let rows = try await connection.query("SELECT revision FROM collection WHERE identifier = \(collection)",
                                                  logger: logger)
            for try await revision in rows.decode(Int64.self) { return revision }
            return nil
        }
    }

    func collections() async throws -> [CollectionRecord] {
        let logger = self.logger
        return try await database.withConnection { connection in
            try await Self.collections(connection, identifier: nil, logger: logger)
        }
    }

    func collection(_ identifier: String) async throws -> CollectionRecord? {
        let logger = self.logger
        return try await database.withConnection { connection in
            try await Self.collections(connection, identifier: identifier, logger: logger).first
        }
    }

    func saveCollection(identifier: String, description: String, modelIdentifiers: [String],
                        at date: Date) async throws -> (collection: CollectionRecord, created: Bool) {
        let list = String(decoding: try JSONEncoder().encode(modelIdentifiers), as: UTF8.self)
        let logger = self.logger
        return try await database.transaction { connection in
            let rows = try await connection.query("""
                INSERT INTO collection (identifier, description, model_identifiers, created, updated)
                VALUES (\(identifier), \(description), \(list), \(date), \(date))
                ON CONFLICT (identifier) DO UPDATE SET description = EXCLUDED.description,
                    model_identifiers = EXCLUDED.model_identifiers, updated = EXCLUDED.updated,
                    revision = collection.revision + 1
                RETURNING (xmax = 0)
                """, logger: logger)
            var created = false
            for try await inserted in rows.decode(Bool.self) { created = inserted }
            guard let saved = try await Self.collections(connection, identifier: identifier, logger: logger).first else {
                throw CollectionServerError.storage("collection '\(identifier)' vanished while being saved")
            }
            return (saved, created)
        }
    }

    private static func collections(_ connection: PostgresConnection, identifier: String?,
                                    logger: Logger) async throws -> [CollectionRecord] {
        let rows = try await connection.query("""
            SELECT c.identifier, c.description, c.model_identifiers, c.created, c.updated,
                   (SELECT d.id FROM deployment d WHERE d.collection = c.identifier AND d.status = 'active' AND d.is_default)
            FROM collection c
            WHERE \(identifier == nil) OR c.identifier = \(identifier ?? "")
            ORDER BY c.identifier COLLATE "C"
            """, logger: logger)
        var collections: [CollectionRecord] = []
        for try await (identifier, description, list, created, updated, defaultID)
            in rows.decode((String, String, String, Date, Date, String?).self) {
            collections.append(CollectionRecord(
                identifier: identifier, description: description,
                modelIdentifiers: try JSONDecoder().decode([String].self, from: Data(list.utf8)),
                created: created, updated: updated, defaultDeploymentID: defaultID))
        }
        return collections
    }

    // MARK: Model files

    func modelFile(_ sha256: String) async throws -> ModelFileRecord? {
        let logger = self.logger
        return try await database.withConnection { connection in
            let rows = try await connection.query("""
                SELECT sha256, size, format_version, encrypted, key_identifier, kind, version, created
                FROM model_file WHERE sha256 = \(sha256)
                """, logger: logger)
            for try await row in rows.decode((String, Int64, Int, Bool, String?, String?, String?, Date).self) {
                return ModelFileRecord(sha256: row.0, size: row.1, formatVersion: row.2, encrypted: row.3,
                                       keyIdentifier: row.4, kind: row.5, version: row.6, created: row.7)
            }
            return nil
        }
    }

    func addModelFile(_ file: ModelFileRecord) async throws -> Bool {
        let logger = self.logger
        return try await database.withConnection { connection in
            let rows = try await connection.query("""
                INSERT INTO model_file (sha256, size, format_version, encrypted, key_identifier, kind, version, created)
                VALUES (\(file.sha256), \(file.size), \(file.formatVersion), \(file.encrypted), \(file.keyIdentifier),
                        \(file.kind), \(file.version), \(file.created))
                ON CONFLICT (sha256) DO NOTHING
                RETURNING sha256
                """, logger: logger)
            var inserted = false
            for try await _ in rows { inserted = true }
            return inserted
        }
    }

    // MARK: Deployments

    func createDeployment(_ deployment: DeploymentRecord, activate: Bool, at date: Date) async throws -> DeploymentRecord {
        let targeting = String(decoding: try JSONEncoder().encode(deployment.targeting), as: UTF8.self)
        let logger = self.logger
        return try await database.transaction { connection in
            try await Self.lock(connection, deployment.collection, logger: logger)
            try await connection.query("""
                INSERT INTO deployment (id, collection, targeting, rollout_percentage, is_default, status, created)
                VALUES (\(deployment.deploymentID), \(deployment.collection), \(targeting), \(deployment.rolloutPercentage),
                        \(deployment.isDefault), \(DeploymentRecord.Status.draft.rawValue), \(date))
                """, logger: logger)
            try await Self.addEvent(connection, deployment.deploymentID, .draft, date, logger: logger)
            for (identifier, model) in deployment.models.sorted(by: { $0.key < $1.key }) {
                try await connection.query("""
                    INSERT INTO deployment_model (deployment_id, model_identifier, sha256, version)
                    VALUES (\(deployment.deploymentID), \(identifier), \(model.file.sha256), \(model.version))
                    """, logger: logger)
            }
            if activate {
                try await Self.activate(connection, deployment.deploymentID, collection: deployment.collection, at: date,
                                        logger: logger)
            }
            return try await Self.deployment(connection, deployment.deploymentID, collection: deployment.collection,
                                             logger: logger)
        }
    }

    func activateDeployment(_ deploymentID: String, collection: String, at date: Date) async throws -> DeploymentRecord {
        let logger = self.logger
        return try await database.transaction { connection in
            try await Self.lock(connection, collection, logger: logger)
            try await Self.activate(connection, deploymentID, collection: collection, at: date, logger: logger)
            return try await Self.deployment(connection, deploymentID, collection: collection, logger: logger)
        }
    }

    func rollback(collection: String, to target: String?, at date: Date) async throws -> DeploymentRecord {
        let logger = self.logger
        return try await database.transaction { connection in
            try await Self.lock(connection, collection, logger: logger)
            let all = try await Self.deployments(connection, collection: collection, id: nil, activeOnly: false, logger: logger)
            let changes = try DeploymentLifecycle.rollback(to: target, among: all, collection: collection)
            try await Self.apply(connection, changes, at: date, logger: logger)
            guard let active = changes.first(where: { $0.status == .active }) else {
                throw CollectionServerError.storage("a rollback activated nothing")
            }
            return try await Self.deployment(connection, active.deploymentID, collection: collection, logger: logger)
        }
    }

    func deployments(collection: String) async throws -> [DeploymentRecord] {
        let logger = self.logger
        return try await database.withConnection { connection in
            var deployments = try await Self.deployments(connection, collection: collection, id: nil, activeOnly: false,
                                                         logger: logger)
            let rows = try await connection.query("""
                SELECT e.deployment_id, e.status, e.at FROM deployment_event e JOIN deployment d ON d.id = e.deployment_id
                WHERE d.collection = \(collection) ORDER BY e.sequence
                """, logger: logger)
            var byDeployment: [String: [DeploymentRecord.Event]] = [:]
            for try await (id, status, at) in rows.decode((String, String, Date).self) {
                byDeployment[id, default: []].append(.init(status: DeploymentRecord.Status(rawValue: status) ?? .draft, at: at))
            }
            for index in deployments.indices {
                deployments[index].events = byDeployment[deployments[index].deploymentID] ?? []
            }
            return deployments
        }
    }

    func activeDeployments(collection: String) async throws -> [DeploymentRecord]? {
        let logger = self.logger
        return try await database.withConnection { connection in
            let exists = try await connection.query("SELECT 1 FROM collection WHERE identifier = \(collection)", logger: logger)
            var found = false
            for try await _ in exists { found = true }
            guard found else { return nil }
            return try await Self.deployments(connection, collection: collection, id: nil, activeOnly: true, logger: logger)
        }
    }

    /// Bumps the collection's revision, which locks its row until the transaction ends.
    /// - Throws: ``CollectionServerError`` 404 for an unknown collection.
    private static func lock(_ connection: PostgresConnection, _ collection: String, logger: Logger) async throws {
        let rows = try await connection.query(
            "UPDATE collection SET revision = revision + 1 WHERE identifier = \(collection) RETURNING revision", logger: logger)
        var found = false
        for try await _ in rows { found = true }
        guard found else { throw CollectionServerError.notFound("no collection '\(collection)'") }
    }

    private static func activate(_ connection: PostgresConnection, _ deploymentID: String, collection: String, at date: Date,
                                 logger: Logger) async throws {
        let all = try await deployments(connection, collection: collection, id: nil, activeOnly: false, logger: logger)
        guard let target = all.first(where: { $0.deploymentID == deploymentID }) else {
            throw CollectionServerError.notFound("collection '\(collection)' has no deployment '\(deploymentID)'")
        }
        try await apply(connection, DeploymentLifecycle.activate(target, among: all), at: date, logger: logger)
    }

    private static func apply(_ connection: PostgresConnection, _ changes: [DeploymentLifecycle.Change], at date: Date,
                              logger: Logger) async throws {
        for change in changes {
            if let sequence = change.activationSequence {
                try await connection.query("""
                    UPDATE deployment SET status = \(change.status.rawValue), activated = \(date), activation_sequence = \(sequence)
                    WHERE id = \(change.deploymentID)
                    """, logger: logger)
            } else {
                try await connection.query(
                    "UPDATE deployment SET status = \(change.status.rawValue) WHERE id = \(change.deploymentID)", logger: logger)
            }
            try await addEvent(connection, change.deploymentID, change.status, date, logger: logger)
        }
    }

    private static func addEvent(_ connection: PostgresConnection, _ deploymentID: String, _ status: DeploymentRecord.Status,
                                 _ date: Date, logger: Logger) async throws {
        try await connection.query(
            "INSERT INTO deployment_event (deployment_id, status, at) VALUES (\(deploymentID), \(status.rawValue), \(date))",
            logger: logger)
    }

    private static func deployment(_ connection: PostgresConnection, _ deploymentID: String, collection: String,
                                   logger: Logger) async throws -> DeploymentRecord {
        guard let found = try await deployments(connection, collection: collection, id: deploymentID, activeOnly: false,
                                                logger: logger).first else {
            throw CollectionServerError.notFound("collection '\(collection)' has no deployment '\(deploymentID)'")
        }
        return found
    }

    /// The deployments of a collection with their models, newest first: all, the active ones,
    /// or the one with `id`.
    private static func deployments(_ connection: PostgresConnection, collection: String, id: String?, activeOnly: Bool,
                                    logger: Logger) async throws -> [DeploymentRecord] {
        let rows = try await connection.query("""
            SELECT d.id, d.collection, d.targeting, d.rollout_percentage, d.status, d.created, d.activated,
                   d.activation_sequence, m.model_identifier, m.version,
                   f.sha256, f.size, f.format_version, f.encrypted, f.key_identifier, f.kind, f.version, f.created
            FROM deployment d
            JOIN deployment_model m ON m.deployment_id = d.id
            JOIN model_file f ON f.sha256 = m.sha256
            WHERE d.collection = \(collection) AND (\(id == nil) OR d.id = \(id ?? ""))
                  AND (NOT \(activeOnly) OR d.status = 'active')
            ORDER BY d.sequence DESC, m.model_identifier
            """, logger: logger)
        var deployments: [DeploymentRecord] = []
        for try await row in rows.decode((String, String, String, Double, String, Date, Date?, Int?, String, String,
                                          String, Int64, Int, Bool, String?, String?, String?, Date).self) {
            let (id, collection, targeting, rollout, statusText, created, activated, activationSequence,
                 modelIdentifier, deployedVersion, sha256, size, formatVersion, encrypted, keyIdentifier, kind, version,
                 fileCreated) = row
            if deployments.last?.deploymentID != id {
                guard let status = DeploymentRecord.Status(rawValue: statusText) else {
                    throw CollectionServerError.storage("deployment '\(id)' has an unknown status '\(statusText)'")
                }
                deployments.append(DeploymentRecord(
                    deploymentID: id, collection: collection, models: [:],
                    targeting: try JSONDecoder().decode(Targeting.self, from: Data(targeting.utf8)),
                    rolloutPercentage: rollout, status: status, created: created, activated: activated,
                    activationSequence: activationSequence))
            }
            let file = ModelFileRecord(sha256: sha256, size: size, formatVersion: formatVersion, encrypted: encrypted,
                                       keyIdentifier: keyIdentifier, kind: kind, version: version, created: fileCreated)
            deployments[deployments.count - 1].models[modelIdentifier] = DeployedModel(file: file, version: deployedVersion)
        }
        return deployments
    }

    // MARK: Keys

    func saveKey(_ key: KeyRecord, collection: String, at date: Date) async throws -> Bool {
        let logger = self.logger
        return try await database.transaction { connection in
            try await connection.query("""
                INSERT INTO encryption_key (identifier, key_file, created) VALUES (\(key.identifier), \(key.keyFile), \(date))
                ON CONFLICT (identifier) DO NOTHING
                """, logger: logger)
            let stored = try await connection.query(
                "SELECT key_file FROM encryption_key WHERE identifier = \(key.identifier)", logger: logger)
            for try await keyFile in stored.decode(Data.self) where keyFile != key.keyFile {
                throw CollectionServerError.conflict("a different key with the identifier '\(key.identifier)' is registered")
            }
            let rows = try await connection.query("""
                INSERT INTO collection_key (collection, key_identifier) VALUES (\(collection), \(key.identifier))
                ON CONFLICT DO NOTHING RETURNING key_identifier
                """, logger: logger)
            var inserted = false
            for try await _ in rows { inserted = true }
            return inserted
        }
    }

    func key(_ identifier: String) async throws -> KeyRecord? {
        let logger = self.logger
        return try await database.withConnection { connection in
            let rows = try await connection.query("SELECT key_file FROM encryption_key WHERE identifier = \(identifier)",
                                                  logger: logger)
            for try await keyFile in rows.decode(Data.self) { return KeyRecord(identifier: identifier, keyFile: keyFile) }
            return nil
        }
    }

    func collectionUsesKey(_ identifier: String, collection: String?) async throws -> Bool {
        let logger = self.logger
        return try await database.withConnection { connection in
            let rows = try await connection.query("""
                SELECT EXISTS (SELECT 1 FROM collection_key
                               WHERE key_identifier = \(identifier) AND (\(collection == nil) OR collection = \(collection ?? "")))
                    OR EXISTS (SELECT 1 FROM deployment_model m JOIN model_file f ON f.sha256 = m.sha256
                               JOIN deployment d ON d.id = m.deployment_id
                               WHERE f.key_identifier = \(identifier) AND (\(collection == nil) OR d.collection = \(collection ?? "")))
                """, logger: logger)
            for try await uses in rows.decode(Bool.self) { return uses }
            return false
        }
    }

    // MARK: Tokens

    func addToken(_ token: TokenRecord, at date: Date) async throws {
        let logger = self.logger
        _ = try await database.withConnection { connection in
            try await connection.query("""
                INSERT INTO token (hash, scope, collection, created)
                VALUES (\(Data(token.hash)), \(token.scope.rawValue), \(token.collection), \(date))
                """, logger: logger)
        }
    }

    func tokens() async throws -> [TokenRecord] {
        let logger = self.logger
        return try await database.withConnection { connection in
            let rows = try await connection.query("SELECT hash, scope, collection FROM token", logger: logger)
            var tokens: [TokenRecord] = []
            for try await (hash, scope, collection) in rows.decode((Data, String, String?).self) {
                guard let scope = TokenScope(rawValue: scope) else { continue }
                tokens.append(TokenRecord(hash: Array(hash), scope: scope, collection: collection))
            }
            return tokens
        }
    }
}

public import Foundation
import Crypto
import GRDB
import Logging
import PostgresNIO

/// What a copy of an SQLite data folder into the shared database moved and checked.
public struct StoreCopyReport: Sendable, Equatable {
    /// Collections copied.
    public var collections = 0
    /// Deployments copied, with their models and every event of their history.
    public var deployments = 0
    /// Model files copied, each checked against its SHA-256 twice: read from the data folder,
    /// and read back from the database after the copy.
    public var modelFiles = 0
    /// The model files' bytes.
    public var bytes: Int64 = 0
    /// Keys of encrypted models copied.
    public var keys = 0
    /// Bearer tokens copied (their hashes).
    public var tokens = 0
}

extension CollectionServer {
    /// Runs the shared database's migrations, under the same advisory lock as the servers.
    /// - Parameter database: The shared PostgreSQL database.
    /// - Returns: The schema versions applied now, and the version the database is at.
    /// - Throws: ``CollectionServerError``: bad request for an invalid URL, databaseUnavailable
    ///   when it cannot be reached, storage when its schema is newer than this server knows.
    public static func migrateDatabase(_ database: URL) async throws -> (applied: [Int], version: Int) {
        let shared = try await SharedDatabase.open(try DatabaseLocation(database), connections: 1, logger: quietLogger)
        do {
            let applied = try await PostgresSchema.migrate(shared)
            await shared.close()
            return (applied, PostgresSchema.latestVersion)
        } catch {
            await shared.close()
            throw error
        }
    }

    /// Copies the SQLite store of a data folder, with its model files, into an empty shared
    /// database, in one transaction, then reads every model file back from the database and
    /// checks its SHA-256.
    ///
    /// The data folder is only read. The copy keeps every identifier, time and status, the
    /// order of the history, and the tokens (as their hashes), so clients and publishers carry
    /// on against the replicas as they did against the single server.
    /// - Parameters:
    ///   - dataFolder: The data folder of `mlkit serve --data` (`mlkit.sqlite`, `models/`).
    ///   - database: The shared PostgreSQL database; it must hold no collection, model file
    ///     or token yet.
    ///   - progress: Called with a line of text as the copy goes.
    /// - Returns: What was copied.
    /// - Throws: ``CollectionServerError``: not found for a folder without `mlkit.sqlite`,
    ///   conflict for a database that holds data, unprocessable for a model file whose bytes
    ///   are missing or do not match their name, storage or databaseUnavailable for the
    ///   database.
    public static func copyStore(from dataFolder: URL, to database: URL,
                                 progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> StoreCopyReport {
        let source = try SQLiteSnapshot.read(dataFolder)
        let shared = try await SharedDatabase.open(try DatabaseLocation(database), connections: 2, logger: quietLogger)
        do {
            let report = try await StoreCopy(source: source, database: shared, progress: progress).run()
            await shared.close()
            return report
        } catch {
            await shared.close()
            throw error
        }
    }
}

/// Everything an SQLite store holds but the model files' bytes, read at once.
struct SQLiteSnapshot: Sendable {
    struct Deployment: Sendable {
        var sequence: Int64, id: String, collection: String, targeting: String, rollout: Double, isDefault: Bool
        var status: String, created: Date, activated: Date?, activationSequence: Int64?
    }

    struct Event: Sendable {
        var sequence: Int64, deploymentID: String, status: String, at: Date
    }

    struct Model: Sendable {
        var deploymentID: String, modelIdentifier: String, sha256: String, version: String
    }

    struct Key: Sendable {
        var identifier: String, keyFile: Data, created: Date
    }

    struct Token: Sendable {
        var hash: Data, scope: String, collection: String?, created: Date
    }

    let modelsFolder: URL
    var collections: [CollectionRecord] = []
    var files: [ModelFileRecord] = []
    var deployments: [Deployment] = []
    var models: [Model] = []
    var events: [Event] = []
    var keys: [Key] = []
    var collectionKeys: [(collection: String, key: String)] = []
    var tokens: [Token] = []

    /// Reads `DATA/mlkit.sqlite` without changing it.
    static func read(_ dataFolder: URL) throws -> SQLiteSnapshot {
        let path = dataFolder.appendingPathComponent("mlkit.sqlite").path
        guard FileManager.default.fileExists(atPath: path) else {
            throw CollectionServerError.notFound("\(path): no such file; --from names the data folder of `mlkit serve --data`")
        }
        var snapshot = SQLiteSnapshot(modelsFolder: dataFolder.appendingPathComponent("models"))
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.read { db in
                for row in try Row.fetchAll(db, sql: "SELECT * FROM collection ORDER BY identifier") {
                    let list: String = row["modelIdentifiers"]
                    snapshot.collections.append(CollectionRecord(
                        identifier: row["identifier"], description: row["description"],
                        modelIdentifiers: try JSONDecoder().decode([String].self, from: Data(list.utf8)),
                        created: row["created"], updated: row["updated"], defaultDeploymentID: nil))
                }
                for row in try Row.fetchAll(db, sql: "SELECT * FROM modelFile ORDER BY sha256") {
                    snapshot.files.append(ModelFileRecord(
                        sha256: row["sha256"], size: row["size"], formatVersion: row["formatVersion"], encrypted: row["encrypted"],
                        keyIdentifier: row["keyIdentifier"], kind: row["kind"], version: row["version"], created: row["created"]))
                }
                for row in try Row.fetchAll(db, sql: "SELECT * FROM deployment ORDER BY sequence") {
                    snapshot.deployments.append(Deployment(
                        sequence: row["sequence"], id: row["id"], collection: row["collection"], targeting: row["targeting"],
                        rollout: row["rolloutPercentage"], isDefault: row["isDefault"], status: row["status"],
                        created: row["created"], activated: row["activated"], activationSequence: row["activationSequence"]))
                }
                for row in try Row.fetchAll(db, sql: "SELECT * FROM deploymentModel ORDER BY deploymentID, modelIdentifier") {
                    snapshot.models.append(Model(deploymentID: row["deploymentID"], modelIdentifier: row["modelIdentifier"],
                                                 sha256: row["sha256"], version: row["version"]))
                }
                for row in try Row.fetchAll(db, sql: "SELECT * FROM deploymentEvent ORDER BY sequence") {
                    snapshot.events.append(Event(sequence: row["sequence"], deploymentID: row["deploymentID"],
                                                 status: row["status"], at: row["at"]))
                }
                for row in try Row.fetchAll(db, sql: "SELECT * FROM key ORDER BY identifier") {
                    snapshot.keys.append(Key(identifier: row["identifier"], keyFile: row["keyFile"], created: row["created"]))
                }
                for row in try Row.fetchAll(db, sql: "SELECT * FROM collectionKey ORDER BY collection, keyIdentifier") {
                    snapshot.collectionKeys.append((row["collection"], row["keyIdentifier"]))
                }
                for row in try Row.fetchAll(db, sql: "SELECT * FROM token ORDER BY created") {
                    snapshot.tokens.append(Token(hash: row["hash"], scope: row["scope"], collection: row["collection"],
                                                 created: row["created"]))
                }
            }
        } catch let error as DatabaseError {
            throw CollectionServerError.storage("\(path): cannot read the database: \(error.message ?? "\(error)")")
        }
        return snapshot
    }
}

/// The copy of one SQLite snapshot into the shared database.
private struct StoreCopy: Sendable {
    let source: SQLiteSnapshot
    let database: SharedDatabase
    let progress: @Sendable (String) -> Void

    func run() async throws -> StoreCopyReport {
        let applied = try await PostgresSchema.migrate(database)
        if !applied.isEmpty { progress("schema: migrations \(applied.map(String.init).joined(separator: ", ")) applied") }
        try await refuseNonEmpty()
        try checkModelFiles()
        let logger = database.queryLogger
        let source = self.source
        let progress = self.progress
        var report = try await database.transaction { connection in
            var report = StoreCopyReport()
            for collection in source.collections {
                let list = String(decoding: try JSONEncoder().encode(collection.modelIdentifiers), as: UTF8.self)
                try await connection.query("""
                    INSERT INTO collection (identifier, description, model_identifiers, created, updated, revision)
                    VALUES (\(collection.identifier), \(collection.description), \(list), \(collection.created),
                            \(collection.updated), 1)
                    """, logger: logger)
                report.collections += 1
            }
            for file in source.files {
                let path = source.modelsFolder.appendingPathComponent(file.sha256).path
                try await SharedModelFileStore.insertBytes(fileAt: path, size: file.size, sha256: file.sha256,
                                                           connection: connection, logger: logger)
                try await connection.query("""
                    INSERT INTO model_file (sha256, size, format_version, encrypted, key_identifier, kind, version, created)
                    VALUES (\(file.sha256), \(file.size), \(file.formatVersion), \(file.encrypted), \(file.keyIdentifier),
                            \(file.kind), \(file.version), \(file.created))
                    """, logger: logger)
                report.modelFiles += 1
                report.bytes += file.size
                progress("model file \(file.sha256): \(file.size) bytes")
            }
            for deployment in source.deployments {
                try await connection.query("""
                    INSERT INTO deployment (sequence, id, collection, targeting, rollout_percentage, is_default, status,
                                            created, activated, activation_sequence)
                    VALUES (\(deployment.sequence), \(deployment.id), \(deployment.collection), \(deployment.targeting),
                            \(deployment.rollout), \(deployment.isDefault), \(deployment.status), \(deployment.created),
                            \(deployment.activated), \(deployment.activationSequence))
                    """, logger: logger)
                report.deployments += 1
            }
            for model in source.models {
                try await connection.query("""
                    INSERT INTO deployment_model (deployment_id, model_identifier, sha256, version)
                    VALUES (\(model.deploymentID), \(model.modelIdentifier), \(model.sha256), \(model.version))
                    """, logger: logger)
            }
            for event in source.events {
                try await connection.query("""
                    INSERT INTO deployment_event (sequence, deployment_id, status, at)
                    VALUES (\(event.sequence), \(event.deploymentID), \(event.status), \(event.at))
                    """, logger: logger)
            }
            for key in source.keys {
                try await connection.query(
                    "INSERT INTO encryption_key (identifier, key_file, created) VALUES (\(key.identifier), \(key.keyFile), \(key.created))",
                    logger: logger)
                report.keys += 1
            }
            for (collection, key) in source.collectionKeys {
                try await connection.query(
                    "INSERT INTO collection_key (collection, key_identifier) VALUES (\(collection), \(key))", logger: logger)
            }
            for token in source.tokens {
                try await connection.query("""
                    INSERT INTO token (hash, scope, collection, created)
                    VALUES (\(token.hash), \(token.scope), \(token.collection), \(token.created))
                    """, logger: logger)
                report.tokens += 1
            }
            // The identity sequences continue after the copied rows.
            try await connection.query(
                "SELECT setval(pg_get_serial_sequence('deployment', 'sequence'), GREATEST((SELECT max(sequence) FROM deployment), 1))",
                logger: logger)
            try await connection.query("""
                SELECT setval(pg_get_serial_sequence('deployment_event', 'sequence'),
                              GREATEST((SELECT max(sequence) FROM deployment_event), 1))
                """, logger: logger)
            return report
        }
        report.modelFiles = try await verify()
        return report
    }

    /// Refuses a database that holds anything already: a copy goes into an empty one.
    private func refuseNonEmpty() async throws {
        let logger = database.queryLogger
        let counts: [Int64] = try await database.withConnection { connection in
            let rows = try await connection.query("""
                SELECT (SELECT count(*) FROM collection), (SELECT count(*) FROM model_blob), (SELECT count(*) FROM token)
                """, logger: logger)
            for try await (collections, blobs, tokens) in rows.decode((Int64, Int64, Int64).self) {
                return [collections, blobs, tokens]
            }
            return [0, 0, 0]
        }
        guard counts.allSatisfy({ $0 == 0 }) else {
            throw CollectionServerError.conflict("\(database.location) already holds \(counts[0]) collections, "
                                                 + "\(counts[1]) model files and \(counts[2]) tokens; copy into an empty database")
        }
    }

    /// Every recorded model file is in `models/`, with its size and its SHA-256.
    private func checkModelFiles() throws {
        for file in source.files {
            let path = source.modelsFolder.appendingPathComponent(file.sha256).path
            guard let size = LocalModelFileStore.regularFileSize(path) else {
                throw CollectionServerError.unprocessable("\(path): model file \(file.sha256) is recorded but its file is missing")
            }
            guard size == file.size else {
                throw CollectionServerError.unprocessable("\(path): \(size) bytes, but \(file.size) are recorded")
            }
            let digest = try Self.sha256(ofFileAt: path)
            guard digest == file.sha256 else {
                throw CollectionServerError.unprocessable("\(path): its SHA-256 is \(digest), not its name")
            }
        }
    }

    /// Reads every model file back from the database and checks its size and SHA-256.
    /// - Returns: How many were checked.
    private func verify() async throws -> Int {
        for file in source.files {
            let sha256 = file.sha256
            var hasher = SHA256()
            var size: Int64 = 0
            _ = try await SharedModelFileStore.readBytes(of: sha256, from: database) { chunk in
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                size += Int64(chunk.readableBytes)
            }
            let digest = Hex.string(hasher.finalize())
            guard size == file.size, digest == sha256 else {
                throw CollectionServerError.storage(
                    "\(database.location): model file \(sha256) reads back as \(size) bytes with the SHA-256 \(digest)")
            }
            progress("verified \(sha256)")
        }
        return source.files.count
    }

    static func sha256(ofFileAt path: String) throws -> String {
        let file = try ChunkedFile(reading: path)
        defer { file.close() }
        var hasher = SHA256()
        while true {
            let chunk = try file.read(1 << 20)
            if chunk.readableBytes == 0 { break }
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        }
        return Hex.string(hasher.finalize())
    }
}

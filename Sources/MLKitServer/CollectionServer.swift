public import Foundation
import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// The collection server behind `mlkit serve`: collections, targeted deployments, model
/// downloads and keys over HTTP (`docs/collection-server.md`).
///
/// By default, metadata lives in SQLite (`mlkit.sqlite` in the data folder, migrated at
/// start-up) and model files under `models/`, named by their SHA-256. With a
/// ``Configuration/database`` URL, both live in a PostgreSQL database that several replicas
/// share (`docs/deploying.md`), and the data folder holds only this replica's cache and
/// unfinished uploads.
public struct CollectionServer: Sendable {
    /// Where the server keeps its data and where it listens.
    public struct Configuration: Sendable {
        /// The data folder: the SQLite database, `models/` and `uploads/`; with a shared
        /// ``database``, this replica's `cache/` and `uploads/`. Created if missing.
        public var dataFolder: URL
        /// The shared PostgreSQL database, `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`
        /// (with `?sslmode=disable|prefer|require|verify-full`), or `nil` for SQLite in the data
        /// folder.
        public var database: URL?
        /// The most connections this server opens to the shared database.
        public var databaseConnections: Int
        /// The address to listen on.
        public var host: String
        /// The port; 0 picks a free one (``CollectionServer/run(onListening:)`` reports it).
        public var port: Int
        /// The largest model file an upload may send, in bytes; larger ones get 413.
        public var maxUploadSize: Int64
        /// How long a refused bearer token is answered 401 without reading the database again;
        /// a token created in that time is accepted once it has passed. Zero rereads every time.
        public var tokenRefusalLifetime: Duration
        /// How long a shutdown (SIGINT or SIGTERM) waits for the requests under way, such as an
        /// upload whose client has stopped sending; after it they are cancelled.
        public var shutdownGracePeriod: Duration
        /// How long a connection may stay silent before it is closed: one that has not sent a
        /// whole request head, one whose upload has stopped sending, one idle between requests.
        /// A response being sent is never cut. `nil` keeps connections open for as long as
        /// their clients do.
        public var idleTimeout: Duration?

        /// 512 MiB.
        public static let defaultMaxUploadSize: Int64 = 512 << 20
        /// 5 seconds.
        public static let defaultTokenRefusalLifetime: Duration = .seconds(5)
        /// 10 seconds.
        public static let defaultShutdownGracePeriod: Duration = .seconds(10)
        /// 30 seconds.
        public static let defaultIdleTimeout: Duration = .seconds(30)
        /// 16 connections.
        public static let defaultDatabaseConnections = 16

        /// Checks a database URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, with an
        /// optional `?sslmode=disable|prefer|require|verify-full`.
        /// - Returns: The URL.
        /// - Throws: ``CollectionServerError`` (bad request) naming the part at fault; the
        ///   message never shows the password.
        public static func databaseURL(_ text: String) throws -> URL {
            guard let url = URL(string: text) else {
                throw CollectionServerError.badRequest("'\(text.split(separator: "@").last ?? "")' is not a URL")
            }
            _ = try DatabaseLocation(url)
            return url
        }

        /// Creates a configuration.
        /// - Parameters:
        ///   - dataFolder: The data folder.
        ///   - host: The address to listen on (127.0.0.1 by default).
        ///   - port: The port (8080 by default, 0 for any free one).
        ///   - maxUploadSize: The upload size limit in bytes.
        ///   - tokenRefusalLifetime: How long a refused token is answered 401 without a database read.
        ///   - shutdownGracePeriod: How long a shutdown waits for the requests under way.
        ///   - idleTimeout: How long a silent connection stays open (`nil`: as long as its client keeps it).
        ///   - database: The shared PostgreSQL database, or `nil` for SQLite in the data folder.
        ///   - databaseConnections: The most connections to the shared database.
        public init(dataFolder: URL, host: String = "127.0.0.1", port: Int = 8080,
                    maxUploadSize: Int64 = defaultMaxUploadSize,
                    tokenRefusalLifetime: Duration = defaultTokenRefusalLifetime,
                    shutdownGracePeriod: Duration = defaultShutdownGracePeriod,
                    idleTimeout: Duration? = defaultIdleTimeout,
                    database: URL? = nil, databaseConnections: Int = defaultDatabaseConnections) {
            self.dataFolder = dataFolder
            self.database = database
            self.databaseConnections = databaseConnections
            self.host = host
            self.port = port
            self.maxUploadSize = maxUploadSize
            self.tokenRefusalLifetime = tokenRefusalLifetime
            self.shutdownGracePeriod = shutdownGracePeriod
            self.idleTimeout = idleTimeout
        }
    }

    /// The configuration.
    public let configuration: Configuration
    private let logger: Logger

    /// Creates a server; nothing is opened until ``run(onListening:)``.
    /// - Parameters:
    ///   - configuration: Data folder, address and limits.
    ///   - logger: Where the server logs, with structured metadata.
    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Opens the data folder and serves until SIGINT or SIGTERM, then shuts down gracefully:
    /// requests under way are finished first, for at most the configuration's
    /// `shutdownGracePeriod`, and then cancelled (an unfinished upload leaves only its temporary
    /// file, removed at the next start).
    /// - Parameter onListening: Called once with the address and port the server listens on.
    /// - Throws: ``CollectionServerError`` when the data folder or database cannot be opened,
    ///   or the error that stopped the server.
    public func run(onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void) async throws {
        let storage = try await ServerStorage.open(configuration, logger: logger)
        do {
            try await serve(storage, onListening: onListening)
        } catch {
            await storage.close()
            throw error
        }
        await storage.close()
        logger.notice("stopped")
    }

    private func serve(_ storage: ServerStorage, onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void) async throws {
        let responder = Self.responder(storage: storage, configuration: configuration, logger: logger)
        let logger = self.logger
        let dataFolder = configuration.dataFolder
        let database = storage.database.map { "\($0.location)" } ?? "sqlite"
        let openFiles = ConnectionLimits.raiseOpenFileLimit()
        let maximumConnections = ConnectionLimits.maximumConnections(openFiles: openFiles)
        let idleTimeout = configuration.idleTimeout
        let application = Application(
            responder: responder,
            server: .http1(configuration: .init(idleTimeout: idleTimeout.map { TimeAmount($0) })),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "mlkit",
                                 availableConnectionsDelegate: MaximumAvailableConnections(maximumConnections, logger: logger)),
            onServerRunning: { channel in
                let address = channel.localAddress
                let host = address?.ipAddress ?? "?"
                let port = address?.port ?? 0
                logger.notice("listening", metadata: [
                    "host": "\(host)", "port": "\(port)", "data": "\(dataFolder.path)", "database": "\(database)",
                    "maxConnections": "\(maximumConnections)", "openFiles": "\(openFiles)",
                    "idleTimeout": "\(idleTimeout.map { "\($0)" } ?? "none")",
                ])
                onListening(host, port)
            },
            logger: logger)
        var group = ServiceGroupConfiguration(services: [application], gracefulShutdownSignals: [.sigterm, .sigint],
                                              logger: logger)
        group.maximumGracefulShutdownDuration = configuration.shutdownGracePeriod
        try await ServiceGroup(configuration: group).run()
    }

    /// The responder that answers every request over opened stores.
    package static func responder(storage: ServerStorage, configuration: Configuration, logger: Logger) -> CollectionServerResponder {
        if storage.removedUploads > 0 {
            logger.notice("removed unfinished uploads", metadata: ["count": "\(storage.removedUploads)"])
        }
        let tokens = TokenVerifier(store: storage.store, refusalLifetime: configuration.tokenRefusalLifetime, logger: logger)
        return CollectionServerResponder(state: ServerState(
            store: storage.store, files: storage.files, database: storage.database, tokens: tokens,
            maxUploadSize: configuration.maxUploadSize, resolvedBodies: ResolvedBodyCache(),
            activeDeployments: ActiveDeploymentCache(), fileIO: FileIO(), logger: logger))
    }

    /// Makes a bearer token and stores its hash.
    /// - Parameters:
    ///   - dataFolder: The server's data folder (created if missing), whose SQLite database
    ///     keeps the token when there is no shared database.
    ///   - database: The shared PostgreSQL database, if the server uses one.
    ///   - scope: What the token may do.
    ///   - collection: The one collection it is limited to, if any.
    /// - Returns: The token: shown once, never stored in clear.
    /// - Throws: ``CollectionServerError``: bad request for an invalid collection identifier or
    ///   database URL, storage when the database cannot be written, databaseUnavailable when the
    ///   shared database cannot be reached.
    public static func createToken(dataFolder: URL, database: URL? = nil, scope: TokenScope,
                                   collection: String?) async throws -> String {
        if let collection { _ = try Identifier.collection(collection) }
        let token = AccessToken.generate()
        let record = TokenRecord(hash: AccessToken.hash(token), scope: scope, collection: collection)
        if let database {
            let shared = try await SharedDatabase.open(try DatabaseLocation(database), connections: 1, logger: quietLogger)
            do {
                try await PostgresCollectionStore.open(shared).addToken(record, at: Date())
            } catch {
                await shared.close()
                throw error
            }
            await shared.close()
        } else {
            try await ServerStorage.openSQLite(dataFolder).addToken(record, at: Date())
        }
        return token
    }

    /// A logger that drops everything.
    static let quietLogger = Logger(label: "mlkit.serve", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// The stores a server runs over: SQLite and the data folder's `models/`, or the shared
/// database and this replica's cache.
package struct ServerStorage: Sendable {
    let store: any CollectionStore
    let files: any ModelFileStore
    let database: SharedDatabase?
    let removedUploads: Int

    /// Opens the stores of `configuration`: the database migrated, the leftovers of unfinished
    /// uploads removed.
    /// - Throws: ``CollectionServerError`` when the data folder or database cannot be opened.
    static func open(_ configuration: CollectionServer.Configuration, logger: Logger) async throws -> ServerStorage {
        guard let url = configuration.database else { return try openLocal(configuration.dataFolder) }
        let location = try DatabaseLocation(url)
        try createDataFolder(configuration.dataFolder)
        let database = try await SharedDatabase.open(location, connections: configuration.databaseConnections, logger: logger)
        do {
            let store = try await PostgresCollectionStore.open(database)
            let (files, removed) = try SharedModelFileStore.prepare(dataFolder: configuration.dataFolder, database: database)
            return ServerStorage(store: store, files: files, database: database, removedUploads: removed)
        } catch {
            await database.close()
            throw error
        }
    }

    /// Opens SQLite and the model files in `dataFolder`.
    static func openLocal(_ dataFolder: URL) throws -> ServerStorage {
        let store = try openSQLite(dataFolder)
        let (files, removed) = try LocalModelFileStore.prepare(dataFolder: dataFolder)
        return ServerStorage(store: store, files: files, database: nil, removedUploads: removed)
    }

    static func openSQLite(_ dataFolder: URL) throws -> SQLiteCollectionStore {
        try createDataFolder(dataFolder)
        return try SQLiteCollectionStore(path: dataFolder.appendingPathComponent("mlkit.sqlite").path)
    }

    private static func createDataFolder(_ dataFolder: URL) throws {
        do {
            try FileManager.default.createDirectory(at: dataFolder, withIntermediateDirectories: true)
        } catch {
            throw CollectionServerError.storage("\(dataFolder.path): cannot create the data folder: \(error.localizedDescription)")
        }
    }

    /// Closes the shared database's connections.
    func close() async {
        await database?.close()
    }
}

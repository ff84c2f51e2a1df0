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
/// Metadata lives in SQLite (`mlkit.sqlite` in the data folder, migrated at start-up) and model
/// files under `models/`, named by their SHA-256.
public struct CollectionServer: Sendable {
    /// Where the server keeps its data and where it listens.
    public struct Configuration: Sendable {
        /// The data folder: the database, `models/` and `uploads/`. Created if missing.
        public var dataFolder: URL
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

        /// Creates a configuration.
        /// - Parameters:
        ///   - dataFolder: The data folder.
        ///   - host: The address to listen on (127.0.0.1 by default).
        ///   - port: The port (8080 by default, 0 for any free one).
        ///   - maxUploadSize: The upload size limit in bytes.
        ///   - tokenRefusalLifetime: How long a refused token is answered 401 without a database read.
        ///   - shutdownGracePeriod: How long a shutdown waits for the requests under way.
        ///   - idleTimeout: How long a silent connection stays open (`nil`: as long as its client keeps it).
        public init(dataFolder: URL, host: String = "127.0.0.1", port: Int = 8080,
                    maxUploadSize: Int64 = defaultMaxUploadSize,
                    tokenRefusalLifetime: Duration = defaultTokenRefusalLifetime,
                    shutdownGracePeriod: Duration = defaultShutdownGracePeriod,
                    idleTimeout: Duration? = defaultIdleTimeout) {
            self.dataFolder = dataFolder
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
        let responder = try Self.responder(configuration: configuration, logger: logger)
        let logger = self.logger
        let dataFolder = configuration.dataFolder
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
                    "host": "\(host)", "port": "\(port)", "data": "\(dataFolder.path)",
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
        logger.notice("stopped")
    }

    /// Opens the data folder (the database migrated, the leftovers of unfinished uploads
    /// removed) and makes the responder that answers every request over it.
    /// - Throws: ``CollectionServerError`` when the data folder or database cannot be opened.
    package static func responder(configuration: Configuration, logger: Logger) throws -> CollectionServerResponder {
        let store = try openStore(configuration.dataFolder)
        let (files, removed) = try ModelFileStore.prepare(dataFolder: configuration.dataFolder)
        if removed > 0 {
            logger.notice("removed unfinished uploads", metadata: ["count": "\(removed)"])
        }
        let tokens = TokenVerifier(store: store, refusalLifetime: configuration.tokenRefusalLifetime, logger: logger)
        return CollectionServerResponder(state: ServerState(
            store: store, files: files, tokens: tokens, maxUploadSize: configuration.maxUploadSize,
            resolvedBodies: ResolvedBodyCache(), activeDeployments: ActiveDeploymentCache(), fileIO: FileIO(),
            logger: logger))
    }

    /// Makes a bearer token and stores its hash in the data folder's database.
    /// - Parameters:
    ///   - dataFolder: The server's data folder (created if missing).
    ///   - scope: What the token may do.
    ///   - collection: The one collection it is limited to, if any.
    /// - Returns: The token: shown once, never stored in clear.
    /// - Throws: ``CollectionServerError``: bad request for an invalid collection identifier,
    ///   storage when the database cannot be written.
    public static func createToken(dataFolder: URL, scope: TokenScope, collection: String?) async throws -> String {
        if let collection { _ = try Identifier.collection(collection) }
        let store = try openStore(dataFolder)
        let token = AccessToken.generate()
        try await store.addToken(TokenRecord(hash: AccessToken.hash(token), scope: scope, collection: collection), at: Date())
        return token
    }

    private static func openStore(_ dataFolder: URL) throws -> SQLiteCollectionStore {
        do {
            try FileManager.default.createDirectory(at: dataFolder, withIntermediateDirectories: true)
        } catch {
            throw CollectionServerError.storage("\(dataFolder.path): cannot create the data folder: \(error.localizedDescription)")
        }
        return try SQLiteCollectionStore(path: dataFolder.appendingPathComponent("mlkit.sqlite").path)
    }
}

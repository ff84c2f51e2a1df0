import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// The PostgreSQL database that every replica shares: a pool of connections, and what this
/// replica knows of the database's health.
///
/// Every use of the database goes through ``withConnection(_:)`` or ``transaction(_:)``. When
/// no connection can be had within ``leaseTimeout``, or a connection breaks, the database is
/// marked unavailable: from then on those calls fail at once with
/// ``CollectionServerError/Code/databaseUnavailable`` (503) rather than wait, and the caches
/// answer what they can. While it is unavailable, a probe tries to connect every 250 ms; when
/// one succeeds, the pool is replaced by a new one (so that the old pool's growing back-off
/// between attempts cannot delay the recovery) and the database is available again. While it is
/// available, `SELECT 1` runs every second, so that a replica with no traffic notices a loss too.
final class SharedDatabase: Sendable {
    /// What this replica knows of the database.
    enum Health: Sendable, Equatable {
        case available
        case unavailable(reason: String)
    }

    private struct Pool: Sendable {
        let client: PostgresClient
        let task: Task<Void, Never>
        /// Counts the pools, so that a failure in a replaced pool does not mark the new one.
        let generation: Int
    }

    private struct State {
        var pool: Pool
        var health: Health = .available
        var closed = false
    }

    /// Where the database is.
    let location: DatabaseLocation
    private let logger: Logger
    private let connections: Int
    private let state: NIOLockedValueBox<State>
    private let monitor = NIOLockedValueBox<Task<Void, Never>?>(nil)

    /// How long a call waits for a connection before the database counts as unavailable.
    static let leaseTimeout: Duration = .seconds(10)
    /// How often the database is checked while it is available.
    static let checkInterval: Duration = .seconds(1)
    /// How often a lost database is probed.
    static let probeInterval: Duration = .milliseconds(250)

    private init(location: DatabaseLocation, connections: Int, logger: Logger) {
        self.location = location
        self.logger = logger
        self.connections = connections
        self.state = NIOLockedValueBox(State(pool: Self.startPool(location, connections: connections, generation: 0,
                                                                  logger: logger)))
    }

    /// Connects to the database and checks that it answers.
    /// - Parameters:
    ///   - location: Where the database is.
    ///   - connections: The most connections this replica opens.
    ///   - logger: Where changes of health are logged.
    /// - Throws: ``CollectionServerError``: `databaseUnavailable` when it cannot be reached.
    static func open(_ location: DatabaseLocation, connections: Int = 16, logger: Logger) async throws -> SharedDatabase {
        let database = SharedDatabase(location: location, connections: connections, logger: logger)
        do {
            _ = try await database.withConnection { connection in
                try await connection.query("SELECT 1", logger: database.logger)
            }
        } catch {
            await database.close()
            throw error
        }
        database.monitor.withLockedValue { $0 = Task { await database.watch() } }
        return database
    }

    /// Stops the probes and closes every connection.
    func close() async {
        let (pool, watcher) = state.withLockedValue { state in
            state.closed = true
            return (state.pool, monitor.withLockedValue { $0 })
        }
        watcher?.cancel()
        pool.task.cancel()
        await watcher?.value
        // The pool ends once its connections have closed; past the limit it is left to end.
        _ = try? await Self.value(of: Task<Void, any Error> { await pool.task.value }, unless: Self.leaseTimeout, passes: { true },
                                  throwing: CancellationError())
    }

    /// The value of `task`, or `error` once `limit` has passed with `stillWaiting()` true:
    /// `task` is then cancelled and no longer waited for. The connection pool has been seen to
    /// leave a lease request, and its own end, unanswered for good while the database was gone;
    /// its callers never wait on it past the limit.
    private static func value<T: Sendable>(of task: Task<T, any Error>, unless limit: Duration,
                                           passes stillWaiting: @escaping @Sendable () -> Bool,
                                           throwing error: any Error) async throws -> T {
        let pending = NIOLockedValueBox<CheckedContinuation<T, any Error>?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            pending.withLockedValue { $0 = continuation }
            let timer = Task {
                try await Task.sleep(for: limit)
                guard stillWaiting() else { return }
                pending.withLockedValue { $0.take() }?.resume(throwing: error)
                task.cancel()
            }
            Task {
                let result = await task.result
                timer.cancel()
                pending.withLockedValue { $0.take() }?.resume(with: result)
            }
        }
    }

    /// What this replica knows of the database's health.
    var health: Health { state.withLockedValue { $0.health } }

    /// Whether the database answered the last time it was used.
    var isAvailable: Bool { health == .available }

    // MARK: Connections

    /// Runs `body` with a connection of the pool.
    /// - Throws: ``CollectionServerError``: `databaseUnavailable` at once while the database is
    ///   known to be unavailable, or when no connection comes within ``leaseTimeout`` or one
    ///   breaks (the database is then marked unavailable); `insufficientStorage` when its disk
    ///   is full; `storage` for any other failure; or what `body` throws.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let (pool, health) = state.withLockedValue { ($0.pool, $0.health) }
        if case .unavailable(let reason) = health { throw unavailable(reason) }
        let leased = NIOLockedValueBox(false)
        let work = Task {
            try await pool.client.withConnection { connection in
                leased.withLockedValue { $0 = true }
                return try await body(connection)
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await Self.value(of: work, unless: Self.leaseTimeout, passes: { !leased.withLockedValue { $0 } },
                                     throwing: LeaseTimeout())
            } onCancel: {
                work.cancel()
            }
        } catch {
            throw failure(error, generation: pool.generation)
        }
    }

    /// Runs `body` in a transaction (`BEGIN` … `COMMIT`), rolled back if it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let logger = self.logger
        return try await withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                let result = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// The logger of the queries.
    var queryLogger: Logger { logger }

    // MARK: Failures

    private struct LeaseTimeout: Error {}

    private func unavailable(_ reason: String) -> CollectionServerError {
        CollectionServerError(.databaseUnavailable, "the database \(location) is unavailable (\(reason)); nothing was changed")
    }

    /// A failure of the database as the server's error; a failure of the connection marks the
    /// database unavailable.
    private func failure(_ error: any Error, generation: Int) -> any Error {
        switch Self.classify(error) {
        case .passThrough:
            return error
        case .unavailable(let reason):
            markUnavailable(reason, generation: generation)
            return unavailable(reason)
        case .diskFull(let message):
            return CollectionServerError(.insufficientStorage, "\(location): cannot write the database: the disk is full (\(message))")
        case .failed(let message):
            return CollectionServerError.storage("\(location): \(message)")
        }
    }

    private enum Kind: Equatable {
        case passThrough
        case unavailable(String)
        case diskFull(String)
        case failed(String)
    }

    private static func classify(_ error: any Error) -> Kind {
        switch error {
        case is CollectionServerError, is RangeNotSatisfiable, is CancellationError:
            return .passThrough
        case is LeaseTimeout:
            return .unavailable("no connection within \(leaseTimeout)")
        case is PostgresDecodingError:
            return .failed("a stored value has an unexpected type")
        case let error as PSQLError:
            switch error.code {
            case .server:
                let state = error.serverInfo?[.sqlState] ?? ""
                let message = error.serverInfo?[.message] ?? "an error"
                // 08: connection exceptions; 57P0x: the server shutting down or starting up;
                // 53300: too many connections.
                if state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" {
                    return .unavailable("\(message) (SQLSTATE \(state))")
                }
                if state == "53100" { return .diskFull(message) }
                return .failed("\(message) (SQLSTATE \(state))")
            case .tooManyParameters, .invalidCommandTag, .unsupportedAuthMechanism, .authMechanismRequiresPassword,
                 .saslError, .sslUnsupported, .listenFailed, .unlistenFailed:
                return .failed("\(error.code)")
            default:
                // A broken or closed connection, a closed pool, a cancelled query.
                return .unavailable("\(error.code)")
            }
        default:
            // What the network and the pool throw: a refused or reset connection, a pool that
            // gave up connecting.
            return .unavailable("\(error)")
        }
    }

    // MARK: Health

    private func markUnavailable(_ reason: String, generation: Int) {
        let changed = state.withLockedValue { state -> Bool in
            guard !state.closed, state.pool.generation == generation, state.health == .available else { return false }
            state.health = .unavailable(reason: reason)
            return true
        }
        if changed {
            logger.error("the database is unavailable", metadata: ["database": "\(location)", "reason": "\(reason)"])
        }
    }

    /// Checks the database every second while it is available, and probes it every 250 ms
    /// while it is not, until the database is closed.
    private func watch() async {
        while !Task.isCancelled {
            let available = isAvailable
            do {
                try await Task.sleep(for: available ? Self.checkInterval : Self.probeInterval)
            } catch {
                return
            }
            if available {
                _ = try? await withConnection { connection in
                    try await connection.query("SELECT 1", logger: self.logger)
                }
            } else if await probe() {
                recover()
            }
        }
    }

    /// Whether a new connection outside the pool can be made and answers, within 10 s.
    private func probe() async -> Bool {
        guard let configuration = try? location.connectionConfiguration() else { return false }
        let logger = self.logger
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                    defer { Task { try? await connection.close() } }
                    try await connection.query("SELECT 1", logger: logger)
                    return true
                } catch {
                    return false
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Replaces the pool with a new one and marks the database available.
    private func recover() {
        let old: Pool? = state.withLockedValue { state in
            guard !state.closed else { return nil }
            let old = state.pool
            state.pool = Self.startPool(location, connections: connections, generation: old.generation + 1, logger: logger)
            state.health = .available
            return old
        }
        if let old {
            old.task.cancel()
            logger.notice("the database is available again", metadata: ["database": "\(location)"])
        }
    }

    private static func startPool(_ location: DatabaseLocation, connections: Int, generation: Int, logger: Logger) -> Pool {
        let client = PostgresClient(configuration: location.clientConfiguration(connections: connections),
                                    backgroundLogger: logger)
        return Pool(client: client, task: Task { await client.run() }, generation: generation)
    }
}

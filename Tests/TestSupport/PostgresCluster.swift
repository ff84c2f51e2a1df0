public import Foundation
public import Testing

/// A PostgreSQL cluster of the tests' own, in a temporary folder, on a free port of 127.0.0.1
/// (`Benchmarks/server/postgres-cluster.sh`): never a system-wide one.
///
/// The tests share one cluster (``shared()``), started at first use; each test makes a
/// database of its own in it (``createDatabase(_:)``). A test that stops the database makes a
/// cluster of its own (``init(owned:)``). A watcher started with each cluster stops it and
/// removes its folder once the test process has gone, however it ended.
public final class PostgresCluster: Sendable {
    /// The cluster's folder: `data/`, `socket/`, `postgres.log`, `port`.
    public let folder: URL
    /// The port it listens on, on 127.0.0.1.
    public let port: Int

    /// `Benchmarks/server/postgres-cluster.sh`.
    public static let script = ChildProcess.repositoryRoot.appendingPathComponent("Benchmarks/server/postgres-cluster.sh")

    private static let lock = NSLock()
    nonisolated(unsafe) private static var sharedCluster: Result<PostgresCluster, ServerProcessError>?
    nonisolated(unsafe) private static var databaseCount = 0

    /// Starts a cluster in a new temporary folder.
    /// - Parameter owned: Whether the caller stops it (``remove()``); the watcher removes it
    ///   after the test process ends in any case.
    public init(owned: Bool = true) throws {
        folder = try ChildProcess.temporaryFolder("postgres")
        let result = try ChildProcess.run(URL(fileURLWithPath: "/bin/bash"),
                                          [Self.script.path, "start", folder.path, "--owner", "\(ProcessInfo.processInfo.processIdentifier)"], deadline: 180)
        guard result.status == 0, let port = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            try? FileManager.default.removeItem(at: folder)
            throw ServerProcessError("the test PostgreSQL cluster did not start (\(result.status)): \(result.stderr)")
        }
        self.port = port
    }

    /// The cluster the tests share, started on first use.
    public static func shared() throws -> PostgresCluster {
        lock.lock()
        defer { lock.unlock() }
        if sharedCluster == nil {
            do { sharedCluster = .success(try PostgresCluster(owned: false)) } catch {
                sharedCluster = .failure(ServerProcessError("\(error)"))
            }
        }
        return try sharedCluster!.get()
    }

    /// A new, empty database in the shared cluster.
    /// - Parameter prefix: The start of its name.
    /// - Returns: Its URL, `postgres://mlkit@127.0.0.1:PORT/NAME`.
    public static func createDatabase(_ prefix: String = "test") throws -> URL {
        try shared().createDatabase(prefix)
    }

    /// A new, empty database in this cluster.
    public func createDatabase(_ prefix: String = "test") throws -> URL {
        Self.lock.lock()
        Self.databaseCount += 1
        let number = Self.databaseCount
        Self.lock.unlock()
        let name = "\(prefix)_\(number)_\(UUID().uuidString.prefix(8).lowercased())"
        let result = try ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), [Self.script.path, "createdb", folder.path, name])
        guard result.status == 0 else { throw ServerProcessError("createdb \(name) failed (\(result.status)): \(result.stderr)") }
        return url(name)
    }

    /// The URL of database `name` in this cluster.
    public func url(_ name: String) -> URL {
        URL(string: "postgres://mlkit@127.0.0.1:\(port)/\(name)?sslmode=disable")!
    }

    /// Stops the cluster at once, as a crash would (`pg_ctl stop -m immediate`).
    public func stop() throws {
        let result = try ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), [Self.script.path, "stop", folder.path])
        guard result.status == 0 else { throw ServerProcessError("stopping the cluster failed: \(result.stderr)") }
    }

    /// Starts the cluster again, on the same port.
    public func start() throws {
        let result = try ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), [Self.script.path, "start", folder.path],
                                          deadline: 120)
        guard result.status == 0, Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == port else {
            throw ServerProcessError("the cluster did not start again on port \(port) (\(result.status)): \(result.stdout) \(result.stderr)")
        }
    }

    /// Stops the cluster and removes its folder.
    public func remove() {
        _ = try? ChildProcess.run(URL(fileURLWithPath: "/bin/bash"), [Self.script.path, "remove", folder.path])
    }

    /// Runs SQL with `psql` against `database` and returns what it printed (unaligned, tuples
    /// only, `|` between columns).
    public static func psql(_ database: URL, _ sql: String) throws -> String {
        guard let components = URLComponents(url: database, resolvingAgainstBaseURL: false) else {
            throw ServerProcessError("not a database URL: \(database)")
        }
        let name = String(components.path.dropFirst())
        let result = try ChildProcess.run(Self.binary("psql"), [
            "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", components.host ?? "127.0.0.1",
            "-p", "\(components.port ?? 5432)", "-U", components.user ?? "mlkit", "-d", name, "-c", sql,
        ])
        guard result.status == 0 else { throw ServerProcessError("psql failed (\(result.status)): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A PostgreSQL program: from `$MLKIT_POSTGRES_BIN`, the newest `/usr/lib/postgresql/*/bin`,
    /// or `/usr/bin`.
    public static func binary(_ name: String) -> URL {
        let folders = binaryFolders
        for folder in folders where FileManager.default.isExecutableFile(atPath: folder + "/" + name) {
            return URL(fileURLWithPath: folder + "/" + name)
        }
        return URL(fileURLWithPath: "/usr/bin/" + name)
    }

    private static var binaryFolders: [String] {
        var folders: [String] = []
        if let variable = ProcessInfo.processInfo.environment["MLKIT_POSTGRES_BIN"] { folders.append(variable) }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        folders += versions.sorted { $0.compare($1, options: .numeric) == .orderedDescending }
            .map { "/usr/lib/postgresql/\($0)/bin" }
        return folders + ["/usr/local/bin", "/usr/bin"]
    }

    /// Whether PostgreSQL's server binaries are installed, or CI requires them (then a
    /// missing binary fails the tests instead of skipping them).
    public static var isAvailable: Bool {
        ProcessInfo.processInfo.environment["MLKIT_REQUIRE_POSTGRES"] == "1"
            || binaryFolders.contains { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where PostgreSQL's server binaries are installed (`.ci/run` installs
    /// them, and sets `MLKIT_REQUIRE_POSTGRES=1` so that CI never skips), and otherwise skips
    /// it, saying how to install them.
    public static var needsPostgres: Self {
        .enabled(if: PostgresCluster.isAvailable,
                 "needs PostgreSQL's server binaries (initdb, pg_ctl), which are not installed: apt-get install -y postgresql")
    }
}

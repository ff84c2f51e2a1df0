import ArgumentParser
import Foundation
import Logging
import MLKitServer

/// `mlkit serve`: the collection server (`mlkit serve start`, the default) and its tokens.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve model collections: targeted deployments, verified downloads and keys over HTTP.",
        subcommands: [ServeStartCommand.self, TokenCommand.self, MigrateCommand.self],
        defaultSubcommand: ServeStartCommand.self
    )
}

/// `mlkit serve [start]`: runs the server until SIGINT or SIGTERM.
struct ServeStartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Run the collection server (the default of `mlkit serve`).",
        discussion: """
            Metadata goes in DATA/mlkit.sqlite, model files in DATA/models/ (named by their SHA-256). \
            With --database (or MLKIT_DATABASE), both go in a PostgreSQL database that several replicas \
            share, and DATA holds only this replica's cache and unfinished uploads. The first line on standard output is `listening on http://HOST:PORT`; logs go to standard \
            error, one JSON object a line. SIGINT or SIGTERM shut the server down gracefully: requests under way get \
            --shutdown-grace-seconds to finish, and are cancelled after that. \
            docs/collection-server.md documents the HTTP API.
            """
    )

    @Option(help: "The data folder (created if missing).")
    var data: String = "collections"

    @OptionGroup var database: DatabaseOption

    @Option(name: .customLong("database-connections"), help: "The most connections to the shared database.")
    var databaseConnections: Int = CollectionServer.Configuration.defaultDatabaseConnections

    @Option(help: "The address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "The port; 0 picks a free one.")
    var port: Int = 8080

    @Option(name: .customLong("max-upload-size"),
            help: "The largest model file an upload may send: bytes, or with K, M or G (binary units).")
    var maxUploadSize: String = "512M"

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(name: .customLong("token-refusal-seconds"),
            help: "How long a refused bearer token is answered 401 without reading the database again (0 rereads every time).")
    var tokenRefusalSeconds: Double = 5

    @Option(name: .customLong("shutdown-grace-seconds"),
            help: "How long SIGINT or SIGTERM wait for the requests under way before cancelling them.")
    var shutdownGraceSeconds: Double = 10

    @Option(name: .customLong("idle-timeout-seconds"),
            help: "How long a connection may send nothing (no whole request head, a stalled upload, idle between requests) before it is closed; 0 never closes it.")
    var idleTimeoutSeconds: Double = 30

    func validate() throws {
        try database.validate()
        guard (1...1000).contains(databaseConnections) else {
            throw ValidationError("--database-connections: \(databaseConnections) is not from 1 to 1000")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port: \(port) is not a port (0 to 65535)") }
        guard Self.byteCount(maxUploadSize) != nil else {
            throw ValidationError("--max-upload-size: '\(maxUploadSize)' is not a size (write 1048576, 64M or 1G)")
        }
        try Self.checkSeconds(tokenRefusalSeconds, option: "--token-refusal-seconds")
        try Self.checkSeconds(shutdownGraceSeconds, option: "--shutdown-grace-seconds")
        try Self.checkSeconds(idleTimeoutSeconds, option: "--idle-timeout-seconds")
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level: '\(logLevel)' is not one of trace, debug, info, notice, warning, error, critical")
        }
    }

    /// Refuses a number of seconds outside 0...3600 (NaN and infinities included), naming the option.
    private static func checkSeconds(_ seconds: Double, option: String) throws {
        guard (0...3600).contains(seconds) else {
            throw ValidationError("\(option): \(seconds) is not a number of seconds from 0 to 3600")
        }
    }

    /// A validated number of seconds as a duration, to the millisecond.
    private static func duration(seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded()))
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let logger = Logger(label: "mlkit.serve") { label in JSONLogHandler(label: label, level: level) }
        let configuration = CollectionServer.Configuration(
            dataFolder: URL(fileURLWithPath: data), host: host, port: port,
            maxUploadSize: Self.byteCount(maxUploadSize) ?? CollectionServer.Configuration.defaultMaxUploadSize,
            tokenRefusalLifetime: Self.duration(seconds: tokenRefusalSeconds),
            shutdownGracePeriod: Self.duration(seconds: shutdownGraceSeconds),
            idleTimeout: idleTimeoutSeconds > 0 ? Self.duration(seconds: idleTimeoutSeconds) : nil,
            database: try database.url(), databaseConnections: databaseConnections)
        do {
            try await CollectionServer(configuration: configuration, logger: logger).run { host, port in
                let shown = host.contains(":") ? "[\(host)]" : host
                // Unbuffered, so that whoever started the server reads the address at once.
                FileHandle.standardOutput.write(Data("listening on http://\(shown):\(port)\n".utf8))
            }
        } catch let error as CollectionServerError {
            printError(error.message)
            throw ExitCode(ExitStatus.code(for: error))
        } catch {
            printError("the server stopped: \(error)")
            throw ExitCode(ExitStatus.internalError)
        }
    }

    /// `1048576`, `64K`, `64M`, `1G` as bytes.
    static func byteCount(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        let upper = text.uppercased()
        if let last = upper.last, let unit = units[last] {
            return Int64(upper.dropLast()).flatMap { $0 > 0 && $0 <= Int64.max / unit ? $0 * unit : nil }
        }
        return Int64(upper).flatMap { $0 > 0 ? $0 : nil }
    }
}

/// `mlkit serve token`: bearer tokens for the server.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Manage the server's bearer tokens.",
        subcommands: [TokenCreateCommand.self]
    )
}

/// `mlkit serve token create`: a new token, printed once.
struct TokenCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a bearer token and print it once; only its SHA-256 is stored.",
        discussion: """
            The publish scope creates collections, uploads models, deploys and registers keys; the read \
            scope fetches keys. A token with --collection is limited to that collection. The server \
            need not be stopped: it picks up new tokens at once.
            """
    )

    @Option(help: "The server's data folder.")
    var data: String = "collections"

    @OptionGroup var database: DatabaseOption

    @Option(help: "publish or read.")
    var scope: String

    @Option(help: "Limit the token to one collection.")
    var collection: String?

    func validate() throws {
        try database.validate()
        guard TokenScope(rawValue: scope) != nil else { throw ValidationError("--scope: '\(scope)' is not publish or read") }
    }

    func run() async throws {
        guard let scope = TokenScope(rawValue: scope) else { throw ExitCode(ExitStatus.usage) }
        do {
            let token = try await CollectionServer.createToken(dataFolder: URL(fileURLWithPath: data), database: try database.url(),
                                                               scope: scope, collection: collection)
            print(token)
        } catch let error as CollectionServerError {
            printError(error.message)
            throw ExitCode(ExitStatus.code(for: error))
        }
    }
}

/// `mlkit serve migrate`: the shared database's schema, and the copy of an SQLite data folder
/// into it.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate the shared database's schema, or copy an SQLite data folder into it.",
        discussion: """
            Without --from, applies the schema migrations the PostgreSQL database lacks (as every \
            server does when it starts) and prints its schema version. With --from DATA, copies the \
            SQLite store of DATA (its collections, deployments and their history, keys, tokens, and \
            the model files in DATA/models/) into the database, which must be empty, in one \
            transaction; then reads every model file back and checks its SHA-256. DATA is only read.
            """
    )

    @Option(help: "The data folder of an SQLite server (`mlkit serve --data`) to copy.")
    var from: String?

    @Option(help: "The PostgreSQL database to copy into (the same as --database).")
    var to: String?

    @OptionGroup var database: DatabaseOption

    func validate() throws {
        try database.validate()
        if let to { _ = try DatabaseOption.parse(to, option: "--to") }
        if to != nil, database.database != nil {
            throw ValidationError("--to and --database name the same thing; give one")
        }
    }

    func run() async throws {
        guard let url = try to.map({ try DatabaseOption.parse($0, option: "--to") }) ?? database.url() else {
            printError("--to (or --database, or MLKIT_DATABASE) names the PostgreSQL database: postgres://USER@HOST:PORT/DATABASE")
            throw ExitCode(ExitStatus.usage)
        }
        do {
            if let from {
                let report = try await CollectionServer.copyStore(from: URL(fileURLWithPath: from), to: url) { line in
                    printError(line)
                }
                print("""
                    copied \(report.collections) collections, \(report.deployments) deployments, \(report.modelFiles) model files \
                    (\(report.bytes) bytes, every SHA-256 verified), \(report.keys) keys, \(report.tokens) tokens
                    """)
            } else {
                let (applied, version) = try await CollectionServer.migrateDatabase(url)
                print(applied.isEmpty ? "schema version \(version): up to date"
                                      : "schema version \(version): applied \(applied.map(String.init).joined(separator: ", "))")
            }
        } catch let error as CollectionServerError {
            printError(error.message)
            throw ExitCode(ExitStatus.code(for: error))
        }
    }
}

/// `--database`: the shared PostgreSQL database, or `MLKIT_DATABASE`.
struct DatabaseOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The shared PostgreSQL database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE] (default: MLKIT_DATABASE; none: SQLite in the data folder).",
        valueName: "url"))
    var database: String?

    /// The URL given, or `MLKIT_DATABASE`'s, or `nil`.
    func url() throws -> URL? {
        if let database { return try Self.parse(database, option: "--database") }
        if let variable = ProcessInfo.processInfo.environment["MLKIT_DATABASE"], !variable.isEmpty {
            return try Self.parse(variable, option: "MLKIT_DATABASE")
        }
        return nil
    }

    func validate() throws {
        _ = try url()
    }

    /// A checked database URL; the error names `option`.
    static func parse(_ text: String, option: String) throws -> URL {
        do {
            return try CollectionServer.Configuration.databaseURL(text)
        } catch let error as CollectionServerError {
            throw ValidationError("\(option): \(error.message)")
        }
    }
}

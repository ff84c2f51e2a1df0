import ArgumentParser
import Foundation
import Logging
import MLKitServer

/// `mlkit serve`: the collection server (`mlkit serve start`, the default) and its tokens.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve model collections: targeted deployments, verified downloads and keys over HTTP.",
        subcommands: [ServeStartCommand.self, TokenCommand.self],
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
            The first line on standard output is `listening on http://HOST:PORT`; logs go to standard \
            error, one JSON object a line. SIGINT or SIGTERM shut the server down gracefully: requests under way get \
            --shutdown-grace-seconds to finish, and are cancelled after that. \
            docs/collection-server.md documents the HTTP API.
            """
    )

    @Option(help: "The data folder (created if missing).")
    var data: String = "collections"

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
            idleTimeout: idleTimeoutSeconds > 0 ? Self.duration(seconds: idleTimeoutSeconds) : nil)
        do {
            try await CollectionServer(configuration: configuration, logger: logger).run { host, port in
                let shown = host.contains(":") ? "[\(host)]" : host
                // Unbuffered, so that whoever started the server reads the address at once.
                FileHandle.standardOutput.write(Data("listening on http://\(shown):\(port)\n".utf8))
            }
        } catch let error as CollectionServerError {
            printError(error.message)
            throw ExitCode(error.code == .badRequest ? ExitStatus.usage : ExitStatus.internalError)
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

    @Option(help: "publish or read.")
    var scope: String

    @Option(help: "Limit the token to one collection.")
    var collection: String?

    func validate() throws {
        guard TokenScope(rawValue: scope) != nil else { throw ValidationError("--scope: '\(scope)' is not publish or read") }
    }

    func run() async throws {
        guard let scope = TokenScope(rawValue: scope) else { throw ExitCode(ExitStatus.usage) }
        do {
            let token = try await CollectionServer.createToken(dataFolder: URL(fileURLWithPath: data), scope: scope,
                                                               collection: collection)
            print(token)
        } catch let error as CollectionServerError {
            printError(error.message)
            throw ExitCode(error.code == .badRequest ? ExitStatus.usage : ExitStatus.internalError)
        }
    }
}

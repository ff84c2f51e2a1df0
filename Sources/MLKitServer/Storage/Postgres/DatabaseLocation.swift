import Foundation
import NIOSSL
import PostgresNIO

/// Where the shared PostgreSQL database is, read from a URL:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE]` (`postgresql://` too).
///
/// `sslmode` follows libpq: `disable`, `prefer` (the default: TLS when the server offers it),
/// `require` (TLS, the certificate not checked) and `verify-full` (TLS, the certificate checked
/// against the system's roots and the host name). A password in the URL is percent-decoded; it
/// never appears in ``description``, which the logs and messages use.
struct DatabaseLocation: Sendable, CustomStringConvertible {
    let host: String
    let port: Int
    let user: String
    let password: String?
    let database: String
    let tlsMode: String

    /// The sslmode values understood.
    static let tlsModes = ["disable", "prefer", "require", "verify-full"]

    /// Reads a database URL.
    /// - Throws: ``CollectionServerError`` (bad request) naming the part of the URL at fault.
    init(_ url: URL) throws {
        func refuse(_ reason: String) -> CollectionServerError {
            .badRequest("database URL '\(Self.redacted(url))': \(reason)")
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw refuse("the scheme must be postgres:// or postgresql://")
        }
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw refuse("not a URL")
        }
        guard let host = components.host, !host.isEmpty else { throw refuse("it names no host") }
        guard let user = components.user?.removingPercentEncoding, !user.isEmpty else {
            throw refuse("it names no user (postgres://USER@HOST/DATABASE)")
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw refuse("\(port) is not a port") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard let database = path.removingPercentEncoding, !database.isEmpty, !database.contains("/") else {
            throw refuse("it names no database (postgres://USER@HOST/DATABASE)")
        }
        var tlsMode = "prefer"
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else { throw refuse("unknown parameter '\(item.name)' (only sslmode is read)") }
            guard let value = item.value, Self.tlsModes.contains(value) else {
                throw refuse("sslmode '\(item.value ?? "")' is not one of \(Self.tlsModes.joined(separator: ", "))")
            }
            tlsMode = value
        }
        self.host = host
        self.port = port
        self.user = user
        self.password = components.password?.removingPercentEncoding
        self.database = database
        self.tlsMode = tlsMode
    }

    /// `postgres://USER@HOST:PORT/DATABASE`, without the password.
    var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// The URL as text with its password replaced by `***`.
    static func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "?" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "?"
    }

    /// The client's configuration: at most `connections` connections to the database.
    func clientConfiguration(connections: Int) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password,
                                                         database: database, tls: tls)
        configuration.options.maximumConnections = connections
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(10)
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(10))
        return configuration
    }

    /// The configuration of one connection outside the pool (the probe that sees the database
    /// come back).
    /// - Throws: ``CollectionServerError`` when the TLS context cannot be made.
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password,
                                                             database: database, tls: try connectionTLS())
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    private var tlsConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if tlsMode != "verify-full" { configuration.certificateVerification = .none }
        return configuration
    }

    private var tls: PostgresClient.Configuration.TLS {
        switch tlsMode {
        case "disable": return .disable
        case "require", "verify-full": return .require(tlsConfiguration)
        default: return .prefer(tlsConfiguration)
        }
    }

    private func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        guard tlsMode != "disable" else { return .disable }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tlsConfiguration)
        } catch {
            throw CollectionServerError.storage("\(description): cannot set up TLS: \(error)")
        }
        return tlsMode == "prefer" ? .prefer(context) : .require(context)
    }
}

import ArgumentParser
import Foundation
import MLKit
import MLKitCollections

/// Where the collection server is and which token to send: `--server` and `--token`, else the
/// environment (`MLKIT_SERVER`, and `MLKIT_PUBLISH_TOKEN` or `MLKIT_READ_TOKEN`).
struct ServerOptions: ParsableArguments {
    @Option(help: "The collection server's URL (default: $MLKIT_SERVER, else http://127.0.0.1:8080).")
    var server: String?

    @Option(help: "The bearer token (default: $MLKIT_PUBLISH_TOKEN for publishing, $MLKIT_READ_TOKEN for keys).")
    var token: String?

    /// The server's URL.
    func serverURL() throws -> URL {
        let text = server ?? environment("MLKIT_SERVER") ?? "http://127.0.0.1:8080"
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme.lowercased()),
              url.host != nil else {
            throw MLKitError.option("server", "expected a URL such as http://127.0.0.1:8080, found \"\(text)\"")
        }
        return url
    }

    /// The token: `--token`, else the environment variable `variable`.
    func token(from variable: String) -> String? {
        token ?? environment(variable)
    }

    /// A publisher client with the publish token.
    func publisher() throws -> PublisherClient {
        guard let token = token(from: "MLKIT_PUBLISH_TOKEN") else {
            throw MLKitError.option("token", "publishing needs a token with the publish scope: pass --token or set MLKIT_PUBLISH_TOKEN")
        }
        return try PublisherClient(server: try serverURL(), token: token)
    }
}

/// The device context of `pull` and `predict`: the six targeting keys and the installation ID.
struct DeviceContextOptions: ParsableArguments {
    @Option(help: "The language code, such as en or pt-BR.")
    var language: String?

    @Option(help: "The device class: phone, tablet, desktop, server, ...")
    var deviceClass: String?

    @Option(help: "The operating system: linux, ios, macos, ... (default: this one).")
    var os: String?

    @Option(help: "The operating system's version (default: this one's).")
    var osVersion: String?

    @Option(help: "The region code, such as US.")
    var region: String?

    @Option(help: "The app version, such as 2.1.")
    var appVersion: String?

    @Option(help: "The installation ID for rollouts (default: the one kept in the cache folder).")
    var installationID: String?

    @Option(help: "The cache folder (default: $MLKIT_CACHE, else ~/.cache/mlkit/collections).")
    var cache: String?

    /// The context: this process's operating system and version, with the options on top.
    var context: DeviceContext {
        let current = DeviceContext.current()
        return DeviceContext(languageCode: language, deviceClass: deviceClass,
                             operatingSystem: os ?? current.operatingSystem, osVersion: osVersion ?? current.osVersion,
                             regionCode: region, appVersion: appVersion, installationID: installationID)
    }

    /// The cache folder, or `nil` for the library's default.
    var cacheFolder: URL? {
        (cache ?? environment("MLKIT_CACHE")).map { URL(fileURLWithPath: $0, isDirectory: true) }
    }
}

/// A non-empty environment variable.
func environment(_ name: String) -> String? {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
    return value
}

extension MLKitError {
    /// A usage error naming the option at fault.
    static func option(_ name: String, _ reason: String) -> MLKitError {
        MLKitError(.invalidParameter, reason, at: .init(field: "--\(name)"))
    }
}

/// Prints `text` to standard output as one write.
func printOutput(_ text: String) {
    FileHandle.standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
}

/// A compact date for listings.
func shortDate(_ date: Date?) -> String {
    date?.formatted(.iso8601) ?? "-"
}

/// Encodes `value` as pretty JSON text.
func jsonText(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

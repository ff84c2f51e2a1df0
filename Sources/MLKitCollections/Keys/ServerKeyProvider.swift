public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
public import MLKitEncryption

/// Fetches the keys of a collection's encrypted models from the collection server, with the
/// app's read token, and keeps them in memory only: a key is never written to disk.
///
/// ```swift
/// let keys = try ServerKeyProvider(server: serverURL, token: readToken)
/// let classifier = try await TextClassifier(contentsOf: entry.modelURL, keyProvider: keys)
/// ```
///
/// Each key is asked for once per provider. A key that cannot be had (no token, a token that
/// may not read it, an unknown key, the server down) is an ``MLKitEncryption/EncryptionError``
/// with code `keyUnavailable` that names the key identifier and the server's reason.
public actor ServerKeyProvider: KeyProvider {
    private let connection: ServerConnection
    private var keys: [String: ModelKey] = [:]

    /// Creates a provider.
    /// - Parameters:
    ///   - server: The collection server's base URL.
    ///   - token: A bearer token with the read scope for the collection that uses the keys.
    ///   - configuration: Settings for the URL session.
    /// - Throws: ``ModelCollectionError`` with code `invalidParameter` for a URL that is not http(s).
    public init(server: URL, token: String?, configuration: URLSessionConfiguration = .default) throws {
        connection = try ServerConnection(server: server, token: token, configuration: configuration)
    }

    /// The key with this identifier, from memory or from `GET /v1/keys/{identifier}`.
    /// - Throws: ``MLKitEncryption/EncryptionError`` with code `keyUnavailable`.
    public func key(for identifier: String) async throws -> ModelKey {
        if let key = keys[identifier] { return key }
        let subject = "key \(identifier)"
        let path = "/v1/keys/" + (identifier.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? identifier)
        do {
            let (data, _) = try await connection.send(connection.request("GET", path), about: subject)
            let key = try ModelKey(keyFileData: data, source: "the server's \(subject)")
            keys[identifier] = key
            return key
        } catch let error as ModelCollectionError {
            let hint = connection.token == nil && [.unauthorized, .forbidden].contains(error.code)
                ? " (no read token was given)" : ""
            throw EncryptionError(.keyUnavailable, "the collection server did not give it: \(error.description)\(hint)",
                                  keyIdentifier: identifier)
        }
    }
}

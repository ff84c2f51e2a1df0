import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Bearer tokens: random secrets handed out once, stored only as their SHA-256, and compared
/// in constant time.
enum AccessToken {
    /// A new token: `mlk_` and 32 random bytes in base64url (256 bits from the system's
    /// cryptographic generator).
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let base64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "mlk_\(base64)"
    }

    /// The SHA-256 of a token, as stored.
    static func hash(_ token: String) -> [UInt8] { Array(SHA256.hash(data: Array(token.utf8))) }

    /// Compares two byte strings in time that depends only on their lengths.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}

/// Checks the bearer token of a request against the stored hashes.
///
/// The hashes are cached in memory; an unknown token reloads them once, so a token made by
/// `mlkit serve token create` while the server runs works at once. A token still unknown
/// after that reload is remembered as refused for the refusal lifetime (5 s by default), so
/// that a client that keeps sending a wrong token costs no database read per request. At most
/// ``refusalLimit`` refused tokens are remembered; past that the list starts again. Every stored
/// hash is compared, with no early exit. Tokens never reach a log.
final class TokenVerifier: Sendable {
    private struct Cache {
        var tokens: [TokenRecord] = []
        /// The hashes of refused tokens, with when they were refused.
        var refused: [[UInt8]: ContinuousClock.Instant] = [:]
    }

    /// The most refused hashes remembered; past that the list starts again.
    static let refusalLimit = 10_000

    private let store: any CollectionStore
    /// How long an unknown token is answered 401 without a database read.
    private let refusalLifetime: Duration
    private let logger: Logger
    private let cache = NIOLockedValueBox(Cache())

    /// Creates a verifier over the stored tokens.
    /// - Parameters:
    ///   - store: Where the token hashes are kept.
    ///   - refusalLifetime: How long a refused token is answered 401 without a database read.
    ///   - logger: Where reloads (debug) and a full refusal list (notice) are logged.
    init(store: any CollectionStore, refusalLifetime: Duration, logger: Logger) {
        self.store = store
        self.refusalLifetime = refusalLifetime
        self.logger = logger
    }

    /// The token of an `Authorization: Bearer` header, checked for a scope and a collection.
    /// - Parameters:
    ///   - authorization: The header's value.
    ///   - scope: The scope the endpoint needs.
    ///   - collection: The collection the request concerns, if any.
    /// - Throws: ``CollectionServerError``: unauthorized for a missing or unknown token, forbidden
    ///   for one of another scope or collection.
    func authorize(_ authorization: String?, scope: TokenScope, collection: String?) async throws -> TokenRecord {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw CollectionServerError(.unauthorized, "this endpoint needs a bearer token with the \(scope.rawValue) scope")
        }
        let hash = AccessToken.hash(authorization.dropFirst(7).trimmingASCIIWhitespace())
        let now = ContinuousClock.now
        let (cached, recentlyRefused) = cache.withLockedValue { cache in
            (Self.find(hash, in: cache.tokens), cache.refused[hash].map { now - $0 < refusalLifetime } ?? false)
        }
        var token = cached
        if token == nil && !recentlyRefused {
            let stored = try await store.tokens()
            logger.debug("reloaded the token hashes", metadata: ["tokens": "\(stored.count)"])
            token = Self.find(hash, in: stored)
            let forgotten: Int = cache.withLockedValue { cache in
                cache.tokens = stored
                guard token == nil else { return 0 }
                let forgotten = cache.refused.count >= Self.refusalLimit ? cache.refused.count : 0
                if forgotten > 0 { cache.refused.removeAll() }
                cache.refused[hash] = now
                return forgotten
            }
            if forgotten > 0 {
                logger.notice("the list of refused tokens was full and starts again", metadata: ["forgotten": "\(forgotten)"])
            }
        }
        guard let token else { throw CollectionServerError(.unauthorized, "the bearer token is not valid") }
        guard token.scope == scope else {
            throw CollectionServerError(.forbidden, "this endpoint needs the \(scope.rawValue) scope; the token has \(token.scope.rawValue)")
        }
        if let limit = token.collection, let collection, limit != collection {
            throw CollectionServerError(.forbidden, "the token is limited to collection '\(limit)'")
        }
        return token
    }

    private static func find(_ hash: [UInt8], in tokens: [TokenRecord]) -> TokenRecord? {
        var found: TokenRecord?
        for token in tokens where AccessToken.constantTimeEqual(token.hash, hash) {
            found = token
        }
        return found
    }
}

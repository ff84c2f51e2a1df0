import Foundation

/// The one error type of the collection client.
///
/// Every error carries a stable ``Code`` to switch on, the HTTP status when the server
/// answered, and a message that names what is at fault: the collection, the model file's
/// SHA-256, the key or the cache file. New codes may be added later, so a `switch` over
/// ``code`` needs a default.
///
/// When no copy of a collection can be had, neither from the server nor from the cache,
/// ``ModelCollection/beginAccessing(identifier:server:context:cacheFolder:refreshPolicy:configuration:)``
/// throws the code ``Code/modelCollection`` (Apple's `MLModelError.Code.modelCollection`), with the
/// failure behind it in ``underlyingCode``: the app falls back to its bundled model.
public struct ModelCollectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable category of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The collection is not available: the server could not provide it and there is no
        /// cached copy. ``ModelCollectionError/underlyingCode`` says why the server could not.
        public static let modelCollection = Code("modelCollection")
        /// The server could not be reached, or the connection broke.
        public static let network = Code("network")
        /// The server has no such collection, deployment, model or key (HTTP 404).
        public static let notFound = Code("notFound")
        /// The request needs a valid bearer token (HTTP 401).
        public static let unauthorized = Code("unauthorized")
        /// The token may not do this: wrong scope or collection (HTTP 403).
        public static let forbidden = Code("forbidden")
        /// The server refused the request or failed (any other HTTP error status).
        public static let server = Code("server")
        /// The server's answer is not what the API describes.
        public static let invalidResponse = Code("invalidResponse")
        /// A downloaded file's SHA-256 or size differs from what the server announced.
        public static let checksumMismatch = Code("checksumMismatch")
        /// Reading or writing the cache or a local file failed.
        public static let io = Code("io")
        /// An argument cannot be used (an identifier, a URL, a percentage).
        public static let invalidParameter = Code("invalidParameter")

        /// The code's name, such as `checksumMismatch`.
        public var description: String { name }
    }

    /// The category of failure.
    public let code: Code
    /// What went wrong, naming the collection, model, key or file at fault.
    public let reason: String
    /// The HTTP status code, when the server answered with an error.
    public let statusCode: Int?
    /// For ``Code/modelCollection``: the category of the failure that left the collection
    /// unavailable (``Code/network``, ``Code/notFound``, ``Code/checksumMismatch``, ...).
    public let underlyingCode: Code?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The category of failure.
    ///   - reason: What went wrong, naming what is at fault.
    ///   - statusCode: The HTTP status, when the server answered.
    ///   - underlyingCode: The failure behind a ``Code/modelCollection`` error.
    public init(_ code: Code, _ reason: String, statusCode: Int? = nil, underlyingCode: Code? = nil) {
        self.code = code
        self.reason = reason
        self.statusCode = statusCode
        self.underlyingCode = underlyingCode
    }

    /// The message, with the HTTP status when there is one: `HTTP 404: collection "x": ...`.
    public var description: String {
        guard let statusCode else { return reason }
        return "\(reason) (HTTP \(statusCode))"
    }
}

extension ModelCollectionError {
    /// The collection cannot be had at all: `cause` kept the server from providing it and no
    /// cached copy exists.
    static func unavailable(_ identifier: String, because cause: ModelCollectionError) -> ModelCollectionError {
        let subject = "collection \"\(identifier)\""
        let why = cause.reason.hasPrefix(subject + ": ") ? String(cause.reason.dropFirst(subject.count + 2)) : cause.reason
        return ModelCollectionError(.modelCollection, "\(subject) is unavailable, with no cached copy: \(why)",
                                    statusCode: cause.statusCode, underlyingCode: cause.code)
    }

    /// A failure to read or write `path`.
    static func io(_ what: String, _ path: String, _ error: any Error) -> ModelCollectionError {
        ModelCollectionError(.io, "\(path): \(what): \(error.localizedDescription)")
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one error type of the collection server.
///
/// Every error has a stable ``Code`` and a message that names the field, file or resource at
/// fault. Over HTTP it becomes the status code of its ``Code`` and the body
/// `{"error": {"message": "..."}}`.
public struct CollectionServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable category of failure, with its HTTP status code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The HTTP status code that answers this failure.
        public let status: Int
        private let name: String
        private init(_ name: String, _ status: Int) {
            self.name = name
            self.status = status
        }

        /// A malformed request: bad JSON, a bad parameter or path (400).
        public static let badRequest = Code("badRequest", 400)
        /// A missing or unknown bearer token (401).
        public static let unauthorized = Code("unauthorized", 401)
        /// A token without the right scope or collection (403).
        public static let forbidden = Code("forbidden", 403)
        /// An unknown collection, deployment, model or key (404).
        public static let notFound = Code("notFound", 404)
        /// A method the resource does not answer (405).
        public static let methodNotAllowed = Code("methodNotAllowed", 405)
        /// A request that contradicts the current state, such as a rollback with nothing to roll
        /// back to (409).
        public static let conflict = Code("conflict", 409)
        /// A body over the size limit (413).
        public static let payloadTooLarge = Code("payloadTooLarge", 413)
        /// A well-formed request whose content is invalid: not a model, not a key, a missing
        /// model identifier (422).
        public static let unprocessable = Code("unprocessable", 422)
        /// The data folder or database failed (500).
        public static let storage = Code("storage", 500)
        /// The data folder's disk is full: an upload or a change could not be written, and
        /// nothing of it was kept (507). The server keeps serving what it has.
        public static let insufficientStorage = Code("insufficientStorage", 507)
        /// The shared database cannot be reached (503, with `Retry-After`): nothing was changed.
        /// A replica keeps answering resolutions and downloads from its caches meanwhile, and
        /// recovers by itself when the database returns.
        public static let databaseUnavailable = Code("databaseUnavailable", 503)

        /// The code's name, such as `notFound`.
        public var description: String { name }
    }

    /// The category of failure.
    public let code: Code
    /// What went wrong, naming the field, file or resource at fault.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The category of failure.
    ///   - message: What went wrong.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    static func badRequest(_ message: String) -> Self { .init(.badRequest, message) }
    static func notFound(_ message: String) -> Self { .init(.notFound, message) }
    static func conflict(_ message: String) -> Self { .init(.conflict, message) }
    static func unprocessable(_ message: String) -> Self { .init(.unprocessable, message) }
    static func storage(_ message: String) -> Self { .init(.storage, message) }

    /// A failure of the file system at `path`: `insufficientStorage` when the disk (or the
    /// user's quota) is full, `storage` otherwise; the message names the path and the cause.
    static func fileSystem(_ path: String, _ what: String, errno code: Int32) -> Self {
        let reason = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return .init(.insufficientStorage, "\(path): \(what): the disk is full (\(reason))")
        }
        return .init(.storage, "\(path): \(what) (\(reason))")
    }
}

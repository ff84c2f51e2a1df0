import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Everything a request may need: the stores, the token verifier and the limits.
struct ServerState: Sendable {
    let store: any CollectionStore
    let files: ModelFileStore
    let tokens: TokenVerifier
    let maxUploadSize: Int64
    let resolvedBodies: ResolvedBodyCache
    let activeDeployments: ActiveDeploymentCache
    let fileIO: FileIO
}

/// The server's one responder: it routes a request by its path and method, turns every error
/// into a JSON body with its status code, and logs the request (never its token or query).
struct CollectionServerResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let state: ServerState
    let logger: Logger

    func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await route(request, context: context)
        } catch let error as CollectionServerError {
            response = Self.failure(error)
        } catch let error as RangeNotSatisfiable {
            response = Self.json(WireFormat.Failure(error: .init(message: "the range lies past the end of the \(error.size)-byte file")),
                                 status: .rangeNotSatisfiable,
                                 headers: [.contentRange: "bytes */\(error.size)", .acceptRanges: "bytes"])
        } catch let error as MethodNotAllowed {
            response = Self.failure(CollectionServerError(.methodNotAllowed, error.message))
            response.headers[.allow] = error.allowed.map(\.rawValue).joined(separator: ", ")
        } catch {
            logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            response = Self.failure(.storage("internal error"))
        }
        let status = response.status.code
        let level: Logger.Level = status >= 500 ? .error : (request.method == .get || request.method == .head) && status < 400 ? .debug : .info
        logger.log(level: level, "request", metadata: [
            "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(status)",
            "ms": "\(Self.milliseconds(since: start))",
        ])
        return response
    }

    /// Finds the endpoint for a path and method.
    private func route(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let path = try Self.components(of: request.uri.path)
        let method = request.method
        let client = ClientEndpoints(state: state, request: request, context: context)
        let publisher = PublisherEndpoints(state: state, request: request, logger: logger)
        switch path.count {
        case 1 where path[0] == "healthz":
            try Self.allow(method, [.get, .head])
            return Self.body(Self.healthy, status: .ok).head(if: method == .head)
        case 2 where path == ["v1", "collections"]:
            try Self.allow(method, [.get])
            return try await publisher.listCollections()
        case 2 where path == ["v1", "models"]:
            try Self.allow(method, [.post])
            return try await publisher.uploadModel()
        case 3 where path[0] == "v1" && path[1] == "collections":
            let collection = try Identifier.collection(path[2])
            try Self.allow(method, [.get, .put])
            return method == .get ? try await client.resolve(collection)
                                  : try await publisher.saveCollection(collection)
        case 3 where path[0] == "v1" && path[1] == "models":
            try Self.allow(method, [.get, .head])
            return try await client.download(try Identifier.sha256(path[2]), headOnly: method == .head)
        case 3 where path[0] == "v1" && path[1] == "keys":
            try Self.allow(method, [.get])
            return try await client.key(try Identifier.key(path[2]))
        case 4 where path[0] == "v1" && path[1] == "collections" && path[3] == "deployments":
            let collection = try Identifier.collection(path[2])
            try Self.allow(method, [.get, .post])
            return method == .get ? try await publisher.history(collection) : try await publisher.deploy(collection)
        case 4 where path[0] == "v1" && path[1] == "collections" && path[3] == "rollback":
            let collection = try Identifier.collection(path[2])
            try Self.allow(method, [.post])
            return try await publisher.rollback(collection)
        case 5 where path[0] == "v1" && path[1] == "collections" && path[3] == "keys":
            let collection = try Identifier.collection(path[2])
            try Self.allow(method, [.put])
            return try await publisher.registerKey(try Identifier.key(path[4]), collection: collection)
        case 6 where path[0] == "v1" && path[1] == "collections" && path[3] == "deployments" && path[5] == "activate":
            let collection = try Identifier.collection(path[2])
            try Self.allow(method, [.post])
            return try await publisher.activate(try Identifier.deployment(path[4]), collection: collection)
        default:
            throw CollectionServerError.notFound("no endpoint at \(request.uri.path)")
        }
    }

    /// The percent-decoded segments of a path.
    private static func components(of path: String) throws -> [String] {
        try path.split(separator: "/").map { segment in
            guard let decoded = percentDecoded(segment) else {
                throw CollectionServerError.badRequest("the path segment '\(segment)' is not valid percent-encoding")
            }
            return decoded
        }
    }

    /// Decodes `%XX` escapes to UTF-8; `nil` for a broken escape or bytes that are not UTF-8.
    static func percentDecoded(_ segment: Substring) -> String? {
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return String(segment) }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        var iterator = segment.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hex), let low = iterator.next().flatMap(hex) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    private static func allow(_ method: HTTPRequest.Method, _ allowed: [HTTPRequest.Method]) throws {
        guard allowed.contains(method) else { throw MethodNotAllowed(method: method, allowed: allowed) }
    }

    /// A method the endpoint does not answer; its answer carries an `Allow` header.
    private struct MethodNotAllowed: Error {
        let method: HTTPRequest.Method
        let allowed: [HTTPRequest.Method]
        var message: String {
            "\(method.rawValue) is not allowed here (allowed: \(allowed.map(\.rawValue).joined(separator: ", ")))"
        }
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = (ContinuousClock.now - start).components
        return String(format: "%.2f", Double(elapsed.seconds) * 1e3 + Double(elapsed.attoseconds) / 1e15)
    }

    // MARK: Responses

    private static let healthy = Data(#"{"status":"ok"}"#.utf8)

    /// A JSON response.
    static func json(_ value: some Encodable, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        body(WireFormat.encode(value), status: status, headers: headers)
    }

    /// A JSON response from encoded bytes.
    static func body(_ data: Data, status: HTTPResponse.Status, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The response for an error: its status and `{"error": {"message": ...}}`.
    static func failure(_ error: CollectionServerError) -> Response {
        var headers: HTTPFields = [:]
        if error.code == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return json(WireFormat.Failure(error: .init(message: error.message)),
                    status: HTTPResponse.Status(code: error.code.status), headers: headers)
    }
}

extension Response {
    /// The same response without its body (for `HEAD`), keeping `Content-Length`.
    func head(if isHead: Bool) -> Response { isHead ? createHeadResponse() : self }
}

/// The shapes of the names in paths; anything else is refused before it reaches storage or
/// the file system.
enum Identifier {
    /// A collection, model or key identifier: 1 to 128 of `A–Z a–z 0–9 . _ -`, not only dots.
    static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128 && !text.allSatisfy { $0 == "." }
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }

    static func collection(_ text: String) throws -> String {
        guard isValid(text) else {
            throw CollectionServerError.badRequest(
                "'\(text)' is not a valid collection identifier (1–128 of A–Z a–z 0–9 . _ -, not only dots)")
        }
        return text
    }

    /// A key identifier: 1 to 255 bytes of UTF-8 (as an encrypted model's header allows), no
    /// control characters and no `/`. Keys are only ever looked up in the database.
    static func key(_ text: String) throws -> String {
        guard !text.isEmpty, text.utf8.count <= 255, !text.contains("/"),
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw CollectionServerError.badRequest("'\(text)' is not a valid key identifier")
        }
        return text
    }

    /// A model file's name: 64 lowercase hex digits.
    static func sha256(_ text: String) throws -> String {
        guard isSHA256(text) else {
            throw CollectionServerError.badRequest("'\(text)' is not a SHA-256 (64 lowercase hex digits)")
        }
        return text
    }

    static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// A deployment ID: a UUID, in capitals.
    static func deployment(_ text: String) throws -> String {
        guard let uuid = UUID(uuidString: text) else {
            throw CollectionServerError.badRequest("'\(text)' is not a deployment ID (a UUID)")
        }
        return uuid.uuidString
    }
}

import Foundation
import HTTPTypes
package import Hummingbird
package import Logging

/// Everything a request may need: the stores, the token verifier, the limits and the log.
struct ServerState: Sendable {
    let store: any CollectionStore
    let files: any ModelFileStore
    /// The shared database, when the stores are in PostgreSQL.
    let database: SharedDatabase?
    let tokens: TokenVerifier
    let maxUploadSize: Int64
    let resolvedBodies: ResolvedBodyCache
    let activeDeployments: ActiveDeploymentCache
    let fileIO: FileIO
    let logger: Logger
}

/// The context of a request: Hummingbird's own storage (the path's parameters, the logger),
/// made from a connection, or from a logger alone for a request run in this process.
package struct ServerRequestContext: RequestContext {
    /// Hummingbird's storage.
    package var coreContext: CoreRequestContextStorage

    /// A context for a request that came over a connection.
    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    /// A context for a request run in this process, with no connection.
    package init(logger: Logger) {
        coreContext = .init(source: LoggerSource(logger: logger))
    }

    private struct LoggerSource: RequestContextSource {
        let logger: Logger
    }
}

/// The server's responder: it puts the path in canonical form (``Paths``), hands the request
/// to the router of ``Endpoint/all``, turns every error into a JSON body with its status code
/// (404 for a path with no endpoint, 405 with `Allow` for one without that method), and logs
/// the request (never its token or query).
package struct CollectionServerResponder: HTTPResponder {
    package typealias Context = ServerRequestContext

    let state: ServerState
    let router: RouterResponder<ServerRequestContext>

    init(state: ServerState) {
        self.state = state
        self.router = Endpoint.router(state: state).buildResponder()
    }

    package func respond(to request: Request, context: ServerRequestContext) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await router.respond(to: try Self.routed(request), context: context)
        } catch {
            response = failure(error, request: request)
        }
        let status = response.status.code
        let level: Logger.Level = status >= 500 ? .error : (request.method == .get || request.method == .head) && status < 400 ? .debug : .info
        state.logger.log(level: level, "request", metadata: [
            "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "status": "\(status)",
            "ms": "\(Self.milliseconds(since: start))",
        ])
        return response
    }

    /// The request with its path in canonical form, for the router.
    private static func routed(_ request: Request) throws -> Request {
        let path = request.uri.path
        let canonical = try Paths.canonical(path)
        guard canonical != path else { return request }
        var head = request.head
        head.path = canonical + (request.uri.query.map { "?\($0)" } ?? "")
        return Request(head: head, body: request.body)
    }

    /// The answer to an error.
    private func failure(_ error: any Error, request: Request) -> Response {
        switch error {
        case let error as CollectionServerError:
            if error.code.status >= 500 {
                state.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error.message)"])
            }
            return Responses.failure(error)
        case let error as RangeNotSatisfiable:
            return Responses.json(WireFormat.Failure(error: .init(message: "the range lies past the end of the \(error.size)-byte file")),
                                  status: .rangeNotSatisfiable,
                                  headers: [.contentRange: "bytes */\(error.size)", .acceptRanges: "bytes"])
        case is UnroutedRequests.Unrouted:
            do {
                return try unrouted(request)
            } catch {
                return failure(error, request: request)
            }
        default:
            state.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return Responses.failure(.storage("internal error"))
        }
    }

    /// A request the router has no endpoint for: 405 with `Allow` when its path has other
    /// methods, 404 otherwise. A path naming an invalid collection is a 400 whatever the method.
    private func unrouted(_ request: Request) throws -> Response {
        let segments = (try? Paths.canonical(request.uri.path))?.split(separator: "/") ?? []
        guard let (path, methods) = Endpoint.methods(at: segments) else {
            throw CollectionServerError.notFound("no endpoint at \(request.uri.path)")
        }
        if let index = path.firstIndex(where: { $0 == RouterPath.Element.capture("collection") }),
           let name = Paths.decoded(segments[index]) {
            _ = try Identifier.collection(name)
        }
        let allowed = methods.map(\.rawValue).joined(separator: ", ")
        var response = Responses.failure(CollectionServerError(
            .methodNotAllowed, "\(request.method.rawValue) is not allowed here (allowed: \(allowed))"))
        response.headers[.allow] = allowed
        return response
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = (ContinuousClock.now - start).components
        return String(format: "%.2f", Double(elapsed.seconds) * 1e3 + Double(elapsed.attoseconds) / 1e15)
    }
}

/// The bodies every endpoint answers with.
enum Responses {
    /// `GET /healthz`: `{"status": "ok", "database": "ok"}`, or `"degraded"` and
    /// `"unavailable"` while the shared database cannot be reached (with the
    /// `X-MLKit-Database: unavailable` header). The status is 200 either way: the replica still
    /// serves what its caches hold.
    static func health(_ state: ServerState) -> Response {
        let available = state.database?.isAvailable ?? true
        let store = state.database == nil ? "sqlite" : "postgres"
        let text = available ? #"{"status":"ok","store":"\#(store)","database":"ok"}"#
            : #"{"status":"degraded","store":"\#(store)","database":"unavailable"}"#
        return body(Data(text.utf8), status: .ok, headers: available ? [:] : [DatabaseHeader.name: DatabaseHeader.unavailable])
    }

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
        if error.code == .databaseUnavailable {
            headers[.retryAfter] = "1"
            headers[DatabaseHeader.name] = DatabaseHeader.unavailable
        }
        return json(WireFormat.Failure(error: .init(message: error.message)),
                    status: HTTPResponse.Status(code: error.code.status), headers: headers)
    }
}

/// `X-MLKit-Database: unavailable`: the answer of a replica that cannot reach the shared
/// database; a 200 with it came from the replica's caches.
enum DatabaseHeader {
    static let name = HTTPField.Name("X-MLKit-Database")!
    static let unavailable = "unavailable"
}

extension Response {
    /// The same response without its body (for `HEAD`), keeping `Content-Length`.
    func head(if isHead: Bool) -> Response { isHead ? createHeadResponse() : self }
}

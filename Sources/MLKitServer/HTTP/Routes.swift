import HTTPTypes
import Hummingbird

/// One endpoint of the API: a method on a path, the statuses it may answer with, and the
/// handler. ``Endpoint/all`` is the whole API; the router is built from it, and
/// `docs/openapi.yaml` is checked against it.
struct Endpoint: Sendable {
    typealias Handler = @Sendable (_ request: Request, _ context: ServerRequestContext,
                                   _ state: ServerState) async throws -> Response

    let method: HTTPRequest.Method
    /// The path, with its parameters in braces (`/v1/models/{sha256}`).
    let path: RouterPath
    /// Every status the endpoint answers with, 500 (a failure of the data folder or
    /// database) included, and 503 (the shared database unreachable) for every endpoint that
    /// may need it; the endpoints that write also answer 507 when the disk is full.
    let statuses: Set<Int>
    let handler: Handler

    init(_ method: HTTPRequest.Method, _ path: RouterPath, _ statuses: Set<Int>, _ handler: @escaping Handler) {
        self.method = method
        self.path = path
        self.statuses = statuses.union("\(path)" == "/healthz" ? [500] : [500, 503])
        self.handler = handler
    }

    /// The API, as `docs/collection-server.md` lists it.
    static let all: [Endpoint] = [
        Endpoint(.get, "/healthz", [200]) { _, _, state in Responses.health(state) },
        Endpoint(.head, "/healthz", [200]) { _, _, state in Responses.health(state).head(if: true) },

        // Devices.
        Endpoint(.get, "/v1/collections/{collection}", [200, 304, 400, 404]) { request, context, state in
            try await ClientEndpoints(state: state, request: request, context: context).resolve(try context.collection())
        },
        Endpoint(.get, "/v1/models/{sha256}", [200, 206, 304, 400, 404, 416]) { request, context, state in
            try await ClientEndpoints(state: state, request: request, context: context)
                .download(try context.sha256(), headOnly: false)
        },
        Endpoint(.head, "/v1/models/{sha256}", [200, 206, 304, 400, 404, 416]) { request, context, state in
            try await ClientEndpoints(state: state, request: request, context: context)
                .download(try context.sha256(), headOnly: true)
        },
        Endpoint(.get, "/v1/keys/{keyID}", [200, 400, 401, 403, 404]) { request, context, state in
            try await ClientEndpoints(state: state, request: request, context: context).key(try context.keyID())
        },

        // Publishers.
        Endpoint(.get, "/v1/collections", [200, 401, 403]) { request, _, state in
            try await PublisherEndpoints(state: state, request: request).listCollections()
        },
        Endpoint(.put, "/v1/collections/{collection}", [200, 201, 400, 401, 403, 413, 507]) { request, context, state in
            try await PublisherEndpoints(state: state, request: request).saveCollection(try context.collection())
        },
        Endpoint(.post, "/v1/models", [200, 201, 401, 403, 413, 422, 507]) { request, _, state in
            try await PublisherEndpoints(state: state, request: request).uploadModel()
        },
        Endpoint(.get, "/v1/collections/{collection}/deployments", [200, 400, 401, 403, 404]) { request, context, state in
            try await PublisherEndpoints(state: state, request: request).history(try context.collection())
        },
        Endpoint(.post, "/v1/collections/{collection}/deployments",
                 [201, 400, 401, 403, 404, 413, 422, 507]) { request, context, state in
            try await PublisherEndpoints(state: state, request: request).deploy(try context.collection())
        },
        Endpoint(.post, "/v1/collections/{collection}/deployments/{deploymentID}/activate",
                 [200, 400, 401, 403, 404, 507]) { request, context, state in
            let collection = try context.collection()
            return try await PublisherEndpoints(state: state, request: request)
                .activate(try context.deploymentID(), collection: collection)
        },
        Endpoint(.post, "/v1/collections/{collection}/rollback", [200, 400, 401, 403, 404, 409, 413, 507]) { request, context, state in
            try await PublisherEndpoints(state: state, request: request).rollback(try context.collection())
        },
        Endpoint(.put, "/v1/collections/{collection}/keys/{keyID}",
                 [200, 201, 400, 401, 403, 404, 409, 413, 422, 507]) { request, context, state in
            let collection = try context.collection()
            return try await PublisherEndpoints(state: state, request: request)
                .registerKey(try context.keyID(), collection: collection)
        },
    ]

    /// A router over `all`, whose handlers answer with `state`.
    static func router(state: ServerState) -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self)
        router.add(middleware: UnroutedRequests())
        for endpoint in all {
            router.on(endpoint.path, method: endpoint.method) { request, context in
                try await endpoint.handler(request, context, state)
            }
        }
        return router
    }

    /// The methods the API answers on the path of `segments` (canonical, still encoded), or
    /// `nil` when no endpoint has that path.
    static func methods(at segments: [Substring]) -> (path: RouterPath, methods: [HTTPRequest.Method])? {
        let matching = all.filter { endpoint in
            endpoint.path.count == segments.count && zip(endpoint.path, segments).allSatisfy { $0 ~= $1 }
        }
        guard let first = matching.first else { return nil }
        return (first.path, matching.map(\.method).sorted { $0.rawValue < $1.rawValue })
    }
}

/// Marks the requests that the router found no endpoint for: they reach this middleware
/// without an endpoint path, and leave it as ``Unrouted``, which the responder answers with
/// 404, or 405 when the path has other methods.
struct UnroutedRequests: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.endpointPath != nil else { throw Unrouted() }
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Hummingbird's own errors (a file that vanished under FileIO, say) would otherwise
            // become its own response bodies; they are failures of this server.
            throw InternalFailure(underlying: error)
        }
    }

    /// A request with no endpoint for its path and method.
    struct Unrouted: Error {}

    /// An error of the framework inside an endpoint.
    struct InternalFailure: Error, CustomStringConvertible {
        let underlying: any Error
        var description: String { "\(underlying)" }
    }
}

extension ServerRequestContext {
    /// A path parameter, percent-decoded.
    private func parameter(_ name: String) throws -> String {
        guard let raw = parameters.get(name), let decoded = Paths.decoded(raw[...]) else {
            throw CollectionServerError.badRequest("the path has no valid '\(name)'")
        }
        return decoded
    }

    /// `{collection}`, validated.
    func collection() throws -> String { try Identifier.collection(parameter("collection")) }
    /// `{sha256}`, validated.
    func sha256() throws -> String { try Identifier.sha256(parameter("sha256")) }
    /// `{keyID}`, validated.
    func keyID() throws -> String { try Identifier.key(parameter("keyID")) }
    /// `{deploymentID}`, validated and in capitals.
    func deploymentID() throws -> String { try Identifier.deployment(parameter("deploymentID")) }
}

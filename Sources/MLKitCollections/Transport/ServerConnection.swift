import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests to one collection server: URLs, the bearer token, and the mapping of transport
/// failures and HTTP error statuses to ``ModelCollectionError``.
final class ServerConnection: Sendable {
    /// The server's base URL, such as `http://127.0.0.1:8080`.
    let server: URL
    /// The bearer token sent with every request, if any.
    let token: String?
    /// The session's settings, for the download sessions made from it.
    let configuration: URLSessionConfiguration
    /// The session for requests whose whole answer fits in memory.
    let session: URLSession

    /// Creates a connection; `configuration` is copied and its HTTP cache turned off, since
    /// the client revalidates with ETags itself.
    init(server: URL, token: String?, configuration: URLSessionConfiguration) throws {
        guard let scheme = server.scheme?.lowercased(), scheme == "http" || scheme == "https", server.host != nil else {
            throw ModelCollectionError(.invalidParameter, "server URL \"\(server.absoluteString)\": expected http://HOST[:PORT] or https://...")
        }
        self.server = server
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        let copy = configuration.copy() as! URLSessionConfiguration
        copy.urlCache = nil
        copy.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.configuration = copy
        self.session = URLSession(configuration: copy)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// The absolute URL of `path` (which starts with `/`) with `query`.
    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        let base = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast())
            : components.percentEncodedPath
        components.percentEncodedPath = base + path
        components.queryItems = query.isEmpty ? nil : query
        return components.url!
    }

    /// A request for `path` with the token and the body's content type (JSON unless given).
    func request(_ method: String, _ path: String, query: [URLQueryItem] = [], body: Data? = nil,
                 contentType: String? = nil) -> URLRequest {
        var request = URLRequest(url: url(path, query: query))
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = body
        if let type = contentType ?? (body == nil ? nil : "application/json") {
            request.setValue(type, forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Sends `request` and returns the answer of a 2xx or 304 status.
    /// - Parameter subject: What the request is about, for messages (`collection "x"`).
    /// - Throws: ``ModelCollectionError`` for a transport failure or an error status.
    func send(_ request: URLRequest, about subject: String) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await transport(about: subject) { try await session.data(for: request) }
        return (data, try checked(response, body: data, about: subject))
    }

    /// Uploads the file at `file` as the body of `request`, streamed from disk.
    func upload(_ request: URLRequest, fromFile file: URL, about subject: String) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await transport(about: subject) { try await session.upload(for: request, fromFile: file) }
        return (data, try checked(response, body: data, about: subject))
    }

    /// Runs a transfer, turning a transport failure into a ``ModelCollectionError/Code/network`` error.
    func transport<T>(about subject: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ModelCollectionError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw networkError(error, about: subject)
        }
    }

    /// The error for a failed connection to the server.
    func networkError(_ error: any Error, about subject: String) -> ModelCollectionError {
        ModelCollectionError(.network, "\(subject): cannot reach the server at \(server.absoluteString) (\(error.localizedDescription))")
    }

    /// `response` as an HTTP response with a 2xx or 304 status.
    /// - Throws: The error that the status and the server's JSON message describe.
    func checked(_ response: URLResponse, body: Data, about subject: String) throws -> HTTPURLResponse {
        guard let http = response as? HTTPURLResponse else {
            throw ModelCollectionError(.invalidResponse, "\(subject): the server's answer is not HTTP")
        }
        if (200..<300).contains(http.statusCode) || http.statusCode == 304 { return http }
        throw Self.statusError(http.statusCode, body: body, about: subject)
    }

    /// The error for an HTTP error `status`, with the message from the server's JSON body.
    static func statusError(_ status: Int, body: Data, about subject: String) -> ModelCollectionError {
        struct ErrorBody: Decodable {
            struct Message: Decodable { let message: String }
            let error: Message
        }
        let message = (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error.message
            ?? String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let code: ModelCollectionError.Code = switch status {
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        default: .server
        }
        let detail = message.isEmpty ? HTTPURLResponse.localizedString(forStatusCode: status) : message
        return ModelCollectionError(code, "\(subject): \(detail)", statusCode: status)
    }
}

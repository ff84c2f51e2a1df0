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
    /// Seconds without progress after which a ``Watchdog`` ends a request or a download.
    let watchdogInterval: TimeInterval

    /// Creates a connection; `configuration` is copied and its HTTP cache turned off, since
    /// the client revalidates with ETags itself.
    /// - Parameter watchdogInterval: The watchdog's interval; by default the configuration's
    ///   (``Watchdog/interval(for:)``). Tests make it shorter than the session's own timeout.
    init(server: URL, token: String?, configuration: URLSessionConfiguration,
         watchdogInterval: TimeInterval? = nil) throws {
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
        self.watchdogInterval = watchdogInterval ?? Watchdog.interval(for: copy)
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
        let (data, response) = try await transport(about: subject) {
            try await run(stoppingOnCancel: false, watched: true) { session.dataTask(with: request, completionHandler: $0) }
        }
        return (data, try checked(response, body: data, about: subject))
    }

    /// Uploads the file at `file` as the body of `request`, streamed from disk.
    func upload(_ request: URLRequest, fromFile file: URL, about subject: String) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await transport(about: subject) {
            try await run(stoppingOnCancel: true, watched: false) {
                session.uploadTask(with: request, fromFile: file, completionHandler: $0)
            }
        }
        return (data, try checked(response, body: data, about: subject))
    }

    /// Resumes the task that `makeTask` makes with the completion handler it is given, and
    /// returns the task's answer.
    ///
    /// This replaces `URLSession.data(for:)` and `upload(for:fromFile:)`, which deadlock on
    /// Linux when their Swift task is cancelled: the cancellation handler runs under the task's
    /// status lock and calls `URLSessionTask.cancel()`, which waits for the session's queue,
    /// while that queue's thread, finishing the transfer, waits for the same lock to resume the
    /// continuation. Here a cancelled Swift task throws `CancellationError` at once
    /// (``TransferCompletion/run(_:watchdog:onStall:onCancel:)``).
    /// - Parameter stoppingOnCancel: Whether a cancellation also stops the transfer
    ///   (``URLSessionTask/cancelLater()``), for uploads, whose bytes are worth stopping. A request
    ///   whose answer fits in memory is left to end unobserved instead: cancelling a transfer
    ///   closes its connection, and on Linux many cancelled transfers can leave a later socket of
    ///   the process unwatched, its request hanging. (With CancellationStress's 1,000 requests
    ///   each cancelled, the next access hung in 1 run of 10; after 1,000 completed requests on
    ///   fresh sessions, in none of 10.)
    /// - Parameter watched: Whether a ``Watchdog`` bounds the transfer. A request's answer
    ///   reports no progress until it ends, so the watchdog bounds its whole time. Uploads are
    ///   not watched: a large model file may take longer than any bound that suits a request.
    private func run(stoppingOnCancel: Bool, watched: Bool,
                     _ makeTask: (@escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> URLSessionTask)
        async throws -> (Data, URLResponse) {
        let completion = TransferCompletion<(Data, URLResponse)>()
        let interval = watchdogInterval
        let watchdog = watched ? Watchdog(interval: interval) : nil
        let task = makeTask { data, response, error in
            watchdog?.stop()
            if let response, error == nil {
                completion.finish(.success((data ?? Data(), response)))
            } else {
                completion.finish(.failure(error ?? URLError(.badServerResponse)))
            }
        }
        return try await completion.run(task, watchdog: watchdog) {
            completion.finish(.failure(TransferStalled(seconds: interval)))
        } onCancel: {
            completion.finish(.failure(CancellationError()))
            if stoppingOnCancel { task.cancelLater() }
        }
    }

    /// Runs a transfer, turning a transport failure into a ``ModelCollectionError/Code/network`` error.
    func transport<T>(about subject: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ModelCollectionError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch where Task.isCancelled {
            // A transfer that failed as its task was being cancelled, such as with
            // `URLError(.cancelled)`.
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

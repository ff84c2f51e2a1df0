import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MLKitServer
import NIOConcurrencyHelpers
import NIOCore
import TestSupport
import Testing

/// An answer from the server.
struct HTTPAnswer: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    /// A header, by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    /// The message of an error body.
    var errorMessage: String {
        (json["error"] as? [String: Any])?["message"] as? String ?? ""
    }
}

/// Sends requests to the server: over HTTP to a process (``HTTPClient``), or through the
/// router in this process (``RouterClient``). The tests are written against this, so most of
/// them need no process at all.
protocol APIClient: Sendable {
    /// Sends a request to `path` (with its query, if any).
    func request(_ method: String, _ path: String, body: Data?, headers: [String: String],
                 token: String?) async throws -> HTTPAnswer
}

extension APIClient {
    /// Sends a request to `path` (with its query, if any).
    func send(_ method: String = "GET", _ path: String, body: Data? = nil, headers: [String: String] = [:],
              token: String? = nil) async throws -> HTTPAnswer {
        try await request(method, path, body: body, headers: headers, token: token)
    }

    /// Sends a JSON body.
    func send(_ method: String, _ path: String, json: Any, token: String?) async throws -> HTTPAnswer {
        let body = try JSONSerialization.data(withJSONObject: json)
        return try await send(method, path, body: body, headers: ["Content-Type": "application/json"], token: token)
    }
}

/// Requests through URLSession, with no cache, so that ETags and ranges reach the server as
/// written.
struct HTTPClient: APIClient {
    let base: URL
    let session: URLSession

    init(base: URL) {
        self.base = base
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.timeoutIntervalForRequest = 120
        session = URLSession(configuration: configuration)
    }

    func request(_ method: String, _ path: String, body: Data?, headers: [String: String],
                 token: String?) async throws -> HTTPAnswer {
        guard let url = URL(string: path, relativeTo: base) else { throw ServerTestError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw ServerTestError("not an HTTP response") }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return HTTPAnswer(status: http.statusCode, headers: fields, body: data)
    }
}

/// Requests through the server's router in this process, with HummingbirdTesting: no socket
/// and no process. Every answer's status is checked against the statuses its endpoint
/// declares (``Endpoint/statuses``), which `docs/openapi.yaml` lists.
struct RouterClient: APIClient {
    let client: any TestClientProtocol
    /// Where the endpoints reached are noted, if anywhere.
    var reached: ReachedEndpoints? = nil

    func request(_ method: String, _ path: String, body: Data?, headers: [String: String],
                 token: String?) async throws -> HTTPAnswer {
        guard let method = HTTPRequest.Method(method) else { throw ServerTestError("bad method \(method)") }
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else { throw ServerTestError("bad header name \(name)") }
            fields[name] = value
        }
        if let token { fields[.authorization] = "Bearer \(token)" }
        let response = try await client.executeRequest(uri: path, method: method, headers: fields,
                                                       body: body.map { ByteBuffer(bytes: $0) })
        var answerHeaders: [String: String] = [:]
        for field in response.headers { answerHeaders[field.name.rawName] = field.value }
        let answer = HTTPAnswer(status: response.status.code, headers: answerHeaders,
                                body: Data(response.body.readableBytesView))
        if let endpoint = Self.endpoint(method, path) {
            #expect(endpoint.statuses.contains(answer.status),
                    "\(method.rawValue) \(endpoint.path) answered \(answer.status), which it does not declare")
            reached?.note(endpoint)
        }
        return answer
    }

    /// The endpoint a request reaches, if any.
    static func endpoint(_ method: HTTPRequest.Method, _ path: String) -> Endpoint? {
        let bare = String(path.prefix { $0 != "?" })
        guard let canonical = try? Paths.canonical(bare) else { return nil }
        let segments = canonical.split(separator: "/")
        return Endpoint.all.first { endpoint in
            endpoint.method == method && endpoint.path.count == segments.count
                && zip(endpoint.path, segments).allSatisfy { $0 ~= $1 }
        }
    }
}

/// The endpoints a test's requests reached, as `METHOD /path/{parameter}`.
final class ReachedEndpoints: Sendable {
    private let names = NIOLockedValueBox<Set<String>>([])

    func note(_ endpoint: Endpoint) {
        _ = names.withLockedValue { $0.insert("\(endpoint.method.rawValue) \(endpoint.path)") }
    }

    var all: Set<String> { names.withLockedValue { $0 } }
}

/// A bare TCP connection to the server, for what URLSession will not send: paths with dot
/// segments, and uploads cut off halfway. Its calls block: a suite that uses it runs
/// ``Trait/onOwnThreads``.
final class RawConnection {
    private var socket: Int32

    init(port: Int) throws {
        // Close-on-exec: the servers and tools the tests start must not inherit it.
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ServerTestError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(socket)
            throw ServerTestError("connect() failed")
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    /// Whether the server has closed the connection (without waiting).
    var isClosedByPeer: Bool {
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// What the server has sent so far, without waiting; nil when it has sent nothing.
    func availableAnswer() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// Closes the connection.
    func close() {
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
    }

    /// Writes bytes.
    func write(_ data: Data) throws {
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = send(socket, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw ServerTestError("send() failed") }
                offset += sent
            }
        }
    }

    /// Reads until the server closes the connection or `limit` bytes arrived.
    func readAll(limit: Int = 1 << 20) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while data.count < limit {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Sends one request with `Connection: close` and returns the status line and whole answer.
    static func request(port: Int, _ head: String, body: Data = Data()) throws -> (status: Int, text: String) {
        let connection = try RawConnection(port: port)
        try connection.write(Data((head + "\r\n").utf8) + body)
        let text = String(decoding: connection.readAll(), as: UTF8.self)
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, text)
    }
}

/// The `mlkit` binary that `swift build` put beside the test bundle.
enum MLKitBinary {
    /// Runs `mlkit` to completion.
    static func run(_ arguments: [String]) throws -> ChildProcess.Result {
        try ChildProcess.run(ChildProcess.mlkit, arguments)
    }
}

/// A failure of the test harness itself.
struct ServerTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

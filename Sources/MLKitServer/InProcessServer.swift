public import Foundation
import HTTPTypes
import Hummingbird
public import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Not API: the server's request handling run in this process, with no socket. It is public
/// only so that the fuzz harness (a separate package) can reach it; its shape may change at any
/// time.
///
/// Each request goes through the same responder and router as `mlkit serve`, over a data
/// folder of its own (SQLite), or over a shared PostgreSQL database.
public struct _InProcessCollectionServer: Sendable {
    /// The responder `mlkit serve` runs, for tests in this package.
    package let responder: CollectionServerResponder
    private let storage: ServerStorage
    private let logger: Logger

    /// Opens `dataFolder` (created if missing) as `mlkit serve --data` would.
    /// - Parameters:
    ///   - dataFolder: The data folder.
    ///   - maxUploadSize: The upload size limit in bytes.
    ///   - logger: Where the server logs (nowhere by default).
    /// - Throws: ``CollectionServerError`` when the data folder or database cannot be opened.
    public init(dataFolder: URL, maxUploadSize: Int64 = CollectionServer.Configuration.defaultMaxUploadSize,
                logger: Logger = Logger(label: "mlkit.serve", factory: { _ in SwiftLogNoOpLogHandler() })) throws {
        let configuration = CollectionServer.Configuration(dataFolder: dataFolder, port: 0, maxUploadSize: maxUploadSize)
        storage = try ServerStorage.openLocal(dataFolder)
        responder = CollectionServer.responder(storage: storage, configuration: configuration, logger: logger)
        self.logger = logger
    }

    /// Opens the stores as `mlkit serve --data DATAFOLDER --database URL` would; ``close()``
    /// closes the database's connections.
    /// - Parameters:
    ///   - dataFolder: The data folder (this server's cache and unfinished uploads).
    ///   - database: The shared PostgreSQL database.
    ///   - maxUploadSize: The upload size limit in bytes.
    ///   - logger: Where the server logs (nowhere by default).
    /// - Throws: ``CollectionServerError`` when the data folder or database cannot be opened.
    public init(dataFolder: URL, database: URL,
                maxUploadSize: Int64 = CollectionServer.Configuration.defaultMaxUploadSize,
                logger: Logger = Logger(label: "mlkit.serve", factory: { _ in SwiftLogNoOpLogHandler() })) async throws {
        let configuration = CollectionServer.Configuration(dataFolder: dataFolder, port: 0, maxUploadSize: maxUploadSize,
                                                           database: database)
        storage = try await ServerStorage.open(configuration, logger: logger)
        responder = CollectionServer.responder(storage: storage, configuration: configuration, logger: logger)
        self.logger = logger
    }

    /// Closes the shared database's connections, if any.
    public func close() async {
        await storage.close()
    }

    /// One answer: status, headers in order, and the whole body.
    public struct Answer: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields, by name and value, in order.
        public var headers: [(name: String, value: String)]
        /// The body.
        public var body: [UInt8]
    }

    /// Runs one request through the router and collects its answer.
    /// - Parameters:
    ///   - method: The method, such as `GET` (any token HTTP allows).
    ///   - path: The request target: path and query.
    ///   - headers: The header fields; names that are not valid field names are skipped.
    ///   - body: The body, handed over in one piece.
    /// - Returns: The answer; a method that is not a valid token is answered 400 without
    ///   reaching the router.
    public func respond(method: String, path: String, headers: [(name: String, value: String)] = [],
                        body: [UInt8] = []) async -> Answer {
        guard let method = HTTPRequest.Method(method) else {
            return Answer(status: 400, headers: [], body: Array("not a method".utf8))
        }
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        let request = Request(head: HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1", path: path,
                                                headerFields: fields),
                              body: RequestBody(buffer: ByteBuffer(bytes: body)))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: ServerRequestContext(logger: logger))
        } catch {
            return Answer(status: 500, headers: [], body: Array("\(error)".utf8))
        }
        let collector = BodyCollector()
        do {
            try await response.body.write(collector)
        } catch {
            return Answer(status: 500, headers: [], body: Array("the body failed: \(error)".utf8))
        }
        return Answer(status: response.status.code,
                      headers: response.headers.map { (name: $0.name.rawName, value: $0.value) },
                      body: collector.bytes.withLockedValue { $0 })
    }

    /// Gathers a response body's buffers.
    private struct BodyCollector: ResponseBodyWriter {
        let bytes = NIOLockedValueBox<[UInt8]>([])

        mutating func write(_ buffer: ByteBuffer) async throws {
            bytes.withLockedValue { $0 += buffer.readableBytesView }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

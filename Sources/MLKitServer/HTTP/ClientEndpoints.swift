import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// The endpoints devices call: the resolved collection, model downloads and keys.
struct ClientEndpoints {
    let state: ServerState
    let request: Request
    let context: ServerRequestContext

    /// `GET /v1/collections/{id}`: the deployment this device gets, with an ETag.
    func resolve(_ collection: String) async throws -> Response {
        let lookup = try await state.activeDeployments.resolution(of: collection, store: state.store)
        guard let resolution = lookup.resolution else {
            throw CollectionServerError.notFound("no collection '\(collection)'")
        }
        guard let deployment = resolution.resolve(deviceContext()) else {
            throw CollectionServerError.notFound("collection '\(collection)' has no deployment for this device")
        }
        let body = state.resolvedBodies.body(for: deployment)
        var headers: HTTPFields = [.eTag: body.eTag, .cacheControl: "no-cache"]
        if lookup.servedFromCache { headers[DatabaseHeader.name] = DatabaseHeader.unavailable }
        if Self.matches(request.headers[.ifNoneMatch], eTag: body.eTag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body.bytes))
    }

    /// The device context of the request: query parameters first, then headers.
    private func deviceContext() -> DeviceContext {
        var context = DeviceContext()
        for (key, value) in request.uri.queryParameters {
            if let field = DeviceContext.Field(query: key), context[field] == nil { context[field] = String(value) }
        }
        for field in DeviceContext.Field.allCases where context[field] == nil {
            if let value = request.headers[Self.headerNames[field.rawValue]] { context[field] = value }
        }
        return context
    }

    /// The header of each context field, made once.
    private static let headerNames: [HTTPField.Name] = DeviceContext.Field.allCases.map { field in
        guard let name = HTTPField.Name(field.header) else { preconditionFailure("invalid header name \(field.header)") }
        return name
    }

    /// `GET` or `HEAD /v1/models/{sha256}`: the file's bytes, whole or a range.
    func download(_ sha256: String, headOnly: Bool) async throws -> Response {
        let store = state.store
        guard let file = try await state.files.localFile(sha256, record: { try await store.modelFile(sha256) }) else {
            throw CollectionServerError.notFound("no model file \(sha256)")
        }
        let size = file.size
        let eTag = "\"\(sha256)\""
        var headers: HTTPFields = [
            .eTag: eTag, .cacheControl: "public, max-age=31536000, immutable", .acceptRanges: "bytes",
        ]
        if let database = state.database, !database.isAvailable { headers[DatabaseHeader.name] = DatabaseHeader.unavailable }
        if Self.matches(request.headers[.ifNoneMatch], eTag: eTag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/octet-stream"
        let status: HTTPResponse.Status
        let range: ClosedRange<Int64>?
        switch ByteRange(header: request.headers[.range], size: size) {
        case .whole:
            status = .ok
            range = size > 0 ? 0...(size - 1) : nil
        case .partial(let bytes):
            status = .partialContent
            range = bytes
            headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(size)"
        case .unsatisfiable:
            throw RangeNotSatisfiable(size: size)
        }
        let length = range.map { $0.upperBound - $0.lowerBound + 1 } ?? 0
        headers[.contentLength] = String(length)
        guard !headOnly, let range else { return Response(status: status, headers: headers) }
        let body = try await state.fileIO.loadFile(
            path: file.path, range: Int(range.lowerBound)...Int(range.upperBound),
            context: context, chunkLength: 256 * 1024)
        return Response(status: status, headers: headers, body: body)
    }

    /// `GET /v1/keys/{keyID}`: a key, to a read token whose collection uses it.
    func key(_ identifier: String) async throws -> Response {
        let token = try await state.tokens.authorize(request.headers[.authorization], scope: .read, collection: nil)
        guard let key = try await state.store.key(identifier) else {
            throw CollectionServerError.notFound("no key '\(identifier)'")
        }
        guard try await state.store.collectionUsesKey(identifier, collection: token.collection) else {
            throw CollectionServerError(.forbidden, "the token's collection does not use key '\(identifier)'")
        }
        return Responses.body(key.keyFile, status: .ok, headers: [.cacheControl: "no-store"])
    }

    /// Whether an `If-None-Match` header names `eTag` (or is `*`); weak tags compare equal too.
    static func matches(_ header: String?, eTag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingASCIIWhitespace()
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == "*" || tag == eTag
        }
    }
}

/// A range past the end of a file: answered 416 with `Content-Range: bytes */SIZE`.
struct RangeNotSatisfiable: Error {
    let size: Int64
}

/// The encoded body and ETag of each resolved deployment, made once: what a device gets
/// depends only on the deployment (and its activation), not on the device.
final class ResolvedBodyCache: Sendable {
    struct Body: Sendable {
        let bytes: ByteBuffer
        let eTag: String
    }

    private struct Key: Hashable {
        let deploymentID: String
        let activationSequence: Int?
    }

    private let bodies = NIOLockedValueBox<[Key: Body]>([:])
    private let limit: Int

    init(limit: Int = 4096) {
        self.limit = limit
    }

    func body(for deployment: DeploymentRecord) -> Body {
        let key = Key(deploymentID: deployment.deploymentID, activationSequence: deployment.activationSequence)
        if let cached = bodies.withLockedValue({ $0[key] }) { return cached }
        let data = WireFormat.encode(WireFormat.Resolved(deployment))
        let body = Body(bytes: ByteBuffer(bytes: data), eTag: "\"\(Hex.sha256(data))\"")
        bodies.withLockedValue { bodies in
            if bodies.count >= limit { bodies.removeAll() }
            bodies[key] = body
        }
        return body
    }
}

/// Lowercase hex digests.
enum Hex {
    static func string(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var result: [UInt8] = []
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func sha256(_ data: Data) -> String { string(SHA256.hash(data: data)) }
}

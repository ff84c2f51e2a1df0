// The collection server's request handling, run in process through its router with no socket
// (`_InProcessCollectionServer`, the responder `mlkit serve` runs), over a data folder seeded
// with the examples of docs/openapi.yaml: the `sentiment` collection, a model, two deployments
// and a key.
//
// An input is a request in a plain text form: the method and the path on the first line, then
// header lines (`Name: value`) up to an empty line, then the body. `{publish}` and `{read}` in
// a header stand for the harness's two bearer tokens, so that mutations reach the endpoints
// behind them. A path that an HTTP parser would refuse (not starting with `/`, or with bytes
// outside 0x21-0x7E) is skipped: the server never sees one.
//
// What counts as a finding, beyond a crash: a 500 (the data folder sits on a tmpfs when there is
// one, so no storage fault is expected), an error whose body is not `{"error": {"message": ...}}`,
// and a JSON answer that is not JSON.
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import FuzzSupport
import MLKitServer

/// The server over its data folder, and its tokens. The folder starts again, seeded, every
/// ``restartEvery`` requests: the store grows with what the fuzzer creates, and each change
/// reads the collection's deployments, so a store that only grows would slow every run down.
/// libFuzzer calls the harness from one thread, one input at a time.
final class Harness: @unchecked Sendable {
    static let shared = Harness()
    static let restartEvery = 5_000

    private var server: _InProcessCollectionServer
    private var publish = "", read = ""
    private var requests = 0
    private let folder: URL

    private init() {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm")
            : FileManager.default.temporaryDirectory
        // The folders of runs that have ended go first: libFuzzer ends a run with exit().
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        where name.hasPrefix("mlkit-fuzz-server-") {
            if let pid = pid_t(name.dropFirst("mlkit-fuzz-server-".count)), kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(at: base.appendingPathComponent(name))
            }
        }
        folder = base.appendingPathComponent("mlkit-fuzz-server-\(getpid())")
        server = Self.open(folder)
        seed()
    }

    /// A new store in `folder`.
    private static func open(_ folder: URL) -> _InProcessCollectionServer {
        try? FileManager.default.removeItem(at: folder)
        do {
            return try _InProcessCollectionServer(dataFolder: folder)
        } catch {
            fatalError("cannot open the server's data folder \(folder.path): \(error)")
        }
    }

    /// The tokens, then the requests of ``Example/all``.
    private func seed() {
        let folder = self.folder
        let tokens: Result<(String, String), any Error> = blocking {
            do {
                return .success((try await CollectionServer.createToken(dataFolder: folder, scope: .publish, collection: nil),
                                 try await CollectionServer.createToken(dataFolder: folder, scope: .read, collection: nil)))
            } catch {
                return .failure(error)
            }
        }
        do { (publish, read) = try tokens.get() } catch { fatalError("cannot make the tokens: \(error)") }
        for request in Example.all {
            let answer = send(request)
            precondition(answer.status < 300, "the seed request \(request.method) \(request.path) got \(answer.status)")
        }
    }

    /// Runs one request through the router, on a store started again every ``restartEvery``.
    func respond(_ request: Example) -> _InProcessCollectionServer.Answer {
        requests += 1
        if requests % Self.restartEvery == 0 {
            server = Self.open(folder)
            seed()
        }
        return send(request)
    }

    private func send(_ request: Example) -> _InProcessCollectionServer.Answer {
        let headers = request.headers.map { name, value in
            (name: name, value: value.replacingOccurrences(of: "{publish}", with: publish)
                .replacingOccurrences(of: "{read}", with: read))
        }
        let server = self.server
        return blocking { await server.respond(method: request.method, path: request.path, headers: headers, body: request.body) }
    }
}

/// Runs `body` on the concurrency pool and waits for it on this (libFuzzer's) thread.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Box<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        result.set(await body())
        done.signal()
    }
    done.wait()
    return result.get()
}

/// A value handed from the task to the waiting thread; the semaphore orders the two.
final class Box<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?
    func set(_ value: T) { lock.withLock { self.value = value } }
    func get() -> T { lock.withLock { value! } }
}

/// A request in the harness's text form.
struct Example: Sendable {
    var method: String
    var path: String
    var headers: [(String, String)] = []
    var body: [UInt8] = []

    /// Reads the text form; `nil` when there is no first line.
    init?(_ data: [UInt8]) {
        var lines = data.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = lines.first, let space = first.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        method = String(decoding: first[..<space], as: UTF8.self)
        path = String(decoding: first[(space + 1)...], as: UTF8.self)
        var rest = lines.count > 1 ? lines.removeLast() : []
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            let line = rest[..<newline]
            rest = rest[(newline + 1)...]
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            headers.append((String(decoding: line[..<colon], as: UTF8.self),
                            String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)))
        }
        body = Array(rest)
    }

    init(_ method: String, _ path: String, _ headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The text form.
    var text: [UInt8] {
        Array("\(method) \(path)\n".utf8) + headers.flatMap { Array("\($0): \($1)\n".utf8) } + Array("\n".utf8) + body
    }

    /// Whether an HTTP/1.1 parser would pass the path on.
    var hasValidPath: Bool {
        path.hasPrefix("/") && path.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E } && !method.isEmpty
    }

    static let sha = "67343b833d447845ef0fa3ca9efc297d00ef5b5980470b73d513d60cf6c86ea4"
    static let key = "B9BA88F5-476E-45C2-82B9-E7A11DEF56D6"
    static let publish = ("Authorization", "Bearer {publish}")
    static let read = ("Authorization", "Bearer {read}")
    static let model: [UInt8] = {
        let url = Seeds.fixtures.appendingPathComponent("models/v1-headlines-svm.mlkit")
        guard let data = try? Data(contentsOf: url) else { fatalError("no fixture model at \(url.path)") }
        return Array(data)
    }()

    /// The requests that seed the store, in order, then one of every endpoint.
    static let all: [Example] = [
        Example("PUT", "/v1/collections/sentiment", [publish], body: Array(#"{"description":"d","modelIdentifiers":["polarity"]}"#.utf8)),
        Example("POST", "/v1/models", [publish, ("Content-Type", "application/octet-stream")], body: model),
        Example("POST", "/v1/collections/sentiment/deployments", [publish],
                body: Array(#"{"models":{"polarity":{"sha256":"\#(sha)","version":"1"}}}"#.utf8)),
        Example("POST", "/v1/collections/sentiment/deployments", [publish],
                body: Array(#"{"models":{"polarity":{"sha256":"\#(sha)"}},"targeting":{"languageCodes":["en"],"osVersion":">=17,<18"},"rolloutPercentage":25}"#.utf8)),
        Example("PUT", "/v1/collections/sentiment/keys/\(key)", [publish],
                body: Array(#"{"algorithm":"AES-256-GCM","format":"mlkit-key","identifier":"\#(key)","key":"X1onTgE5coAcyNLAgO1yfUzb5aPG+QAVCU6wDuJoSSk=","version":1}"#.utf8)),
    ]

    /// One request of every endpoint, and a few of the answers every path shares.
    static let seeds: [String: Example] = [
        "health": Example("GET", "/healthz"),
        "health-head": Example("HEAD", "/healthz"),
        "list": Example("GET", "/v1/collections", [publish]),
        "resolve": Example("GET", "/v1/collections/sentiment?languageCode=en-GB&osVersion=17.4&installationID=7F2C",
                           [("If-None-Match", "\"x\""), ("X-MLKit-Device-Class", "phone")]),
        "save": all[0], "upload": all[1], "deploy": all[3], "register-key": all[4],
        "history": Example("GET", "/v1/collections/sentiment/deployments", [publish]),
        "activate": Example("POST", "/v1/collections/sentiment/deployments/00000000-0000-0000-0000-000000000000/activate", [publish]),
        "rollback": Example("POST", "/v1/collections/sentiment/rollback", [publish], body: Array(#"{"deploymentID":null}"#.utf8)),
        "download": Example("GET", "/v1/models/\(sha)", [("Range", "bytes=8-99")]),
        "download-head": Example("HEAD", "/v1/models/\(sha)", [("If-None-Match", "\"\(sha)\"")]),
        "key": Example("GET", "/v1/keys/\(key)", [read]),
        "not-allowed": Example("DELETE", "/v1/collections/sentiment"),
        "escaped": Example("GET", "/v1/%63ollections/sentiment%2Fx"),
    ]
}

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked { Example.seeds.mapValues { Data($0.text) } }
    _ = Harness.shared
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard let request = Example(Array(UnsafeRawBufferPointer(start: start, count: count))), request.hasValidPath else { return 0 }
    let answer = Harness.shared.respond(request)
    precondition(answer.status >= 200 && answer.status < 600 && answer.status != 500,
                 "\(request.method) \(request.path) was answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
    let isJSON = answer.headers.contains { $0.name.lowercased() == "content-type" && $0.value == "application/json" }
    guard isJSON, !answer.body.isEmpty else { return 0 }
    let json = try? JSONSerialization.jsonObject(with: Data(answer.body))
    precondition(json != nil, "\(request.method) \(request.path): a JSON answer that is not JSON")
    if answer.status >= 400 {
        let message = ((json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
        precondition(message?.isEmpty == false, "\(request.method) \(request.path): an error without a message")
    }
    return 0
}

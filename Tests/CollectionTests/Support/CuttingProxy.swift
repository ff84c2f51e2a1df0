import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 in front of a test server. It records what clients send and what
/// the server answers, and can cut a connection after a number of response bytes, as a broken
/// network would, or stop passing them on while keeping the connection open, as a stalled one
/// would.
final class CuttingProxy: @unchecked Sendable {
    private let upstreamPort: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var cutAfter: Int?
    private var stallAfter: Int?
    private var requestLog = ""
    private var responseLog = ""
    private var responseBytes = 0
    private var open: Set<Int32> = []
    private var closed = false

    /// The port clients connect to.
    let port: Int

    /// The proxy's URL, to give clients instead of the server's.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts a proxy that forwards to 127.0.0.1:`upstreamPort`.
    init(upstreamPort: Int) throws {
        self.upstreamPort = UInt16(upstreamPort)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listener, socketAddress, length) == 0 && listen(listener, 64) == 0
                    && getsockname(listener, socketAddress, &length) == 0
            }
        }
        guard listening else {
            Glibc.close(listener)
            throw TestFailure("the proxy cannot listen")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Cuts each new connection once the server has sent `bytes` bytes on it, until `nil`.
    func cutConnections(afterResponseBytes bytes: Int?) {
        lock.withLock { cutAfter = bytes }
    }

    /// Stops passing on the responses of every connection, open or new, once `bytes` bytes
    /// have gone on it, keeping it open until the proxy closes; `nil` ends the stall for what
    /// has not stalled yet.
    func stallConnections(afterResponseBytes bytes: Int?) {
        lock.withLock { stallAfter = bytes }
    }

    /// Everything clients sent (request lines, headers and bodies).
    var requests: String { lock.withLock { requestLog } }

    /// Everything the server answered, as text (bodies are mostly binary).
    var responses: String { lock.withLock { responseLog } }

    /// The number of response bytes forwarded so far.
    var forwardedResponseBytes: Int { lock.withLock { responseBytes } }

    /// Forgets what was recorded.
    func clearLog() {
        lock.withLock {
            requestLog = ""
            responseLog = ""
            responseBytes = 0
        }
    }

    /// Stops accepting and ends every connection. It can be called more than once.
    ///
    /// Descriptors are only shut down here, never closed: the thread that uses a descriptor
    /// closes it when it is done, so no thread can read, accept on or close a number that the
    /// kernel has since given to another test's pipe or socket (all test targets share one
    /// process).
    func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            shutdown(listener, Int32(SHUT_RDWR))
            for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    deinit { close() }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR || errno == ECONNABORTED, !lock.withLock({ closed }) { continue }
                Glibc.close(listener)
                return
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            // Registered under the lock, so that close() shuts them down too once it has run.
            let limit: Int?? = lock.withLock {
                guard connected, !closed else { return nil }
                open.formUnion([client, upstream])
                return .some(cutAfter)
            }
            guard let limit else {
                Glibc.close(client)
                Glibc.close(upstream)
                continue
            }
            let done = DispatchGroup()
            done.enter()
            done.enter()
            Thread.detachNewThread { [self] in
                pump(from: client, to: upstream, limit: nil, isResponse: false)
                done.leave()
            }
            Thread.detachNewThread { [self] in
                pump(from: upstream, to: client, limit: limit, isResponse: true)
                done.leave()
            }
            Thread.detachNewThread { [self] in
                done.wait()
                // Unregistered under the lock before closing: close() never shuts down a reused number.
                lock.withLock { open.subtract([client, upstream]) }
                Glibc.close(client)
                Glibc.close(upstream)
            }
        }
    }

    /// Copies bytes from one socket to the other until either side closes or `limit` is reached,
    /// then shuts both down. A response stalls as ``stallConnections(afterResponseBytes:)``
    /// says: nothing more is forwarded, and the pump waits for the proxy to close.
    private func pump(from source: Int32, to target: Int32, limit: Int?, isResponse: Bool) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var forwarded = 0
        loop: while true {
            var count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            if let limit { count = min(count, limit - forwarded) }
            let stall = isResponse ? lock.withLock { stallAfter } : nil
            if let stall { count = max(0, min(count, stall - forwarded)) }
            let chunk = Array(buffer[0..<count])
            lock.withLock {
                if isResponse {
                    responseLog += String(decoding: chunk, as: UTF8.self)
                    responseBytes += count
                } else {
                    requestLog += String(decoding: chunk, as: UTF8.self)
                }
            }
            var sent = 0
            while sent < count {
                let wrote = chunk.withUnsafeBytes { send(target, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                guard wrote > 0 else { break loop }
                sent += wrote
            }
            forwarded += count
            if let limit, forwarded >= limit { break }
            if let stall, forwarded >= stall {
                while !lock.withLock({ closed }) { Thread.sleep(forTimeInterval: 0.05) }
                break
            }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(target, Int32(SHUT_RDWR))
    }
}

extension sockaddr_in {
    /// 127.0.0.1 at `port`.
    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

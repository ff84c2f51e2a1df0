public import Foundation
public import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// nginx from Debian's packages in front of replicas of `mlkit serve`, on 127.0.0.1, with the
/// configuration `docs/deploying.md` gives (`deploy/nginx/mlkit.conf`), its addresses replaced
/// by the test's own. Its files (configuration, pid, logs) live in a temporary folder.
public final class Balancer: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`.
    public let url: URL
    private let folder: URL
    private let process: Process

    /// The committed configuration that the balancer runs.
    public static let configuration = ChildProcess.repositoryRoot.appendingPathComponent("deploy/nginx/mlkit.conf")

    /// nginx: `$MLKIT_NGINX`, else `/usr/sbin/nginx`.
    public static let binary = URL(fileURLWithPath: ProcessInfo.processInfo.environment["MLKIT_NGINX"] ?? "/usr/sbin/nginx")

    /// Starts nginx in front of `replicas` (their ports on 127.0.0.1) and waits until it accepts
    /// connections.
    public init(replicaPorts: [Int]) throws {
        folder = try ChildProcess.temporaryFolder("nginx")
        let port = try Self.freePort()
        url = URL(string: "http://127.0.0.1:\(port)")!
        let site = try Self.site(replicaPorts: replicaPorts, port: port)
        try site.write(to: folder.appendingPathComponent("mlkit.conf"), atomically: true, encoding: .utf8)
        let main = """
            \(getuid() == 0 ? "user nobody nogroup;" : "")
            worker_processes 1;
            daemon off;
            pid \(folder.path)/nginx.pid;
            error_log \(folder.path)/error.log info;
            events { worker_connections 4096; }
            http {
                access_log \(folder.path)/access.log;
                client_body_temp_path \(folder.path)/body;
                proxy_temp_path \(folder.path)/proxy;
                fastcgi_temp_path \(folder.path)/fastcgi;
                uwsgi_temp_path \(folder.path)/uwsgi;
                scgi_temp_path \(folder.path)/scgi;
                include \(folder.path)/mlkit.conf;
            }
            """
        try main.write(to: folder.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = Self.binary
        process.arguments = ["-p", folder.path, "-c", folder.appendingPathComponent("nginx.conf").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: Self.emptyFile(folder.appendingPathComponent("stderr")))
        process.standardInput = FileHandle.nullDevice
        try process.startAlone()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if Self.accepts(port: port) { return }
            if !process.isRunning { break }
            usleep(20_000)
        }
        let log = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOf: folder.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
        try? process.terminate(within: 10)
        throw ServerProcessError("nginx did not start: \(errors) \(log)")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Stops nginx (SIGTERM) and waits for it.
    public func stop() {
        if process.isRunning { try? process.terminate(within: 30) }
    }

    /// nginx's error log.
    public var errorLog: String {
        (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    /// The committed site configuration with the test's addresses: its `listen` line gets
    /// `port`, and its upstream's `server` lines are replaced by one line per replica, with the
    /// same parameters.
    static func site(replicaPorts: [Int], port: Int) throws -> String {
        let text = try String(contentsOf: configuration, encoding: .utf8)
        var lines: [String] = []
        var replaced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("listen ") {
                lines.append("    listen 127.0.0.1:\(port);")
            } else if trimmed.hasPrefix("server 127.0.0.1:") {
                guard !replaced else { continue }
                replaced = true
                let parameters = trimmed.split(separator: " ").dropFirst(2).joined(separator: " ")
                for replica in replicaPorts {
                    lines.append("    server 127.0.0.1:\(replica) \(parameters)")
                }
            } else {
                lines.append(String(line))
            }
        }
        guard replaced else { throw ServerProcessError("\(configuration.path) has no upstream server lines") }
        return lines.joined(separator: "\n")
    }

    /// A port on 127.0.0.1 that was free a moment ago.
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ServerProcessError("socket: \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw ServerProcessError("bind: \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func emptyFile(_ url: URL) -> URL {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        return url
    }

    /// Whether nginx is installed, or CI requires it (then a missing nginx fails the tests
    /// instead of skipping them).
    public static var isAvailable: Bool {
        ProcessInfo.processInfo.environment["MLKIT_REQUIRE_POSTGRES"] == "1"
            || FileManager.default.isExecutableFile(atPath: binary.path)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where nginx is installed (`.ci/run` installs it), and otherwise
    /// skips it, saying how to install it.
    public static var needsNginx: Self {
        .enabled(if: Balancer.isAvailable, "needs nginx, which is not installed: apt-get install -y nginx")
    }
}

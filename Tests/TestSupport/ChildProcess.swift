public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Child processes for the end-to-end tests: the built `mlkit` binary, servers and tools.
///
/// Every wait has a deadline. A child that outlives it is killed, and the wait throws
/// ``ChildProcess/Timeout`` naming the command, so a hang fails one test with a message instead
/// of stalling the whole run. Nothing here uses `Process.waitUntilExit()`: it spins the run loop
/// of the calling thread, which is known to hang on some Linux machines, and it blocks forever.
public enum ChildProcess {
    /// What a run printed and how it ended.
    public struct Result: Sendable {
        /// The exit status (or the signal that ended it).
        public let status: Int32
        /// Standard output, decoded as UTF-8.
        public let stdout: String
        /// Standard error, decoded as UTF-8.
        public let stderr: String
    }

    /// A child that did not exit in time; it has been killed.
    public struct Timeout: Error, CustomStringConvertible {
        /// The command line and the deadline.
        public let description: String
    }

    /// How long a run may take before it is killed, unless the caller says otherwise.
    public static let defaultDeadline: Double = 300

    /// The built `mlkit` executable: beside the test bundle on Linux
    /// (`.build/debug/mlkitPackageTests.xctest`), beside the `.xctest` folder on Apple systems.
    public static let mlkit: URL = {
        let folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                       Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        let candidates = folders.map { $0.appendingPathComponent("mlkit") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    /// The repository's root folder.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A new folder `mlkit-PURPOSE-UUID` in the temporary directory; the caller removes it.
    public static func temporaryFolder(_ purpose: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-\(purpose)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Runs `executable` to completion. Standard output and error go to temporary files and
    /// standard input comes from one, so no pipe can fill up and block the child.
    /// - Parameters:
    ///   - executable: The program.
    ///   - arguments: Its arguments.
    ///   - input: Its standard input (empty when `nil`).
    ///   - environment: Variables added to this process's environment.
    ///   - directory: Its working directory (this process's when `nil`).
    ///   - deadline: Seconds before it is killed and ``Timeout`` is thrown.
    public static func run(_ executable: URL, _ arguments: [String], input: Data? = nil,
                           environment: [String: String] = [:], directory: URL? = nil,
                           deadline: Double = defaultDeadline) throws -> Result {
        let folder = try temporaryFolder("run")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stdin = folder.appendingPathComponent("stdin")
        let stdout = folder.appendingPathComponent("stdout")
        let stderr = folder.appendingPathComponent("stderr")
        try (input ?? Data()).write(to: stdin)
        try Data().write(to: stdout)
        try Data().write(to: stderr)

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        let handles = try (FileHandle(forReadingFrom: stdin), FileHandle(forWritingTo: stdout),
                           FileHandle(forWritingTo: stderr))
        defer {
            try? handles.0.close()
            try? handles.1.close()
            try? handles.2.close()
        }
        process.standardInput = handles.0
        process.standardOutput = handles.1
        process.standardError = handles.2
        try process.startAlone()
        try process.waitForExit(within: deadline)
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: try Data(contentsOf: stdout), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: stderr), as: UTF8.self))
    }
}

extension Process {
    private static let startLock = NSLock()

    /// Starts the process while no other test starts one: `run()` under one lock.
    ///
    /// Foundation's `run()` learns of the child's exit through a socket pair that it makes
    /// without close-on-exec, one end of which the child holds. A child that another thread
    /// starts at the same moment can inherit that end too, and the first child's exit is then
    /// not seen until the second one exits: for a server or a database that outlives the test,
    /// not before the test gives up.
    public func startAlone() throws {
        Self.startLock.lock()
        defer { Self.startLock.unlock() }
        try run()
    }

    /// Waits until the process has exited, polling without a run loop. Past `seconds`, kills
    /// it with SIGKILL, waits for that, and throws.
    /// - Throws: ``ChildProcess/Timeout`` naming the command when it had to be killed.
    public func waitForExit(within seconds: Double = ChildProcess.defaultDeadline) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            guard Date() < deadline else { try killAfter(seconds) }
            usleep(1_000)
        }
    }

    /// Like ``waitForExit(within:)``, but the calling task sleeps between checks instead of
    /// blocking its thread.
    public func waitForExit(within seconds: Double = ChildProcess.defaultDeadline) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            guard Date() < deadline else { try killAfter(seconds) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Kills the process with SIGKILL, waits for it, and throws ``ChildProcess/Timeout``.
    private func killAfter(_ seconds: Double) throws -> Never {
        kill(processIdentifier, SIGKILL)
        while isRunning { usleep(1_000) }
        let command = ([executableURL?.path ?? "?"] + (arguments ?? [])).joined(separator: " ")
        throw ChildProcess.Timeout(description: "\(command): still running after \(seconds) s, killed")
    }

    /// Asks the process to stop with SIGTERM and waits for it; past `seconds`, kills it.
    /// - Throws: ``ChildProcess/Timeout`` when SIGTERM was not enough.
    public func terminate(within seconds: Double) throws {
        if isRunning { terminate() }
        try waitForExit(within: seconds)
    }
}

import Foundation
import TestSupport
import Testing

@Suite("The mlkit process", .timeLimit(.minutes(5)))
struct ProcessTests {
    #if os(Linux)
    /// OpenBLAS starts a worker thread per extra core when it loads, and the worker spins for
    /// about 0.1 s before it sleeps; `BLASThreads.useCallingThreadOnly()` stops them. A worker
    /// inherits the process's name, which the runtime's and the server's own threads do not
    /// keep, so once `mlkit serve` listens, only its main thread is called `mlkit`.
    @Test("The command stops OpenBLAS's worker threads: none is left beside the main thread")
    func noBLASWorkerThreads() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("stdout")
        try Data().write(to: output)
        let outputHandle = try FileHandle(forWritingTo: output)
        defer { try? outputHandle.close() }
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["serve", "--data", folder.appendingPathComponent("data").path,
                             "--host", "127.0.0.1", "--port", "0"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outputHandle
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { try? process.terminate(within: 30) }

        let printed = CLI.lines(of: output, count: 1)
        #expect(printed?.first?.hasPrefix("listening on http://127.0.0.1:") == true, "\(printed ?? [])")

        let pid = process.processIdentifier
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        let named = try tasks.filter { task in
            let name = try String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
            return name == "mlkit\n" && task != String(pid)
        }
        #expect(tasks.count > 1, "the server runs threads of its own")
        #expect(named.isEmpty, "threads \(named) of \(tasks.count) are named mlkit beside the main thread \(pid)")
    }
    #endif
}

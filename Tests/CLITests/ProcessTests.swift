import Foundation
import TestSupport
import Testing

@Suite("The mlkit process", .timeLimit(.minutes(5)), .onOwnThreads)
struct ProcessTests {
    #if os(Linux)
    /// OpenBLAS starts a worker thread per extra core when it loads, and the worker spins for
    /// about 0.1 s before it sleeps; `BLASThreads.useCallingThreadOnly()` stops them. A worker
    /// inherits the process's name, which the runtime's and the server's own threads do not
    /// keep, so once `mlkit serve` listens, only its main thread is called `mlkit`.
    @Test("The command stops OpenBLAS's worker threads: none is left beside the main thread",
          .disabled(if: dlsym(nil, "__tsan_init") != nil,
                    "under ThreadSanitizer the binary runs the sanitizer's own thread, named after the process"))
    func noBLASWorkerThreads() throws {
        let data = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: data) }
        let running = try RunningCLI(["serve", "--data", data.path, "--host", "127.0.0.1", "--port", "0"])
        defer { running.stop() }
        let printed = running.lines(1)
        #expect(printed?.first?.hasPrefix("listening on http://127.0.0.1:") == true, "\(printed ?? [])")

        let pid = running.process.processIdentifier
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

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process settings the `mlkit` command makes before it works, made the same way here so
/// that the probe measures what the command runs. MLKit keeps its own (`BLASThreads`,
/// `FreedMemory`) inside its package, so the probe calls the C libraries itself.
enum ProcessSettings {
    /// Runs every later OpenBLAS call on its calling thread and stops OpenBLAS's idle worker
    /// threads, as `BLASThreads.useCallingThreadOnly()` does for the `mlkit` command. Both
    /// functions are looked up in the process (OpenBLAS is linked into it), so that an OpenBLAS
    /// without threads, or Accelerate, simply leaves this a no-op.
    static func useCallingThreadOnlyForBLAS() {
        #if os(Linux)
        guard let process = dlopen(nil, RTLD_NOW) else { return }
        if let setThreads = dlsym(process, "openblas_set_num_threads") {
            unsafeBitCast(setThreads, to: (@convention(c) (Int32) -> Void).self)(1)
        }
        if let shutdown = dlsym(process, "blas_thread_shutdown_") {
            _ = unsafeBitCast(shutdown, to: (@convention(c) () -> Int32).self)()
        }
        #endif
    }

    /// Keeps freed blocks of up to 1 GiB in the process for the next allocations, as
    /// `FreedMemory.keepForReuse()` does for `mlkit train` (glibc only). `mallopt` and its
    /// parameters are in `<malloc.h>`, which the Glibc module leaves out, so the function is
    /// looked up and the parameters are glibc's values.
    static func keepFreedMemoryForReuse() {
        #if os(Linux)
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        let trimThreshold: Int32 = -1, topPad: Int32 = -2, mmapThreshold: Int32 = -3
        _ = mallopt(mmapThreshold, 1 << 30)
        _ = mallopt(topPad, 64 << 20)
        _ = mallopt(trimThreshold, 1 << 30)
        #endif
    }
}

/// The repository's root folder, where `trained/` and `datasets/out/` are: this file is
/// `Benchmarks/Sources/MLKitProbe/ProcessSettings.swift`.
let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

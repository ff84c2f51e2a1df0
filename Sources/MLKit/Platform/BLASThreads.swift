#if !canImport(Accelerate)
internal import CBLAS
#endif

/// The worker threads of the BLAS library, which mlkit does not need: its parallel work runs
/// on threads of its own, and it calls BLAS from them. A process setting for the `mlkit`
/// command, not API.
package enum BLASThreads {
    /// Runs every later BLAS call on the thread that makes it, and stops the BLAS library's
    /// worker threads.
    ///
    /// OpenBLAS starts one worker thread per extra core when it loads, and splits a large
    /// product among them. mlkit calls BLAS from worker threads of its own, so those would put
    /// more threads than cores on the machine. The `mlkit` command calls this first.
    ///
    /// It changes a setting of the whole process, so call it once, when the process starts, and
    /// only if nothing else in the process uses BLAS threads. It does nothing with Accelerate.
    package static func useCallingThreadOnly() {
        #if !canImport(Accelerate)
        mlkit_blas_use_calling_thread_only()
        #endif
    }
}

#if !canImport(Accelerate)
internal import CBLAS
#endif

/// How the C allocator treats the large blocks that training allocates and frees: weight
/// matrices, dual variables and feature matrices of tens of megabytes, one set per candidate.
public enum FreedMemory {
    /// Keeps freed memory in the process for the next allocations, instead of returning it to
    /// the system at once. Returns whether the allocator took the settings (glibc only).
    ///
    /// By default glibc maps each block above 32 MiB afresh and unmaps it when it is freed, and
    /// returns freed memory at the top of its heap beyond 128 KiB, so every candidate's arrays
    /// page-fault over all their pages again. With this, its heaps serve blocks of up to 1 GiB
    /// and keep up to 1 GiB of freed memory. With it, `mlkit train` on fortunes-topic spent
    /// 0.20 s of system time instead of 0.35 s.
    ///
    /// Only the main thread's heap can hold such blocks: glibc gives other threads arenas of
    /// their own, whose heaps hold at most 64 MiB, so a larger block allocated there is still
    /// mapped afresh. `mlkit train` therefore calls this first and trains on the main thread
    /// (180k page faults on wordnet-hypernyms instead of 400k).
    ///
    /// It changes settings of the whole process and keeps freed memory resident, so call it in a
    /// process that trains, not in a long-running service that only predicts. It does nothing
    /// on Apple's systems.
    @discardableResult
    public static func keepForReuse() -> Bool {
        #if !canImport(Accelerate)
        return mlkit_reuse_freed_memory() == 1
        #else
        return false
        #endif
    }
}

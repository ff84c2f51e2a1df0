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
    /// returns most freed memory at the top of its heaps, so every candidate's arrays page-fault
    /// over all their pages again. With this, `mlkit train` on fortunes-topic spent 0.20 s of
    /// system time instead of 0.35 s, and its wall time was 0.85× (debian-sections 0.87×), while
    /// peak memory grew from 296 to 310 MB (debian-sections 473 to 545 MB; `docs/benchmarks.md`,
    /// session 11). `mlkit train` calls it first.
    ///
    /// It changes a setting of the whole process and keeps up to 64 MiB of freed memory
    /// resident, so call it in a process that trains, not in a long-running service that only
    /// predicts. It does nothing on Apple's systems.
    @discardableResult
    public static func keepForReuse() -> Bool {
        #if !canImport(Accelerate)
        return mlkit_reuse_freed_memory() == 1
        #else
        return false
        #endif
    }
}

internal import CPlatform

/// How the C allocator treats the large blocks that training allocates and frees: weight
/// matrices, dual variables and feature matrices of tens of megabytes, one set per candidate.
/// A process setting for the `mlkit` command, not API.
package enum FreedMemory {
    /// Keeps freed memory in the process for the next allocations, instead of returning it to
    /// the system at once. Returns whether the allocator took the settings (glibc only).
    ///
    /// By default glibc maps each block above 32 MiB afresh and unmaps it when it is freed, and
    /// returns freed memory at the top of its heap beyond 128 KiB, so every candidate's arrays
    /// page-fault over all their pages again. With this, its heaps serve blocks of up to 1 GiB
    /// and keep up to 1 GiB of freed memory.
    ///
    /// Only the main thread's heap can hold such blocks: glibc gives other threads arenas of
    /// their own, whose heaps hold at most 64 MiB, so a larger block allocated there is still
    /// mapped afresh. `mlkit train` therefore calls this first and trains on the main thread.
    /// Measured on wordnet-hypernyms, `mlkit train` took 112k page faults instead of 314k, and
    /// without both this and the main thread it took 1.18× the wall time (median of 11
    /// alternating rounds, 2-core AMD EPYC VM under load, 2026-11-26); on a pool thread with
    /// this setting, 279k page faults.
    ///
    /// It changes settings of the whole process and keeps freed memory resident, so call it in a
    /// process that trains, not in a long-running service that only predicts. It does nothing
    /// with other C libraries.
    @discardableResult
    package static func keepForReuse() -> Bool {
        mlkit_reuse_freed_memory() == 1
    }
}

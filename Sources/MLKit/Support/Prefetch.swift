#if !canImport(Accelerate)
internal import CBLAS
#endif

/// Asks the processor to bring the cache line holding `address` into the cache, for a read
/// soon after. Issuing the fetches of many independent loads first lets their misses overlap
/// instead of arriving one after another. A hint: it changes no result, and it is a no-op on
/// Apple platforms, where the C shim that provides it is not built.
@inline(__always)
func prefetchForReading(_ address: UnsafeRawPointer) {
    #if !canImport(Accelerate)
    mlkit_prefetch(address)
    #endif
}

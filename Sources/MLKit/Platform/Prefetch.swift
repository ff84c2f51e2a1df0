internal import CPlatform

/// Asks the processor to bring the cache line holding `address` into the cache, for a read
/// soon after. Issuing the fetches of many independent loads first lets their misses overlap
/// instead of arriving one after another. A hint: it changes no result.
@inline(__always)
func prefetchForReading(_ address: UnsafeRawPointer) {
    mlkit_prefetch(address)
}

/// Fibonacci hashing of a feature index into a table of `2^bits` slots: the top `bits` bits of
/// `key · 0x9E3779B1 mod 2^32` (⌊2^32 / φ⌋), which spread nearby indices over the table. The
/// home slot of the small open-addressing tables keyed by feature index, and, with the 64-bit
/// constant ⌊2^64 / φ⌋, of vocabulary learning's counting table keyed by feature hash.
enum FibonacciHashing {
    /// The home slot of `key` in a table of `2^bits` slots, `1 ≤ bits ≤ 32`.
    @inline(__always)
    static func slot(of key: Int32, bits: Int) -> Int {
        Int((UInt32(bitPattern: key) &* 0x9E37_79B1) >> UInt32(32 - bits))
    }

    /// The home slot of a 64-bit `key` in a table of `2^bits` slots, `1 ≤ bits ≤ 63`: the top
    /// `bits` bits of `key · 0x9E3779B97F4A7C15 mod 2^64`.
    @inline(__always)
    static func slot(of key: UInt64, bits: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }
}

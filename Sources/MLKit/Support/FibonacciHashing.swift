/// Fibonacci hashing of a feature index into a table of `2^bits` slots: the top `bits` bits of
/// `key · 0x9E3779B1 mod 2^32` (⌊2^32 / φ⌋), which spread nearby indices over the table. The
/// home slot of the small open-addressing tables keyed by feature index.
enum FibonacciHashing {
    /// The home slot of `key` in a table of `2^bits` slots, `1 ≤ bits ≤ 32`.
    @inline(__always)
    static func slot(of key: Int32, bits: Int) -> Int {
        Int((UInt32(bitPattern: key) &* 0x9E37_79B1) >> UInt32(32 - bits))
    }
}

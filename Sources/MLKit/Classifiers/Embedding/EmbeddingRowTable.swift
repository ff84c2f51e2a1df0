/// Finds the embedding row of a feature: an open-addressing hash table from feature index
/// (hashed bucket or vocabulary index) to row, built from the model's sorted feature list.
///
/// The table is derived data: a model file stores only the sorted feature indices, and the
/// table is rebuilt when the model is loaded. Its capacity is the power of two `2^k ≥ 2n`
/// for n features (load factor ≤ 1/2), so it costs 16n to 32n bytes beside the 4·d·n bytes
/// of the embeddings. The slot of key `f` is Fibonacci hashing, `(f · 0x9E3779B1 mod 2^32) >> (32 − k)`,
/// then linear probing; each slot packs `row << 32 | f` into one `UInt64`, so a lookup
/// usually touches one cache line. A binary search over the sorted list would need
/// `log2 n` dependent loads instead (17 for 100,000 features).
struct EmbeddingRowTable: Sendable, Equatable {
    /// The packed slots; ``empty`` marks a free one.
    private let slots: [UInt64]
    /// `k`, with `slots.count == 2^k`.
    private let bits: Int

    /// The value of a free slot (no feature index is `0xFFFF_FFFF`, since indices are `Int32 ≥ 0`).
    private static let empty = UInt64.max

    /// Builds the table for `features`: row `r` belongs to `features[r]`.
    /// - Precondition: the features are distinct and non-negative.
    init(features: [Int32]) {
        var bits = 1
        while (1 << bits) < 2 * features.count { bits += 1 }
        let mask = (1 << bits) - 1
        var slots = [UInt64](repeating: Self.empty, count: 1 << bits)
        for (row, feature) in features.enumerated() {
            precondition(feature >= 0, "feature indices are non-negative")
            var slot = FibonacciHashing.slot(of: feature, bits: bits)
            while slots[slot] != Self.empty {
                precondition(UInt32(truncatingIfNeeded: slots[slot]) != UInt32(feature), "features are distinct")
                slot = (slot + 1) & mask
            }
            slots[slot] = UInt64(row) << 32 | UInt64(UInt32(feature))
        }
        self.slots = slots
        self.bits = bits
    }

    /// Calls `body` with a lookup function that gives the row of a feature, or −1 for a
    /// feature the model does not have. The function is valid only inside `body`.
    @inline(__always)
    func withLookup<R>(_ body: ((Int32) -> Int32) throws -> R) rethrows -> R {
        try slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            let bits = self.bits
            return try body { feature in
                var slot = FibonacciHashing.slot(of: feature, bits: bits)
                while true {
                    let packed = slots[slot]
                    if packed == Self.empty { return -1 }
                    if UInt32(truncatingIfNeeded: packed) == UInt32(bitPattern: feature) {
                        return Int32(truncatingIfNeeded: packed >> 32)
                    }
                    slot = (slot + 1) & mask
                }
            }
        }
    }

    /// The row of `feature`, or `nil` if the model has no row for it.
    func row(of feature: Int32) -> Int? {
        let row = withLookup { $0(feature) }
        return row < 0 ? nil : Int(row)
    }

    /// The table's size in bytes.
    var byteCount: Int { slots.count * MemoryLayout<UInt64>.stride }
}

/// Numbers attribute hashes in the order they are first seen: an open-addressing table from a
/// 64-bit hash to its index, at most half full, that grows as it fills.
///
/// The first-seen order depends only on the order of the sentences, so the indices, and the
/// model file, are the same for any thread count that hashed them.
struct AttributeIndexer {
    /// The hashes, by index.
    private(set) var hashes: [UInt64] = []
    /// For each slot, the index + 1, or 0 when empty.
    private var slots = [Int32](repeating: 0, count: 1 << 16)
    /// log₂ of the slot count.
    private var bits = 16

    /// The index of `hash`, numbering it if it is new.
    @inline(__always)
    mutating func index(inserting hash: UInt64) -> Int32 {
        let mask = slots.count - 1
        var slot = FibonacciHashing.slot(of: hash, bits: bits)
        while true {
            let found = slots[slot]
            if found == 0 { break }
            if hashes[Int(found) - 1] == hash { return found - 1 }
            slot = (slot + 1) & mask
        }
        hashes.append(hash)
        slots[slot] = Int32(hashes.count)
        if hashes.count * 2 > slots.count { grow() }
        return Int32(hashes.count - 1)
    }

    /// The index of `hash`, or −1 when it was never numbered.
    @inline(__always)
    func index(of hash: UInt64) -> Int32 {
        let mask = slots.count - 1
        var slot = FibonacciHashing.slot(of: hash, bits: bits)
        while true {
            let found = slots[slot]
            if found == 0 { return -1 }
            if hashes[Int(found) - 1] == hash { return found - 1 }
            slot = (slot + 1) & mask
        }
    }

    private mutating func grow() {
        bits += 1
        slots = [Int32](repeating: 0, count: 1 << bits)
        let mask = slots.count - 1
        for (index, hash) in hashes.enumerated() {
            var slot = FibonacciHashing.slot(of: hash, bits: bits)
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index + 1)
        }
    }
}

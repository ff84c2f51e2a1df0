/// A learned vocabulary: the feature keys kept after pruning, and an open-addressing table
/// from a key's hash to its index.
///
/// Lookups go by the 64-bit ``FeatureHash`` of the key, so the prediction path never builds
/// a string. Two keys with the same 64-bit hash would share an index; with FNV-1a over a
/// vocabulary of a million keys the chance of any such pair is about 3 in 100 million.
///
/// A final class, because it is immutable and shared: featurizers and the closures of the
/// prediction path hold it with one reference count.
final class Vocabulary: Sendable {
    /// The keys, by index (`love`, `do not`, `#<lo`); `nil` for a vocabulary fitted only to
    /// compare candidates, which never goes into a model file.
    let terms: [String]?
    /// The hash of each key, by index.
    let hashes: [UInt64]
    /// Open-addressing slots, a power of two of them, at most half full. A slot holds a key's
    /// hash beside its index, so that a lookup reads one cache line per probe.
    private let slots: [Slot]

    /// One slot of the table.
    fileprivate struct Slot {
        /// The key's hash.
        var hash: UInt64 = 0
        /// The key's index + 1, or 0 when the slot is empty.
        var entry: Int32 = 0
    }

    /// Creates a vocabulary from keys and their hashes, in index order.
    init(terms: [String]?, hashes: [UInt64]) {
        precondition(terms == nil || terms!.count == hashes.count)
        self.terms = terms
        self.hashes = hashes
        var capacity = 16
        while capacity < hashes.count * 2 { capacity *= 2 }
        var slots = [Slot](repeating: Slot(), count: capacity)
        let mask = capacity - 1
        for (index, hash) in hashes.enumerated() {
            var slot = Self.home(of: hash, mask: mask)
            while slots[slot].entry != 0 { slot = (slot + 1) & mask }
            slots[slot] = Slot(hash: hash, entry: Int32(index + 1))
        }
        self.slots = slots
    }

    /// Creates a vocabulary from keys, hashing each.
    convenience init(terms: [String]) {
        self.init(terms: terms, hashes: terms.map(FeatureHash.of))
    }

    /// The number of keys.
    var count: Int { hashes.count }

    /// The slot where the probe for `hash` starts; the table's building, lookups and prefetches
    /// must agree on it.
    @inline(__always)
    fileprivate static func home(of hash: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
    }

    /// The index of the key with this hash, or `nil`.
    /// - Complexity: O(1) expected.
    func index(ofHash hash: UInt64) -> Int? {
        withLookup { $0.index(ofHash: hash) }
    }

    /// Calls `body` with a view of the table for many lookups: no reference counting and no
    /// bounds checks inside the loop that featurizes a text.
    @inline(__always)
    func withLookup<R>(_ body: (Lookup) -> R) -> R {
        slots.withUnsafeBufferPointer { body(Lookup(slots: $0.baseAddress!, mask: $0.count - 1)) }
    }

    /// The table, valid only inside ``withLookup(_:)``.
    struct Lookup {
        fileprivate let slots: UnsafePointer<Slot>
        fileprivate let mask: Int

        /// Starts fetching the slot where the lookup of `hash` begins: the lookups of a text's
        /// features are independent, and prefetching all their slots first overlaps their
        /// cache misses in a table larger than the cache.
        @inline(__always)
        func prefetch(hash: UInt64) {
            prefetchForReading(slots + Vocabulary.home(of: hash, mask: mask))
        }

        /// The index of the key with this hash, or `nil`.
        @inline(__always)
        func index(ofHash hash: UInt64) -> Int? {
            var slot = Vocabulary.home(of: hash, mask: mask)
            while true {
                let found = slots[slot]
                if found.entry == 0 { return nil }
                if found.hash == hash { return Int(found.entry) - 1 }
                slot = (slot + 1) & mask
            }
        }
    }
}

/// A learned vocabulary: the feature keys kept after pruning, and an open-addressing table
/// from a key's hash to its index.
///
/// Lookups go by the 64-bit ``FeatureHash`` of the key, so the prediction path never builds
/// a string. Two keys with the same 64-bit hash would share an index; with FNV-1a over a
/// vocabulary of a million keys the chance of any such pair is about 3 in 100 million.
///
/// A slot of the table is one 64-bit word, so that a table of a million keys takes 16 MB
/// rather than 32 MB of cache: the key's index + 1 in the low bits, a flag, and the key's
/// hash above them (its tag). Keys of the vocabulary are always told apart: when two of them
/// share a tag and the lookup of one passes the other, both are flagged, and a lookup that
/// meets a flagged slot checks the whole hash. A key outside the vocabulary can still match
/// an unflagged tag, as it could match a whole hash: for a million keys the tag has 43 bits,
/// and a lookup compares about two, so fewer than one lookup in 10^12 finds a key it should not.
///
/// A final class, because it is immutable and shared: featurizers and the closures of the
/// prediction path hold it with one reference count.
final class Vocabulary: Sendable {
    /// The keys, by index (`love`, `do not`, `#<lo`), packed as a model file stores them; `nil`
    /// for a vocabulary fitted only to compare candidates, which never goes into a model file.
    let terms: PackedStrings?
    /// The hash of each key, by index.
    let hashes: [UInt64]
    /// Open-addressing slots, a power of two of them, at most half full: 0 for an empty slot,
    /// else `tag | flag | (index + 1)` (see ``Layout``). In plain pages: a fresh 2 MiB page took
    /// about 5 ms to fault in on a 2-core VM, more than building the table, which loading a model
    /// waits for.
    private let slots: [UInt64]
    /// Where the fields of a slot lie.
    private let layout: Layout
    /// The first two indices that hold the same hash, if any: a vocabulary read from a file
    /// with a key twice, which a loader refuses (a lookup finds only the first).
    let repeatedKey: (first: Int, second: Int)?

    /// Where the fields of a slot lie: the index + 1 in the low `flagShift` bits, then the
    /// flag, then the tag: the hash's bits from `flagShift + 1` up.
    fileprivate struct Layout {
        /// The bit of the flag; the bits below it hold the index + 1.
        let flagShift: UInt64

        init(count: Int) { flagShift = UInt64(UInt64.bitWidth - UInt64(count).leadingZeroBitCount) }

        var flag: UInt64 { 1 << flagShift }
        /// Whether a slot's tag is the hash's.
        @inline(__always)
        func tagMatches(_ slot: UInt64, _ hash: UInt64) -> Bool { (slot ^ hash) >> (flagShift + 1) == 0 }
        /// The index in a slot.
        @inline(__always)
        func index(_ slot: UInt64) -> Int { Int(truncatingIfNeeded: slot & (flag - 1)) - 1 }
        /// The slot of the key with this hash and index.
        func slot(hash: UInt64, index: Int) -> UInt64 { ((hash >> (flagShift + 1)) << (flagShift + 1)) | UInt64(index + 1) }
    }

    /// Creates a vocabulary from keys and their hashes, in index order.
    init(terms: PackedStrings?, hashes: [UInt64]) {
        precondition(terms == nil || terms!.count == hashes.count)
        self.terms = terms
        self.hashes = hashes
        var capacity = 16
        while capacity < hashes.count * 2 { capacity *= 2 }
        let layout = Layout(count: hashes.count)
        var slots = [UInt64](repeating: 0, count: capacity)
        let mask = capacity - 1
        var repeatedKey: (first: Int, second: Int)?
        slots.withUnsafeMutableBufferPointer { slots in
            hashes.withUnsafeBufferPointer { hashes in
                // The keys go in in index order, as lookups expect; the home slot of the key a
                // few places ahead is fetched meanwhile, so that the cache misses of a table
                // larger than the cache overlap.
                let ahead = 16
                for (index, hash) in hashes.enumerated() {
                    if index + ahead < hashes.count {
                        prefetchForReading(slots.baseAddress! + Self.home(of: hashes[index + ahead], mask: mask))
                    }
                    var entry = layout.slot(hash: hash, index: index)
                    var slot = Self.home(of: hash, mask: mask)
                    // Later keys never land on this key's path, which was full when it was placed:
                    // only the slots it passes now can be mistaken for it.
                    while slots[slot] != 0 {
                        if layout.tagMatches(slots[slot], hash) {
                            slots[slot] |= layout.flag
                            entry |= layout.flag
                            let other = layout.index(slots[slot])
                            if repeatedKey == nil && hashes[other] == hash { repeatedKey = (other, index) }
                        }
                        slot = (slot + 1) & mask
                    }
                    slots[slot] = entry
                }
            }
        }
        self.slots = slots
        self.layout = layout
        self.repeatedKey = repeatedKey
    }

    /// Creates a vocabulary from keys, hashing each.
    convenience init(terms: [String]) {
        self.init(terms: PackedStrings(terms), hashes: terms.map(FeatureHash.of))
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

    /// For each key of this vocabulary, by index, its index in `other`, or −1 if `other` does
    /// not have it: how the columns of a model over `other` map to columns over this one.
    func columns(in other: Vocabulary) -> [Int32] {
        other.withLookup { lookup in hashes.map { Int32(lookup.index(ofHash: $0) ?? -1) } }
    }

    /// Calls `body` with a view of the table for many lookups: no reference counting and no
    /// bounds checks inside the loop that featurizes a text.
    @inline(__always)
    func withLookup<R>(_ body: (Lookup) -> R) -> R {
        slots.withUnsafeBufferPointer { slots in
            hashes.withUnsafeBufferPointer { hashes in
                body(Lookup(slots: slots.baseAddress!, mask: slots.count - 1, layout: layout, hashes: hashes.baseAddress))
            }
        }
    }

    /// The table, valid only inside ``withLookup(_:)``.
    struct Lookup {
        fileprivate let slots: UnsafePointer<UInt64>
        fileprivate let mask: Int
        fileprivate let layout: Layout
        /// The hash of each key, by index, to check a flagged slot against.
        fileprivate let hashes: UnsafePointer<UInt64>?

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
                if found == 0 { return nil }
                if layout.tagMatches(found, hash) {
                    let index = layout.index(found)
                    if found & layout.flag == 0 || hashes![index] == hash { return index }
                }
                slot = (slot + 1) & mask
            }
        }
    }
}

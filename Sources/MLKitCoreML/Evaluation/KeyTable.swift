#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The position of each key of a string vocabulary (a `dictVectorizer`'s), looked up by the
/// key's UTF-8 bytes without making a string: open addressing over the keys' FNV-1a 64 hashes,
/// at most half full, each hit confirmed against the key's bytes.
///
/// A text classifier looks up every word of every text here; with Swift's `Dictionary` of
/// strings, SipHash and a string per word took about half of a short sentence's prediction.
struct KeyTable: Sendable {
    /// Every key's bytes, one after another.
    private let bytes: [UInt8]
    /// Where key `i` starts in ``bytes``; one more entry marks the end of the last.
    private let starts: [Int]
    /// The position stored in each slot, -1 when empty.
    private let slots: [Int32]
    private let bits: Int

    /// The number of keys.
    var count: Int { starts.count - 1 }

    /// A table of `keys`, each at its index.
    /// - Throws: The positions of the first key listed twice.
    init(_ keys: [String]) throws(Duplicate) {
        var bytes: [UInt8] = []
        var starts: [Int] = [0]
        starts.reserveCapacity(keys.count + 1)
        for key in keys {
            bytes.append(contentsOf: key.utf8)
            starts.append(bytes.count)
        }
        var bits = 4
        while 1 << bits < 2 * keys.count { bits += 1 }
        var slots = [Int32](repeating: -1, count: 1 << bits)
        let mask = (1 << bits) - 1
        for position in keys.indices {
            let key = bytes[starts[position]..<starts[position + 1]]
            var slot = Self.slot(Self.hash(key), bits)
            while slots[slot] >= 0 {
                let other = Int(slots[slot])
                if bytes[starts[other]..<starts[other + 1]].elementsEqual(key) { throw Duplicate(first: other, second: position) }
                slot = (slot + 1) & mask
            }
            slots[slot] = Int32(position)
        }
        self.bytes = bytes
        self.starts = starts
        self.slots = slots
        self.bits = bits
    }

    /// Two positions that hold the same key.
    struct Duplicate: Error {
        let first: Int
        let second: Int
    }

    /// The position of the key with these UTF-8 bytes, or `nil`.
    @inline(__always)
    func position(of key: UnsafeBufferPointer<UInt8>) -> Int32? {
        let mask = (1 << bits) - 1
        var slot = Self.slot(Self.hash(key), bits)
        return slots.withUnsafeBufferPointer { slots in
            bytes.withUnsafeBufferPointer { bytes in
                while true {
                    let position = slots[slot]
                    guard position >= 0 else { return nil }
                    let start = starts[Int(position)], end = starts[Int(position) + 1]
                    if end - start == key.count && (key.isEmpty || memcmp(bytes.baseAddress! + start, key.baseAddress!, key.count) == 0) {
                        return position
                    }
                    slot = (slot + 1) & mask
                }
            }
        }
    }

    /// The position of `key`, or `nil`.
    func position(of key: String) -> Int32? {
        if let found = key.utf8.withContiguousStorageIfAvailable({ position(of: $0) }) { return found }
        var copy = key
        return copy.withUTF8 { position(of: $0) }
    }

    /// FNV-1a 64 of the bytes.
    @inline(__always)
    private static func hash<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    /// The home slot of a hash in a table of `2^bits` slots (Fibonacci hashing).
    @inline(__always)
    private static func slot(_ hash: UInt64, _ bits: Int) -> Int {
        Int(truncatingIfNeeded: (hash &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }
}

/// Turns the label bytes of each example into one shared `String` per distinct label, and
/// collects the distinct labels on the way.
///
/// A dataset has a handful of labels and many examples, so a reader looks each label up here
/// instead of making a new `String` per example and hashing all of them again to find the
/// distinct labels: a lookup is an FNV-1a hash (``FeatureHash``) of the bytes and one
/// comparison, in an open-addressed table that keeps at most half its slots full.
struct LabelInterner {
    /// The distinct labels, in the order they were first seen.
    private(set) var labels: [String] = []
    /// The UTF-8 bytes each label was read from, parallel to ``labels``.
    private var keys: [[UInt8]] = []
    /// For each slot, the index in ``labels`` plus one, or 0 for an empty slot.
    private var slots = [Int32](repeating: 0, count: 16)

    /// The label for `bytes`, made with `makeString` the first time these bytes are seen.
    mutating func label(for bytes: UnsafeBufferPointer<UInt8>, makeString: () -> String) -> String {
        let mask = slots.count - 1
        var slot = Self.hash(bytes) & mask
        while slots[slot] != 0 {
            let index = Int(slots[slot]) - 1
            if Self.equal(keys[index], bytes) { return labels[index] }
            slot = (slot + 1) & mask
        }
        let label = makeString()
        labels.append(label)
        keys.append(Array(bytes))
        slots[slot] = Int32(labels.count)
        if labels.count * 2 > slots.count { grow() }
        return label
    }

    /// The label for the UTF-8 of `text`.
    mutating func label(for text: String) -> String {
        var utf8 = text
        return utf8.withUTF8 { label(for: $0) { text } }
    }

    /// Doubles the table and places every label again.
    private mutating func grow() {
        slots = [Int32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (index, key) in keys.enumerated() {
            var slot = Self.hash(key) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(index + 1)
        }
    }

    /// Whether `key` holds exactly `bytes`.
    private static func equal(_ key: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        key.withUnsafeBufferPointer { key in
            guard key.count == bytes.count else { return false }
            for index in 0 ..< key.count where key[index] != bytes[index] { return false }
            return true
        }
    }

    /// FNV-1a over `bytes`, its halves folded together.
    private static func hash(_ bytes: some Sequence<UInt8>) -> Int {
        var hash = FeatureHash()
        for byte in bytes { hash.combine(byte) }
        return Int(truncatingIfNeeded: hash.value ^ (hash.value >> 32))
    }
}

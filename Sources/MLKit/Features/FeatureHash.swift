/// The feature hash: 64-bit FNV-1a over the UTF-8 bytes of a feature's key.
///
/// It has no seed, so a model trained on one machine hashes the same on every other, in
/// every version: the constants below are part of the model file format
/// (`docs/model-format.md`). A feature's key is its normalized text:
///
/// | feature | key | example |
/// |---|---|---|
/// | word | the token | `love` |
/// | word n-gram | tokens joined by one space | `do not` |
/// | script bigram | two adjacent characters of a script without spaces | `北京` |
/// | character n-gram | `#` then n characters of `<token>` | `#<lo`, `#ove` |
///
/// A hashed feature's index is ``bucket(_:bits:)``: the high and low 32 bits folded together,
/// then the low `bits` bits.
struct FeatureHash: Hashable {
    /// The FNV-1a 64-bit offset basis.
    static let offsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325
    /// The FNV-1a 64-bit prime.
    static let prime: UInt64 = 0x0000_0100_0000_01B3

    /// The running state.
    private(set) var value: UInt64

    /// The hash of the empty key.
    init() { value = Self.offsetBasis }

    /// Continues from a finished hash, so that `"a b"` can be hashed after `"a"`.
    init(continuing value: UInt64) { self.value = value }

    /// Adds one byte.
    @inline(__always)
    mutating func combine(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* Self.prime
    }

    /// The hash of `key`, for the reference path and for tests.
    static func of(_ key: String) -> UInt64 {
        of(key.utf8)
    }

    /// The hash of a key's UTF-8 bytes.
    @inline(__always)
    static func of<Bytes: Sequence<UInt8>>(_ key: Bytes) -> UInt64 {
        var hash = FeatureHash()
        for byte in key { hash.combine(byte) }
        return hash.value
    }

    /// The bucket of a hash in a table of `2^bits` buckets.
    @inline(__always)
    static func bucket(_ hash: UInt64, bits: Int) -> Int {
        Int(truncatingIfNeeded: (hash ^ (hash >> 32)) & ((1 << UInt64(bits)) - 1))
    }
}

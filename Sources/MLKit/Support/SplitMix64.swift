/// SplitMix64 (Steele, Lea and Flood, 2014): the seeded generator behind every random
/// choice mlkit makes, so that results depend only on the seed, never on the platform or
/// the standard library's version.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator; the same seed always gives the same sequence.
    init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A float uniformly distributed in [0, 1), from the top 24 bits.
    mutating func nextFloat() -> Float { Float(next() >> 40) * 0x1p-24 }

    /// A value uniformly distributed in `0..<bound`, without modulo bias.
    mutating func nextIndex(below bound: Int) -> Int {
        precondition(bound > 0)
        let limit = UInt64.max - UInt64.max % UInt64(bound)
        while true {
            let value = next()
            if value < limit { return Int(value % UInt64(bound)) }
        }
    }
}

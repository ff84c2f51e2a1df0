/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a 64-bit state advanced by a Weyl sequence and mixed by a fixed finalizer.
///
/// The project's own generator, so that seeded results never depend on the standard library's
/// generators or shuffling algorithm. Seed 0 gives `0xE220A8397B1DCDAF` first.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
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

    /// A uniform random integer in `0..<bound`, by Lemire's multiply-and-reject method
    /// ("Fast random integer generation in an interval", 2019). `bound` must be positive.
    mutating func next(below bound: UInt64) -> UInt64 {
        var product = next().multipliedFullWidth(by: bound)
        if product.low < bound {
            let threshold = (0 &- bound) % bound
            while product.low < threshold { product = next().multipliedFullWidth(by: bound) }
        }
        return product.high
    }

    /// Shuffles `elements` in place with the Fisher–Yates (Durstenfeld) algorithm: for `i` from
    /// the last index down to 1, swap element `i` with a uniform pick from `0...i`.
    mutating func shuffle<Element>(_ elements: inout [Element]) {
        var index = elements.count - 1
        while index > 0 {
            let pick = Int(next(below: UInt64(index + 1)))
            elements.swapAt(index, pick)
            index -= 1
        }
    }
}

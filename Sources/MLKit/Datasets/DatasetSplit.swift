/// A dataset divided into training, validation and test parts by
/// ``TextDataset/split(validationFraction:testFraction:seed:)``.
public struct DatasetSplit: Sendable {
    /// The examples to train on.
    public let training: TextDataset
    /// The examples to tune on (early stopping, choosing parameters).
    public let validation: TextDataset
    /// The examples held out for the final evaluation; empty unless a test fraction was asked for.
    public let test: TextDataset
}

extension TextDataset {
    /// Splits the dataset into training, validation and test parts, stratified by label and
    /// seeded, so the same seed gives the same split on every machine and Swift version.
    ///
    /// For each label (in sorted order), its examples are shuffled with Fisher–Yates driven by
    /// one SplitMix64 generator seeded with `seed`; the first `round(n × validationFraction)` go
    /// to validation, the next `round(n × testFraction)` to test, the rest to training. Every
    /// label keeps at least one example in training (the test count, then the validation count,
    /// is lowered if needed). Each part keeps the original order of the examples.
    /// - Parameters:
    ///   - validationFraction: The share of each label's examples for validation, in `0..<1`.
    ///   - testFraction: The share of each label's examples for test, in `0..<1`; the two
    ///     fractions must add up to less than 1.
    ///   - seed: The seed of the shuffle.
    /// - Returns: The three parts.
    /// - Throws: ``MLKitError/Code/invalidParameter`` if a fraction is out of range.
    /// - Complexity: O(*n*) after grouping the examples by label.
    public func split(validationFraction: Double, testFraction: Double = 0,
                      seed: UInt64) throws -> DatasetSplit {
        try Self.checkFraction(validationFraction, named: "validationFraction")
        try Self.checkFraction(testFraction, named: "testFraction")
        guard validationFraction + testFraction < 1 else {
            throw MLKitError(.invalidParameter,
                             "validation and test fractions add up to \(validationFraction + testFraction); "
                             + "they must add up to less than 1",
                             at: .init(field: "testFraction"))
        }
        let parts = assignParts(validationFraction: validationFraction, testFraction: testFraction,
                                seed: seed)
        func dataset(of part: Part) -> TextDataset {
            TextDataset(zip(examples, parts).filter { $0.1 == part }.map(\.0))
        }
        return DatasetSplit(training: dataset(of: .training), validation: dataset(of: .validation),
                            test: dataset(of: .test))
    }

    private enum Part { case training, validation, test }

    /// The part of each example, by index.
    private func assignParts(validationFraction: Double, testFraction: Double, seed: UInt64) -> [Part] {
        var parts = [Part](repeating: .training, count: examples.count)
        var indicesByLabel: [String: [Int]] = [:]
        for (index, example) in examples.enumerated() {
            indicesByLabel[example.label, default: []].append(index)
        }
        var generator = SplitMix64(seed: seed)
        for label in labels {
            var indices = indicesByLabel[label] ?? []
            generator.shuffle(&indices)
            let count = indices.count
            var validationCount = Int((Double(count) * validationFraction).rounded())
            var testCount = Int((Double(count) * testFraction).rounded())
            let heldOutLimit = max(count - 1, 0)
            testCount = min(testCount, heldOutLimit)
            validationCount = min(validationCount, heldOutLimit - testCount)
            for index in indices.prefix(validationCount) { parts[index] = .validation }
            for index in indices.dropFirst(validationCount).prefix(testCount) { parts[index] = .test }
        }
        return parts
    }

    private static func checkFraction(_ fraction: Double, named name: String) throws {
        guard fraction.isFinite, fraction >= 0, fraction < 1 else {
            throw MLKitError(.invalidParameter, "must be at least 0 and less than 1 (got \(fraction))",
                             at: .init(field: name))
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a 64-bit state advanced by a Weyl sequence and mixed by a fixed finalizer.
///
/// The project's own generator, so that seeded results never depend on the standard library's
/// generators or shuffling algorithm. Seed 0 gives `0xE220A8397B1DCDAF` first.
struct SplitMix64 {
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

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

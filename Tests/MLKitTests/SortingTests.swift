import TestSupport
import Testing
@testable import MLKit

@Suite("Sorting and ranking", .onOwnThreads)
struct SortingTests {
    /// Pseudo-random numbers for the cases below, the same on every run.
    static func numbers(_ count: Int, seed: UInt64) -> [UInt64] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in generator.next() }
    }

    @Test("The radix sort orders by key and keeps equal keys in their order", arguments: [0, 1, 2, 31, 1_000, 70_000])
    func stableRadixSort(count: Int) {
        // Keys from a few values (many ties) and full 64-bit keys; the payload is the position.
        for keyOf in [{ (value: UInt64) in value % 7 }, { (value: UInt64) in value }, { (value: UInt64) in value >> 40 }] {
            var elements = Self.numbers(count, seed: UInt64(count)).enumerated().map { (key: keyOf($0.element), position: $0.offset) }
            let expected = elements.sorted { $0.key != $1.key ? $0.key < $1.key : $0.position < $1.position }
            var scratch = elements
            elements.withUnsafeMutableBufferPointer { elements in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    Sorting.sortStably(elements, scratch: scratch) { $0.key }
                }
            }
            #expect(elements.map(\.key) == expected.map(\.key))
            #expect(elements.map(\.position) == expected.map(\.position))
        }
    }

    @Test("A ranking is the top of a stable descending sort, ties to the lower class")
    func ranking() {
        for (count, top) in [(1, 1), (5, 5), (7, 3), (41, 5), (41, 0), (3, 10)] {
            for seed in 0..<20 {
                // Few distinct values, so that ties are common.
                var values = Self.numbers(count, seed: UInt64(seed * 100 + count)).map { Float($0 % 4) }
                let expected = Array(values.indices.sorted { values[$0] != values[$1] ? values[$0] > values[$1] : $0 < $1 }
                    .prefix(top))
                let ranked = values.withUnsafeMutableBufferPointer { TextClassifier.ranking($0, top) }
                #expect(ranked == expected, "\(values) top \(top)")
            }
        }
    }
}

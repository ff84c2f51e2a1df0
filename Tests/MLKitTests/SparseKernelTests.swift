import TestSupport
import Testing
@testable import MLKit

@Suite("Sparse kernels", .onOwnThreads)
struct SparseKernelTests {
    /// A random document over a matrix of `features` rows: repeated indices, values of both
    /// signs and several magnitudes, so that the order and rounding of the additions show.
    static func document(features: Int, length: Int, seed: UInt64) -> (indices: [Int32], values: [Float]) {
        var generator = SplitMix64(seed: seed)
        let indices = (0..<length).map { _ in Int32(generator.next() % UInt64(features)) }
        let values = (0..<length).map { _ in (generator.nextFloat() - 0.5) * Float(1 << (generator.next() % 12)) }
        return (indices, values)
    }

    /// The first position where two arrays differ bit for bit, if any: a short failure message
    /// for arrays of thousands of floats.
    static func firstDifference(_ left: [Float], _ right: [Float]) -> Int? {
        precondition(left.count == right.count)
        return left.indices.first { left[$0].bitPattern != right[$0].bitPattern }
    }

    static func matrix(features: Int, classes: Int, seed: UInt64) -> [Float] {
        var generator = SplitMix64(seed: seed)
        return (0..<(features * classes)).map { _ in (generator.nextFloat() - 0.5) * 3 }
    }

    /// Row lengths around every boundary of the kernels' panels (4, 8, 16 and 64 lanes), with 1 to 3
    /// lanes past a multiple of 4 after a full panel of 64 or inside the first (the AVX kernel's
    /// vector that ends the row), and wordnet-hypernyms' 249.
    static let classCounts = [1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 15, 16, 17, 24, 31, 39, 41, 63, 64, 65, 67, 100, 130, 249]

    @Test("Scores accumulate bit for bit as the portable kernel adds them, on any row length", arguments: classCounts)
    func accumulateMatchesPortableKernel(classes: Int) {
        let features = 50
        let weights = Self.matrix(features: features, classes: classes, seed: UInt64(classes))
        for (seed, length) in [0, 1, 3, 40, 300].enumerated() {
            let (indices, values) = Self.document(features: features, length: length, seed: UInt64(seed * 1_000 + classes))
            let start = Self.matrix(features: 1, classes: classes, seed: UInt64(seed))
            var dispatched = start, portable = start
            indices.withUnsafeBufferPointer { indices in
                values.withUnsafeBufferPointer { values in
                    weights.withUnsafeBufferPointer { weights in
                        SparseKernels.accumulateRows(indices: indices, values: values, weights: weights.baseAddress!,
                                                     classes: classes, into: &dispatched)
                        SparseKernels.accumulateRowsPortably(indices: indices, values: values,
                                                             weights: weights.baseAddress!, classes: classes,
                                                             into: &portable)
                    }
                }
            }
            #expect(Self.firstDifference(dispatched, portable) == nil, "\(classes) classes, \(length) features")
            // And the portable kernel is the plain loop: each lane adds the rows in document order.
            var plain = start
            for (index, value) in zip(indices, values) {
                for lane in 0..<classes { plain[lane] = plain[lane] + value * weights[Int(index) * classes + lane] }
            }
            #expect(Self.firstDifference(portable, plain) == nil, "\(classes) classes, \(length) features")
        }
    }

    @Test("A scattered update changes the weights bit for bit as the portable kernel does", arguments: classCounts)
    func scatterMatchesPortableKernel(classes: Int) {
        let features = 50
        let gradient = Self.matrix(features: 1, classes: classes, seed: 7)
        for (seed, length) in [0, 1, 3, 40, 300].enumerated() {
            // Repeated indices update the same row twice, the second time on top of the first.
            let (indices, values) = Self.document(features: features, length: length, seed: UInt64(seed * 1_000 + classes))
            let start = Self.matrix(features: features, classes: classes, seed: UInt64(classes))
            var dispatched = start, portable = start
            indices.withUnsafeBufferPointer { indices in
                values.withUnsafeBufferPointer { values in
                    SparseKernels.scatterUpdate(indices: indices, values: values, gradient: gradient, scale: 0.37,
                                                classes: classes, weights: &dispatched)
                    SparseKernels.scatterUpdatePortably(indices: indices, values: values, gradient: gradient,
                                                        scale: 0.37, classes: classes, weights: &portable)
                }
            }
            #expect(Self.firstDifference(dispatched, portable) == nil, "\(classes) classes, \(length) features")
            #expect(dispatched != start || length == 0)
        }
    }
}

import Testing
@testable import MLKit

@Suite("Sparse kernels")
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

@Suite("The SVM solver's lane steps")
struct LaneStepTests {
    /// The buffers of one row's step: per lane, then the row's own.
    struct Buffers {
        var margins: [Float], positiveClasses: [Int32], positiveDiagonal: [Float], negativeDiagonal: [Float]
        var previousMax: [Float], passMax: [Float], passMin: [Float], steps: [Float], activeRows: [Int]
        var alpha: [Float], active: [UInt8], activeLanes: Int32
        var moved = false

        /// Random buffers for `lanes` lanes, with the cases the step branches on: inactive lanes,
        /// dual variables at 0 (shrinking), gradients at 0 and below the smallest step, margins
        /// of both signs, thresholds at infinity.
        init(lanes: Int, generator: inout SplitMix64) {
            func uniform(_ low: Float, _ high: Float) -> Float { low + (high - low) * generator.nextFloat() }
            margins = (0..<lanes).map { _ in uniform(-3, 3) }
            positiveClasses = (0..<lanes).map { Int32($0) }
            positiveDiagonal = (0..<lanes).map { _ in uniform(0.1, 2) }
            negativeDiagonal = (0..<lanes).map { _ in uniform(0.1, 2) }
            previousMax = (0..<lanes).map { _ in generator.next() % 4 == 0 ? .infinity : uniform(-0.5, 1) }
            passMax = (0..<lanes).map { _ in generator.next() % 3 == 0 ? -.infinity : uniform(-1, 1) }
            passMin = (0..<lanes).map { _ in generator.next() % 3 == 0 ? .infinity : uniform(-1, 1) }
            steps = (0..<lanes).map { _ in uniform(-1, 1) }  // every lane's is written
            activeRows = (0..<lanes).map { _ in 100 + Int(generator.next() % 100) }
            alpha = (0..<lanes).map { _ in generator.next() % 3 == 0 ? 0 : uniform(0, 2) }
            active = (0..<lanes).map { _ in generator.next() % 5 == 0 ? 0 : 1 }
            activeLanes = Int32(active.filter { $0 != 0 }.count)
            // Exact zeros and tiny gradients: a margin that makes `sign·m − 1 + α(D + s)` vanish.
            for lane in 0..<lanes where generator.next() % 6 == 0 {
                alpha[lane] = 0
                margins[lane] = generator.next() % 2 == 0 ? 1 : -1
            }
        }

        /// Runs one step on these buffers, portably or with whatever `run` dispatches to.
        mutating func step(label: Int32, curvatureBase: Float, sole: Float, portably: Bool) {
            let lanes = margins.count
            moved = margins.withUnsafeMutableBufferPointer { margins in
                positiveClasses.withUnsafeMutableBufferPointer { positiveClasses in
                    positiveDiagonal.withUnsafeMutableBufferPointer { positiveDiagonal in
                        negativeDiagonal.withUnsafeMutableBufferPointer { negativeDiagonal in
                            previousMax.withUnsafeMutableBufferPointer { previousMax in
                                passMax.withUnsafeMutableBufferPointer { passMax in
                                    passMin.withUnsafeMutableBufferPointer { passMin in
                                        steps.withUnsafeMutableBufferPointer { steps in
                                            activeRows.withUnsafeMutableBufferPointer { activeRows in
                                                let step = LaneStep(
                                                    lanes: lanes, margins: margins.baseAddress!,
                                                    positiveClasses: positiveClasses.baseAddress!,
                                                    positiveDiagonal: positiveDiagonal.baseAddress!,
                                                    negativeDiagonal: negativeDiagonal.baseAddress!,
                                                    previousMax: previousMax.baseAddress!, passMax: passMax.baseAddress!,
                                                    passMin: passMin.baseAddress!, steps: steps.baseAddress!,
                                                    activeRows: activeRows.baseAddress!)
                                                return alpha.withUnsafeMutableBufferPointer { alpha in
                                                    active.withUnsafeMutableBufferPointer { active in
                                                        withUnsafeMutablePointer(to: &activeLanes) { activeLanes in
                                                            portably
                                                                ? step.runPortably(label: label, curvatureBase: curvatureBase,
                                                                                   sole: sole, alpha: alpha.baseAddress!,
                                                                                   active: active.baseAddress!,
                                                                                   activeLanes: activeLanes)
                                                                : step.run(label: label, curvatureBase: curvatureBase,
                                                                           sole: sole, alpha: alpha.baseAddress!,
                                                                           active: active.baseAddress!, activeLanes: activeLanes)
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }

        /// The buffers a step writes, bit for bit.
        var written: [[UInt32]] {
            [alpha.map(\.bitPattern), passMax.map(\.bitPattern), passMin.map(\.bitPattern), steps.map(\.bitPattern),
             active.map(UInt32.init), activeRows.map { UInt32($0) }, [UInt32(bitPattern: activeLanes)], [moved ? 1 : 0]]
        }
    }

    @Test("A row's step in every lane matches the portable loop bit for bit", arguments: [8, 9, 15, 16, 20, 39, 41, 64])
    func stepMatchesPortableLoop(lanes: Int) {
        var generator = SplitMix64(seed: UInt64(lanes))
        var branches = (shrunk: 0, moved: 0, held: 0)
        for trial in 0..<200 {
            let start = Buffers(lanes: lanes, generator: &generator)
            let label = Int32(generator.next() % UInt64(lanes + 1))  // sometimes no lane's class
            let curvatureBase = 0.5 + generator.nextFloat() * 2, sole = trial % 2 == 0 ? 0 : generator.nextFloat()
            var dispatched = start, portable = start
            dispatched.step(label: label, curvatureBase: curvatureBase, sole: sole, portably: false)
            portable.step(label: label, curvatureBase: curvatureBase, sole: sole, portably: true)
            #expect(dispatched.written == portable.written, "\(lanes) lanes, trial \(trial)")
            branches.shrunk += zip(start.active, portable.active).filter { $0 != $1 }.count
            branches.moved += zip(start.alpha, portable.alpha).filter { $0.bitPattern != $1.bitPattern }.count
            branches.held += zip(start.active, portable.steps).filter { $0 != 0 && $1 == 0 }.count
        }
        // The trials cover every branch.
        #expect(branches.shrunk > 0 && branches.moved > 0 && branches.held > 0, "\(branches)")
    }
}

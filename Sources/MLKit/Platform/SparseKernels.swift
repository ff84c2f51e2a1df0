import Foundation
internal import CPlatform

/// Hand-written SIMD kernels for the sparse shapes of linear text classification.
///
/// Weights are feature-major, as in LIBLINEAR: row `f` holds the `classes` weights of
/// feature `f` contiguously, so one document touches one short row per non-zero feature.
enum SparseKernels {
    #if arch(x86_64)
    /// Whether ``accumulateRows(indices:values:weights:classes:into:)`` and
    /// ``scatterUpdate(indices:values:gradient:scale:classes:weights:)`` hand rows of 8 classes or
    /// more to the 256-bit AVX kernels of `CPlatform`: this module is compiled for the
    /// baseline x86-64 target, where Swift's SIMD types are 128-bit SSE. The AVX kernels give
    /// bit-identical results (each lane multiplies, then adds, in the same order; AVX has no fused
    /// multiply-add) in half the vector instructions. Below 8 classes there is no 256-bit vector
    /// to fill, and the portable kernels run. They meet the performance budget
    /// (`docs/architecture.md`, which gives their gain).
    ///
    /// `MLKIT_SPARSE_KERNELS=portable` in the environment keeps the portable kernels, to measure
    /// one against the other in the same binary.
    static let usesAVX = mlkit_has_avx() != 0
        && ProcessInfo.processInfo.environment["MLKIT_SPARSE_KERNELS"] != "portable"
    #endif

    /// `scores += Σ value_i · W[index_i, :]` over a document's non-zero features.
    ///
    /// The scores stay in registers while the rows stream by, a panel of 16, 8, 4, 2 or 1 lanes
    /// per pass over the document: adding each row into memory would chain every row's
    /// additions behind the previous row's store. Each lane still adds the rows in document
    /// order, one multiply and one add per row, so the sums are exactly those of a plain loop.
    ///
    /// - Parameters:
    ///   - indices: The document's feature indices.
    ///   - values: Their values.
    ///   - weights: Feature-major weights, `classes` floats per feature.
    ///   - classes: The row length.
    ///   - scores: `classes` accumulators.
    /// - Complexity: O(nnz × classes).
    @inline(__always)
    static func accumulateRows(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                               weights: UnsafePointer<Float>, classes: Int, into scores: UnsafeMutablePointer<Float>) {
        #if arch(x86_64)
        if usesAVX && classes >= 8 {
            mlkit_avx_accumulate_rows(indices.baseAddress, values.baseAddress, indices.count, weights, classes, scores)
            return
        }
        #endif
        accumulateRowsPortably(indices: indices, values: values, weights: weights, classes: classes, into: scores)
    }

    /// ``accumulateRows(indices:values:weights:classes:into:)`` in Swift SIMD, on any processor:
    /// the reference that the AVX kernel must match bit for bit.
    @inline(__always)
    static func accumulateRowsPortably(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                                       weights: UnsafePointer<Float>, classes: Int,
                                       into scores: UnsafeMutablePointer<Float>) {
        let rows = RowPanels(indices: indices, values: values, weights: weights, classes: classes, scores: scores)
        var lane = 0
        while lane + 16 <= classes { lane = rows.accumulate(SIMD16<Float>.self, from: lane) }
        if lane + 8 <= classes { lane = rows.accumulate(SIMD8<Float>.self, from: lane) }
        if lane + 4 <= classes { lane = rows.accumulate(SIMD4<Float>.self, from: lane) }
        if lane + 2 <= classes { lane = rows.accumulate(SIMD2<Float>.self, from: lane) }
        if lane < classes {
            scores[lane] = accumulateLane(lane, indices: indices, values: values, weights: weights, classes: classes,
                                          onto: scores[lane])
        }
    }

    /// One lane of ``accumulateRows(indices:values:weights:classes:into:)``: `start` plus the
    /// document's values times that lane's weights, in document order, one multiply and one add
    /// each, as every lane of the SIMD and AVX kernels adds them (so the same bits).
    @inline(__always)
    static func accumulateLane(_ lane: Int, indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                               weights: UnsafePointer<Float>, classes: Int, onto start: Float) -> Float {
        var sum = start
        for position in 0..<indices.count {
            sum = sum + values[position] * weights[Int(indices[position]) &* classes &+ lane]
        }
        return sum
    }

    /// One document's rows and scores, for ``accumulateRows(indices:values:weights:classes:into:)``.
    private struct RowPanels {
        let indices: UnsafeBufferPointer<Int32>
        let values: UnsafeBufferPointer<Float>
        let weights: UnsafePointer<Float>
        let classes: Int
        let scores: UnsafeMutablePointer<Float>

        /// Adds the rows into the lanes `lane ..< lane + Panel.scalarCount`, with the sums in one
        /// SIMD register set, and returns the next lane.
        @inline(__always)
        func accumulate<Panel: SIMD>(_: Panel.Type, from lane: Int) -> Int where Panel.Scalar == Float {
            let rows = UnsafeRawPointer(weights + lane)
            let rowBytes = classes &* MemoryLayout<Float>.stride
            var sum = UnsafeRawPointer(scores + lane).loadUnaligned(as: Panel.self)
            for position in 0..<indices.count {
                let row = rows.loadUnaligned(fromByteOffset: Int(indices[position]) &* rowBytes, as: Panel.self)
                sum = sum + Panel(repeating: values[position]) * row
            }
            UnsafeMutableRawPointer(scores + lane).storeBytes(of: sum, as: Panel.self)
            return lane + Panel.scalarCount
        }
    }

    /// Asks the processor to fetch every cache line of the rows `indices` of `weights`, so that
    /// their misses overlap instead of arriving one panel pass at a time in
    /// ``accumulateRows(indices:values:weights:classes:into:)``. Worth it only when the matrix is
    /// far larger than the cache. A hint: it changes no result.
    @inline(__always)
    static func prefetchRows(indices: UnsafeBufferPointer<Int32>, weights: UnsafePointer<Float>, classes: Int) {
        let rows = WeightRows(weights: weights, classes: classes)
        for index in indices { rows.prefetch(Int(index)) }
    }

    /// `W[index_i, :] += scale · value_i · gradient` over a document's non-zero features:
    /// the sparse update of stochastic gradient training.
    @inline(__always)
    static func scatterUpdate(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                              gradient: UnsafePointer<Float>, scale: Float, classes: Int,
                              weights: UnsafeMutablePointer<Float>) {
        #if arch(x86_64)
        if usesAVX && classes >= 8 {
            mlkit_avx_scatter_update(indices.baseAddress, values.baseAddress, indices.count, gradient, scale, classes, weights)
            return
        }
        #endif
        scatterUpdatePortably(indices: indices, values: values, gradient: gradient, scale: scale, classes: classes,
                              weights: weights)
    }

    /// One lane of ``scatterUpdate(indices:values:gradient:scale:classes:weights:)`` with scale 1:
    /// `W[index_i, lane] += value_i · step`, with the same operations as every lane of the full
    /// update (so the same bits).
    @inline(__always)
    static func scatterLane(_ lane: Int, indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                            step: Float, classes: Int, weights: UnsafeMutablePointer<Float>) {
        for position in 0..<indices.count {
            let weight = weights + (Int(indices[position]) &* classes &+ lane)
            weight.pointee = weight.pointee + values[position] * step
        }
    }

    /// ``scatterUpdate(indices:values:gradient:scale:classes:weights:)`` in Swift, on any
    /// processor: the reference that the AVX kernel must match bit for bit.
    @inline(__always)
    static func scatterUpdatePortably(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                                      gradient: UnsafePointer<Float>, scale: Float, classes: Int,
                                      weights: UnsafeMutablePointer<Float>) {
        for position in 0..<indices.count {
            let row = weights + Int(indices[position]) * classes
            let factor = scale * values[position]
            for lane in 0..<classes { row[lane] += factor * gradient[lane] }
        }
    }

    /// `C += A · B` for row-major A (m×k), B (k×n), C (m×n), with eight-lane SIMD over C's
    /// rows: the plain kernel that BLAS's `sgemm` is measured against.
    static func multiplyAccumulate(m: Int, n: Int, k: Int, a: UnsafePointer<Float>, b: UnsafePointer<Float>,
                                   c: UnsafeMutablePointer<Float>) {
        for row in 0..<m {
            for inner in 0..<k {
                addScaled(a[row * k + inner], b + inner * n, to: c + row * n, count: n)
            }
        }
    }

    /// `target[0..<count] += scale · source[0..<count]`, eight lanes at a time: the inner step
    /// of both the sparse row accumulation and the plain matrix product.
    @inline(__always)
    static func addScaled(_ scale: Float, _ source: UnsafePointer<Float>, to target: UnsafeMutablePointer<Float>,
                          count: Int) {
        let wide = count & ~7
        let targetRaw = UnsafeMutableRawPointer(target)
        let sourceRaw = UnsafeRawPointer(source)
        let broadcast = SIMD8<Float>(repeating: scale)
        var lane = 0
        while lane < wide {
            let offset = lane * MemoryLayout<Float>.stride
            let sum = targetRaw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                + broadcast * sourceRaw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            targetRaw.storeBytes(of: sum, toByteOffset: offset, as: SIMD8<Float>.self)
            lane += 8
        }
        while lane < count {
            target[lane] += scale * source[lane]
            lane += 1
        }
    }
}

/// The rows of a feature-major weight matrix, for fetching a feature's row into the cache as soon
/// as its index is known: featurizing a text for prediction finds each index in a vocabulary
/// lookup, well before the scores add the row.
struct WeightRows {
    /// The first row.
    let base: UnsafeRawPointer
    /// The length of a row in bytes.
    let rowBytes: Int

    /// The rows of `weights`, `classes` floats each.
    init(weights: UnsafePointer<Float>, classes: Int) {
        base = UnsafeRawPointer(weights)
        rowBytes = classes &* MemoryLayout<Float>.stride
    }

    /// Asks the processor to fetch every cache line of row `index`. A hint: it changes no result.
    @inline(__always)
    func prefetch(_ index: Int) {
        let row = base + index &* rowBytes
        var offset = 0
        while offset < rowBytes {
            prefetchForReading(row + offset)
            offset &+= 64
        }
        prefetchForReading(row + rowBytes - 1)
    }
}

/// Hand-written SIMD kernels for the sparse shapes of linear text classification.
///
/// Weights are feature-major, as in LIBLINEAR: row `f` holds the `classes` weights of
/// feature `f` contiguously, so one document touches one short row per non-zero feature.
enum SparseKernels {
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
        let rows = RowPanels(indices: indices, values: values, weights: weights, classes: classes, scores: scores)
        var lane = 0
        while lane + 16 <= classes { lane = rows.accumulate(SIMD16<Float>.self, from: lane) }
        if lane + 8 <= classes { lane = rows.accumulate(SIMD8<Float>.self, from: lane) }
        if lane + 4 <= classes { lane = rows.accumulate(SIMD4<Float>.self, from: lane) }
        if lane + 2 <= classes { lane = rows.accumulate(SIMD2<Float>.self, from: lane) }
        if lane < classes {
            var sum = scores[lane]
            for position in 0..<indices.count {
                sum = sum + values[position] * weights[Int(indices[position]) &* classes &+ lane]
            }
            scores[lane] = sum
        }
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
        let rowBytes = classes &* MemoryLayout<Float>.stride
        let raw = UnsafeRawPointer(weights)
        for index in indices {
            let row = raw + Int(index) &* rowBytes
            var offset = 0
            while offset < rowBytes {
                prefetchForReading(row + offset)
                offset &+= 64
            }
            prefetchForReading(row + rowBytes - 1)
        }
    }

    /// `W[index_i, :] += scale · value_i · gradient` over a document's non-zero features:
    /// the sparse update of stochastic gradient training.
    @inline(__always)
    static func scatterUpdate(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
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

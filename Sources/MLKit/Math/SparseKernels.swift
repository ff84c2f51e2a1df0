/// Hand-written SIMD kernels for the sparse shapes of linear text classification.
///
/// Weights are feature-major, as in LIBLINEAR: row `f` holds the `classes` weights of
/// feature `f` contiguously, so one document touches one short row per non-zero feature.
enum SparseKernels {
    /// `scores += Σ value_i · W[index_i, :]` over a document's non-zero features.
    ///
    /// - Parameters:
    ///   - indices: The document's feature indices.
    ///   - values: Their values.
    ///   - weights: Feature-major weights, `classes` floats per feature.
    ///   - classes: The row length.
    ///   - scores: `classes` accumulators.
    /// - Complexity: O(nnz × classes), eight lanes at a time.
    @inline(__always)
    static func accumulateRows(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                               weights: UnsafePointer<Float>, classes: Int, into scores: UnsafeMutablePointer<Float>) {
        for position in 0..<indices.count {
            addScaled(values[position], weights + Int(indices[position]) * classes, to: scores, count: classes)
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

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
        let wide = classes & ~7
        let raw = UnsafeMutableRawPointer(scores)
        for position in 0..<indices.count {
            let row = weights + Int(indices[position]) * classes
            let value = values[position]
            let rowRaw = UnsafeRawPointer(row)
            let broadcast = SIMD8<Float>(repeating: value)
            var lane = 0
            while lane < wide {
                let offset = lane * MemoryLayout<Float>.stride
                let sum = raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                    + broadcast * rowRaw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                raw.storeBytes(of: sum, toByteOffset: offset, as: SIMD8<Float>.self)
                lane += 8
            }
            while lane < classes {
                scores[lane] += value * row[lane]
                lane += 1
            }
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
        let wide = n & ~7
        for row in 0..<m {
            let cRow = UnsafeMutableRawPointer(c + row * n)
            for inner in 0..<k {
                let scale = SIMD8<Float>(repeating: a[row * k + inner])
                let bRow = UnsafeRawPointer(b + inner * n)
                var column = 0
                while column < wide {
                    let offset = column * MemoryLayout<Float>.stride
                    let sum = cRow.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                        + scale * bRow.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                    cRow.storeBytes(of: sum, toByteOffset: offset, as: SIMD8<Float>.self)
                    column += 8
                }
                while column < n {
                    c[row * n + column] += a[row * k + inner] * b[inner * n + column]
                    column += 1
                }
            }
        }
    }
}

import Foundation

/// SIMD kernels for the embedding classifier: the sparse gather-average that builds a
/// document's hidden vector, the sparse scatter that trains the embedding rows, the dense
/// row accumulation of the output layer, and a numerically stable softmax.
///
/// Rows are `dimension` contiguous floats (row-major). Every loop goes eight lanes at a time
/// with unaligned SIMD loads and finishes with a scalar tail, so any dimension works and
/// multiples of 8 are fastest.
enum EmbeddingKernels {
    /// The weighted sum of embedding rows: `h = Σ_i w_i · E[r_i, :]`, with `h` overwritten.
    ///
    /// The columns go 32 at a time (then 8, then one), each block summed over all the features
    /// in four SIMD accumulators that stay in registers, so that no feature waits for the
    /// previous one's store to `h`.
    ///
    /// - Parameters:
    ///   - rows: The rows `r_i` of the document's features, in `0..<E.rows`.
    ///   - weights: Their weights `w_i` (for a mean, `value_i / Σ value`).
    ///   - count: The number of features.
    ///   - embeddings: E, row-major with `dimension` floats per row.
    ///   - dimension: The row length d.
    ///   - hidden: `dimension` floats for `h`.
    /// - Complexity: O(count × d).
    @inline(__always)
    static func gather(rows: UnsafePointer<Int32>, weights: UnsafePointer<Float>, count: Int,
                       embeddings: UnsafePointer<Float>, dimension: Int, into hidden: UnsafeMutablePointer<Float>) {
        let raw = UnsafeRawPointer(embeddings)
        let target = UnsafeMutableRawPointer(hidden)
        let stride = MemoryLayout<Float>.stride
        var lane = 0
        while lane + 32 <= dimension {
            var sum0 = SIMD8<Float>(), sum1 = SIMD8<Float>(), sum2 = SIMD8<Float>(), sum3 = SIMD8<Float>()
            for position in 0..<count {
                let offset = (Int(rows[position]) &* dimension &+ lane) &* stride
                let weight = SIMD8<Float>(repeating: weights[position])
                sum0 += weight * raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
                sum1 += weight * raw.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<Float>.self)
                sum2 += weight * raw.loadUnaligned(fromByteOffset: offset &+ 64, as: SIMD8<Float>.self)
                sum3 += weight * raw.loadUnaligned(fromByteOffset: offset &+ 96, as: SIMD8<Float>.self)
            }
            target.storeBytes(of: sum0, toByteOffset: lane &* stride, as: SIMD8<Float>.self)
            target.storeBytes(of: sum1, toByteOffset: (lane &+ 8) &* stride, as: SIMD8<Float>.self)
            target.storeBytes(of: sum2, toByteOffset: (lane &+ 16) &* stride, as: SIMD8<Float>.self)
            target.storeBytes(of: sum3, toByteOffset: (lane &+ 24) &* stride, as: SIMD8<Float>.self)
            lane &+= 32
        }
        while lane + 8 <= dimension {
            var sum = SIMD8<Float>()
            for position in 0..<count {
                let offset = (Int(rows[position]) &* dimension &+ lane) &* stride
                sum += SIMD8<Float>(repeating: weights[position]) * raw.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self)
            }
            target.storeBytes(of: sum, toByteOffset: lane &* stride, as: SIMD8<Float>.self)
            lane &+= 8
        }
        while lane < dimension {
            var sum: Float = 0
            for position in 0..<count { sum += weights[position] * embeddings[Int(rows[position]) &* dimension &+ lane] }
            hidden[lane] = sum
            lane &+= 1
        }
    }

    /// The sparse update of the embedding rows a document used, restricted to the rows in
    /// `owned`: `E[r_i, :] += scale · w_i · g` for every feature with `r_i ∈ owned`.
    ///
    /// With `scale = −η` and `g = ∂L/∂h`, this is the gradient step on E, since
    /// `h = Σ_i w_i E[r_i, :]` gives `∂L/∂E[r_i, :] = w_i · ∂L/∂h`. Restricting each thread to
    /// its own contiguous range of rows lets threads update E at once without races, and
    /// every row still receives its updates in document order, whatever the thread count.
    @inline(__always)
    static func scatter(rows: UnsafePointer<Int32>, weights: UnsafePointer<Float>, count: Int,
                        gradient: UnsafePointer<Float>, scale: Float, embeddings: UnsafeMutablePointer<Float>,
                        dimension: Int, owned: Range<Int32>) {
        for position in 0..<count {
            let row = rows[position]
            guard owned.contains(row) else { continue }
            SparseKernels.addScaled(scale * weights[position], gradient, to: embeddings + Int(row) &* dimension, count: dimension)
        }
    }

    /// `y += Aᵀx` for a dense row-major A of `rows` × `width`: `y_c += Σ_k x_k · A[k, c]`, the
    /// output layer of one document (`s = b + Wᵀh`).
    ///
    /// Columns go eight at a time in two SIMD accumulators that stay in registers over the whole
    /// k loop (a row-by-row `y += x_k · A[k, :]` stores y once per k and measured 3× slower);
    /// the last `width mod 8` columns are dot products along k, eight rows at a time.
    @inline(__always)
    static func multiplyTransposed(x: UnsafePointer<Float>, a: UnsafePointer<Float>, rows: Int, width: Int,
                                   into y: UnsafeMutablePointer<Float>) {
        let raw = UnsafeRawPointer(a)
        let stride = MemoryLayout<Float>.stride
        var column = 0
        while column + 8 <= width {
            var even = SIMD8<Float>()
            var odd = SIMD8<Float>()
            var k = 0
            while k + 1 < rows {
                even += SIMD8(repeating: x[k])
                    * raw.loadUnaligned(fromByteOffset: (k &* width &+ column) &* stride, as: SIMD8<Float>.self)
                odd += SIMD8(repeating: x[k &+ 1])
                    * raw.loadUnaligned(fromByteOffset: ((k &+ 1) &* width &+ column) &* stride, as: SIMD8<Float>.self)
                k &+= 2
            }
            if k < rows {
                even += SIMD8(repeating: x[k])
                    * raw.loadUnaligned(fromByteOffset: (k &* width &+ column) &* stride, as: SIMD8<Float>.self)
            }
            let target = UnsafeMutableRawPointer(y + column)
            target.storeBytes(of: target.loadUnaligned(as: SIMD8<Float>.self) + even + odd, as: SIMD8<Float>.self)
            column &+= 8
        }
        let coefficients = UnsafeRawPointer(x)
        while column < width {
            var partial = SIMD8<Float>()
            var k = 0
            while k + 8 <= rows {
                var column8 = SIMD8<Float>()
                for lane in 0..<8 { column8[lane] = a[(k &+ lane) &* width &+ column] }
                partial += coefficients.loadUnaligned(fromByteOffset: k &* stride, as: SIMD8<Float>.self) * column8
                k &+= 8
            }
            var total = partial.sum()
            while k < rows {
                total += x[k] * a[k &* width &+ column]
                k &+= 1
            }
            y[column] += total
            column &+= 1
        }
    }

    /// Replaces `z` by `softmax(z)`, `p_c = exp(z_c − m) / Σ_j exp(z_j − m)` with `m = max z`,
    /// and returns `log Σ_j exp(z_j)` (so the cross-entropy of class y is `lse − z_y`, computed
    /// from the logits before they are overwritten).
    @inline(__always)
    @discardableResult
    static func softmax(_ z: UnsafeMutablePointer<Float>, count: Int) -> Float {
        var largest = -Float.infinity
        for lane in 0..<count { largest = max(largest, z[lane]) }
        var total: Float = 0
        for lane in 0..<count {
            let value = expf(z[lane] - largest)
            z[lane] = value
            total += value
        }
        let inverse = 1 / total
        for lane in 0..<count { z[lane] *= inverse }
        return largest + logf(total)
    }
}

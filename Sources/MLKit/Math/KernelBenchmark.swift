import Foundation

/// Not API: timings of the internal math kernels, for the `MLKitProbe` speed probe and the
/// Benchmarks package. Its names and results may change in any release.
public enum _KernelBenchmark {
    /// Single-core GFLOP/s of an n×n×n matrix product, through BLAS `sgemm` or the SIMD kernel.
    /// - Parameters:
    ///   - size: The matrix size n.
    ///   - useBLAS: `true` for `cblas_sgemm`, `false` for ``SparseKernels``' SIMD kernel.
    ///   - repetitions: Products to time; the best is reported.
    /// - Returns: Billions of floating-point operations per second.
    public static func matrixProductGFLOPS(size: Int, useBLAS: Bool, repetitions: Int = 5) -> Double {
        DenseMath.setThreadCount(1)
        var generator = SplitMix64(seed: 1)
        let a = (0..<(size * size)).map { _ in generator.nextFloat() - 0.5 }
        let b = (0..<(size * size)).map { _ in generator.nextFloat() - 0.5 }
        var c = [Float](repeating: 0, count: size * size)
        let seconds = best(of: repetitions) {
            c.withUnsafeMutableBufferPointer { c in
                if useBLAS {
                    DenseMath.gemm(m: size, n: size, k: size, a: a, lda: size, b: b, ldb: size, c: c.baseAddress!, ldc: size)
                } else {
                    SparseKernels.multiplyAccumulate(m: size, n: size, k: size, a: a, b: b, c: c.baseAddress!)
                }
            }
        }
        return 2 * Double(size * size * size) / seconds / 1e9
    }

    /// Nanoseconds per document to accumulate a sparse document's class scores from a
    /// feature-major weight matrix, by SIMD row accumulation or by one `cblas_saxpy` per non-zero.
    /// Feature indices follow a Zipf distribution, as words in text do.
    /// - Parameters:
    ///   - features: Rows of the weight matrix.
    ///   - classes: Columns (labels).
    ///   - nonzeros: Non-zero features per document.
    ///   - useBLAS: `true` for one `saxpy` per non-zero, `false` for the SIMD kernel.
    /// - Returns: The best nanoseconds per document over five rounds of 20,000 documents.
    public static func sparseScoresNanoseconds(features: Int, classes: Int, nonzeros: Int, useBLAS: Bool) -> Double {
        DenseMath.setThreadCount(1)
        var generator = SplitMix64(seed: 2)
        let weights = (0..<(features * classes)).map { _ in generator.nextFloat() - 0.5 }
        let documents = 20_000
        // The documents' indices one after another, as a batch of sparse vectors holds them:
        // document d is `indices[starts[d] ..< starts[d + 1]]`.
        var indices: [Int32] = []
        var starts = [0]
        for _ in 0..<documents {
            // Word frequencies are Zipfian: draw indices log-uniformly (Zipf with s = 1).
            indices += Set((0..<nonzeros).map { _ in
                Int32(min(features - 1, Int(Foundation.exp(Double(generator.nextFloat()) * Foundation.log(Double(features))))))
            }).sorted()
            starts.append(indices.count)
        }
        let values = [Float](repeating: 1, count: indices.count)
        var scores = [Float](repeating: 0, count: classes)
        var sink: Float = 0
        let seconds = best(of: 5) {
            weights.withUnsafeBufferPointer { weights in
                scores.withUnsafeMutableBufferPointer { scores in
                    values.withUnsafeBufferPointer { values in
                        indices.withUnsafeBufferPointer { indices in
                            for document in 0..<documents {
                                let range = starts[document] ..< starts[document + 1]
                                for lane in 0..<classes { scores[lane] = 0 }
                                if useBLAS {
                                    for position in range {
                                        DenseMath.axpy(count: classes, alpha: values[position],
                                                       x: weights.baseAddress! + Int(indices[position]) * classes,
                                                       y: scores.baseAddress!)
                                    }
                                } else {
                                    SparseKernels.accumulateRows(indices: UnsafeBufferPointer(rebasing: indices[range]),
                                                                 values: UnsafeBufferPointer(rebasing: values[range]),
                                                                 weights: weights.baseAddress!, classes: classes,
                                                                 into: scores.baseAddress!)
                                }
                                sink += scores[0]
                            }
                        }
                    }
                }
            }
        }
        precondition(sink.isFinite)
        return seconds / Double(documents) * 1e9
    }

    /// The fastest of `repetitions` timings of `body`, in seconds.
    static func best(of repetitions: Int, _ body: () -> Void) -> Double {
        let clock = ContinuousClock()
        var fastest = Double.infinity
        for _ in 0..<max(1, repetitions) {
            let elapsed = clock.measure(body)
            fastest = min(fastest, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        }
        return fastest
    }
}

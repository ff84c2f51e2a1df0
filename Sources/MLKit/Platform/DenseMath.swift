#if canImport(Accelerate)
internal import Accelerate
#else
internal import CBLAS
#endif

/// Dense single-precision math through CBLAS: OpenBLAS on Linux, Accelerate on Apple systems.
///
/// Matrices are row-major. Use these where the shapes are dense and large enough to pay
/// for a library call (batched forward and backward passes); the sparse shapes of linear
/// text classifiers go through ``SparseKernels``, which `docs/benchmarks.md` shows are
/// several times faster there.
enum DenseMath {
    /// `C = alpha * op(A) * op(B) + beta * C`, with `op(A)` m×k, `op(B)` k×n and C m×n.
    static func gemm(transposeA: Bool = false, transposeB: Bool = false, m: Int, n: Int, k: Int,
                     alpha: Float = 1, a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>, ldb: Int,
                     beta: Float = 0, c: UnsafeMutablePointer<Float>, ldc: Int) {
        cblas_sgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans, transposeB ? CblasTrans : CblasNoTrans,
                    Int32(m), Int32(n), Int32(k), alpha, a, Int32(lda), b, Int32(ldb), beta, c, Int32(ldc))
    }

    /// `y = alpha * op(A) * x + beta * y`, with A m×n.
    static func gemv(transpose: Bool = false, m: Int, n: Int, alpha: Float = 1, a: UnsafePointer<Float>, lda: Int,
                     x: UnsafePointer<Float>, beta: Float = 0, y: UnsafeMutablePointer<Float>) {
        cblas_sgemv(CblasRowMajor, transpose ? CblasTrans : CblasNoTrans, Int32(m), Int32(n), alpha, a, Int32(lda),
                    x, 1, beta, y, 1)
    }

    /// `y += alpha * x`, over `count` elements.
    static func axpy(count: Int, alpha: Float, x: UnsafePointer<Float>, y: UnsafeMutablePointer<Float>) {
        cblas_saxpy(Int32(count), alpha, x, 1, y, 1)
    }

    /// The dot product of `x` and `y`, over `count` elements.
    static func dot(count: Int, _ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>) -> Float {
        cblas_sdot(Int32(count), x, 1, y, 1)
    }

    /// Limits BLAS to `count` threads, so that mlkit's own threads and BLAS's do not
    /// oversubscribe the cores.
    static func setThreadCount(_ count: Int) {
        #if !canImport(Accelerate)
        openblas_set_num_threads(Int32(count))
        #endif
    }
}

#ifndef MLKIT_CBLAS_SHIM_H
#define MLKIT_CBLAS_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // RTLD_DEFAULT
#endif
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
// Debian's libopenblas-dev puts cblas.h under the openblas-pthread include folder that
// pkg-config reports; the CBLAS interface is the same one Accelerate offers on Apple systems.
#include <cblas.h>
void openblas_set_num_threads(int num_threads);

// Runs every later OpenBLAS call on its calling thread, then stops OpenBLAS's worker threads.
// The pthreads build of OpenBLAS starts one worker per extra core when it loads, and each spins
// (sched_yield) for 2^28 cycles, about 0.1 s, before it sleeps. `blas_thread_shutdown_` is the
// function OpenBLAS's own fork handler calls; it is looked up rather than linked because builds
// without threads (Debian's libopenblas0-serial) do not have it. With one thread, OpenBLAS never
// starts the workers again.
static inline void mlkit_blas_use_calling_thread_only(void) {
    openblas_set_num_threads(1);
    int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
    if (shutdown) shutdown();
}

// Not BLAS, but C: asks the processor to fetch the cache line at `address` for reading, since
// Swift has no prefetch intrinsic. The sparse kernels use it to start a document's weight-row
// misses all at once.
static inline void mlkit_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

// Not BLAS either: lets glibc's allocator serve blocks of up to 1 GiB from its heaps, and keep
// freed memory for the next allocations instead of returning it to the system (up to 1 GiB at
// the top of a heap, with 64 MiB to spare). By default a block above 32 MiB (a weight matrix) is
// mapped fresh and unmapped when freed, and freed memory at the top of the heap above 128 KiB is
// returned, so every new block page-faults over all its pages again. Returns 1 when all three
// settings took.
static inline int mlkit_reuse_freed_memory(void) {
#ifdef __GLIBC__
    return mallopt(M_MMAP_THRESHOLD, 1 << 30) && mallopt(M_TOP_PAD, 64 << 20)
        && mallopt(M_TRIM_THRESHOLD, 1 << 30);
#else
    return 0;
#endif
}
// Not BLAS either: asks the kernel to back the whole 2 MiB pages inside [address, address +
// bytes) with transparent huge pages, where it is set to do so on request (the `madvise` mode of
// /sys/kernel/mm/transparent_hugepage/enabled). Pages not yet touched get huge pages on their
// first write; pages already touched only when khugepaged collapses them. Advice: it changes no
// content, and a kernel that refuses it changes nothing. Returns 1 when the kernel took it.
static inline int mlkit_advise_huge_pages(void *address, size_t bytes) {
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t start = ((uintptr_t)address + huge - 1) & ~(huge - 1);
    const uintptr_t end = ((uintptr_t)address + bytes) & ~(huge - 1);
    return end > start && madvise((void *)start, end - start, MADV_HUGEPAGE) == 0;
#else
    return 0;
#endif
}
// Not BLAS either: the two sparse kernels of linear classification (see SparseKernels.swift) and
// the SVM solver's lane step (LaneStep in DualCoordinateDescent.swift) in 256-bit AVX, for
// processors that have it. The Swift module is compiled for the baseline x86-64 target, whose
// SIMD types become 128-bit SSE. Each lane computes what the Swift code computes, a multiply and
// then an add, in the same order; AVX has no fused multiply-add that could contract them, so the
// results are bit-identical to the Swift code's.
#if defined(__x86_64__)
// No contraction of a multiply and an add into one fused operation, even when the build targets a
// processor with FMA: the Swift kernels round after each.
#pragma STDC FP_CONTRACT OFF
#include <immintrin.h>
#include <cpuid.h>
#include <stdint.h>

// 1 when the processor has AVX and the operating system saves the 256-bit registers.
static inline int mlkit_has_avx(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_AVX) || !(c & bit_OSXSAVE)) return 0;
    unsigned low, high;
    __asm__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    return (low & 6) == 6;
}

// scores[0 ..< 8·full + 4·half] += Σ_k values[k] · weights[indices[k]·rowLength ..< …], with the
// sums in registers: `full` vectors of 8 lanes, then one of 4 when `half`. With `tail` (1 to 3),
// also the last `tail` of the 4 lanes at `tailOffset`, and only those are stored: the vector's
// other lanes belong to the other vectors, or, when the panel has fewer than 4 lanes, to the
// previous panel, which has already stored its sums there, so that they would be counted twice.
__attribute__((target("avx"), always_inline))
static inline void mlkit_avx_accumulate_panel(const int32_t *indices, const float *values, long count,
                                              const float *weights, long rowLength, float *scores,
                                              const int full, const int half, const int tail, const long tailOffset) {
    __m256 sums[8];
    __m128 halfSum = _mm_setzero_ps(), tailSum = _mm_setzero_ps();
    for (int j = 0; j < full; j++) sums[j] = _mm256_loadu_ps(scores + 8 * j);
    if (half) halfSum = _mm_loadu_ps(scores + 8 * full);
    if (tail) tailSum = _mm_loadu_ps(scores + tailOffset);
    for (long k = 0; k < count; k++) {
        const float *row = weights + (long)indices[k] * rowLength;
        const __m256 value = _mm256_set1_ps(values[k]);
        for (int j = 0; j < full; j++) sums[j] = _mm256_add_ps(sums[j], _mm256_mul_ps(value, _mm256_loadu_ps(row + 8 * j)));
        if (half) halfSum = _mm_add_ps(halfSum, _mm_mul_ps(_mm256_castps256_ps128(value), _mm_loadu_ps(row + 8 * full)));
        if (tail) tailSum = _mm_add_ps(tailSum, _mm_mul_ps(_mm256_castps256_ps128(value), _mm_loadu_ps(row + tailOffset)));
    }
    for (int j = 0; j < full; j++) _mm256_storeu_ps(scores + 8 * j, sums[j]);
    if (half) _mm_storeu_ps(scores + 8 * full, halfSum);
    if (tail) {
        float lanes[4];
        _mm_storeu_ps(lanes, tailSum);
        for (int j = 4 - tail; j < 4; j++) scores[tailOffset + j] = lanes[j];
    }
}

// scores[0 ..< classes] += Σ_k values[k] · W[indices[k], :], W feature-major with rows of
// `classes` floats (at least 4): panels of 64 lanes, then one pass over the document for the rest,
// in vectors of 8 lanes, one of 4, and for the last 1 to 3 lanes the 4 lanes that end the row.
__attribute__((target("avx")))
static inline void mlkit_avx_accumulate_rows(const int32_t *indices, const float *values, long count,
                                             const float *weights, long classes, float *scores) {
    long lane = 0;
    for (; classes - lane >= 64; lane += 64)
        mlkit_avx_accumulate_panel(indices, values, count, weights + lane, classes, scores + lane, 8, 0, 0, 0);
    const long rest = classes - lane;
    const int tail = (int)(rest % 4);
    const float *w = weights + lane;
    float *s = scores + lane;
#define MLKIT_HALF(full, half) \
    if (tail) mlkit_avx_accumulate_panel(indices, values, count, w, classes, s, full, half, tail, rest - 4); \
    else mlkit_avx_accumulate_panel(indices, values, count, w, classes, s, full, half, 0, 0);
#define MLKIT_PANEL(full) \
    case full: \
        if (rest % 8 >= 4) { MLKIT_HALF(full, 1) } else { MLKIT_HALF(full, 0) } \
        break;
    switch (rest / 8) {
        MLKIT_PANEL(0) MLKIT_PANEL(1) MLKIT_PANEL(2) MLKIT_PANEL(3)
        MLKIT_PANEL(4) MLKIT_PANEL(5) MLKIT_PANEL(6) MLKIT_PANEL(7)
    }
#undef MLKIT_PANEL
#undef MLKIT_HALF
}

// W[indices[k], :] += (scale · values[k]) · gradient over a document's features.
__attribute__((target("avx")))
static inline void mlkit_avx_scatter_update(const int32_t *indices, const float *values, long count,
                                            const float *gradient, float scale, long classes, float *weights) {
    const long full = classes / 8, half = classes % 8 >= 4, singles = classes % 4;
    for (long k = 0; k < count; k++) {
        float *row = weights + (long)indices[k] * classes;
        const float factor = scale * values[k];
        const __m256 factors = _mm256_set1_ps(factor);
        long lane = 0;
        for (; lane < 8 * full; lane += 8)
            _mm256_storeu_ps(row + lane, _mm256_add_ps(_mm256_loadu_ps(row + lane),
                                                       _mm256_mul_ps(factors, _mm256_loadu_ps(gradient + lane))));
        if (half) {
            _mm_storeu_ps(row + lane, _mm_add_ps(_mm_loadu_ps(row + lane),
                                                 _mm_mul_ps(_mm256_castps256_ps128(factors), _mm_loadu_ps(gradient + lane))));
            lane += 4;
        }
        for (long single = 0; single < singles; single++, lane++) row[lane] = row[lane] + factor * gradient[lane];
    }
}
// The step of one row in every lane of the dual coordinate descent (LaneStep.runPortably in
// DualCoordinateDescent.swift), eight lanes at a time, for the first `lanes` lanes (a multiple of
// 8; the caller takes the rest in Swift). Every lane computes exactly what the Swift loop
// computes, in the same order, and Swift's min and max are kept by explicit comparisons
// (`min(x, y)` is `y < x ? y : x`, `max(x, y)` is `y >= x ? y : x`). A lane whose row is inactive
// gets a step of 0; a lane the row leaves (shrinking) gets its flag cleared, and `activeRows` and
// `*activeLanes` drop by one. Returns 1 if some lane's dual variable moved.
__attribute__((target("avx")))
static inline int mlkit_avx_dual_lane_steps(long lanes, const float *margins, int32_t label,
                                            const int32_t *positiveClasses, const float *positiveDiagonal,
                                            const float *negativeDiagonal, float *alpha, uint8_t *active,
                                            const float *previousMax, float *passMax, float *passMin,
                                            float curvatureBase, float sole, float *steps, long *activeRows,
                                            int32_t *activeLanes) {
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f), minusOne = _mm256_set1_ps(-1.0f);
    const __m256 labels = _mm256_set1_ps((float)label), soles = _mm256_set1_ps(sole);
    const __m256 curvatures = _mm256_set1_ps(curvatureBase), smallest = _mm256_set1_ps(1e-12f);
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    int moved = 0;
    long lane = 0;
    for (; lane + 8 <= lanes; lane += 8) {
        uint64_t flags;
        __builtin_memcpy(&flags, active + lane, 8);
        if (flags == 0) {
            _mm256_storeu_ps(steps + lane, zero);
            continue;
        }
        // The active flags, widened from bytes to lane masks.
        const __m128i bytes = _mm_cmpeq_epi8(_mm_cvtsi64_si128((long long)flags), _mm_setzero_si128());
        const __m256 inactive = _mm256_castsi256_ps(_mm256_insertf128_si256(
            _mm256_castsi128_si256(_mm_cvtepi8_epi32(bytes)), _mm_cvtepi8_epi32(_mm_srli_si128(bytes, 4)), 1));
        const __m256 isActive = _mm256_andnot_ps(inactive, _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
        // Classes are below 2^24, so their float values compare exactly.
        const __m256 positive = _mm256_cmp_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(positiveClasses + lane))),
                                              labels, _CMP_EQ_OQ);
        const __m256 sign = _mm256_blendv_ps(minusOne, one, positive);
        const __m256 diagonal = _mm256_blendv_ps(_mm256_loadu_ps(negativeDiagonal + lane),
                                                 _mm256_loadu_ps(positiveDiagonal + lane), positive);
        const __m256 old = _mm256_loadu_ps(alpha + lane);
        const __m256 gradient = _mm256_add_ps(_mm256_sub_ps(_mm256_mul_ps(sign, _mm256_loadu_ps(margins + lane)), one),
                                              _mm256_mul_ps(old, _mm256_add_ps(diagonal, soles)));
        const __m256 atZero = _mm256_cmp_ps(old, zero, _CMP_EQ_OQ);
        const __m256 shrink = _mm256_and_ps(_mm256_and_ps(isActive, atZero),
                                            _mm256_cmp_ps(gradient, _mm256_loadu_ps(previousMax + lane), _CMP_GT_OQ));
        const __m256 clipped = _mm256_blendv_ps(gradient, zero, _mm256_cmp_ps(zero, gradient, _CMP_LT_OQ));
        const __m256 projected = _mm256_blendv_ps(gradient, clipped, atZero);
        const __m256 updating = _mm256_andnot_ps(shrink, isActive);
        const __m256 highest = _mm256_loadu_ps(passMax + lane), lowest = _mm256_loadu_ps(passMin + lane);
        _mm256_storeu_ps(passMax + lane, _mm256_blendv_ps(highest, projected,
                                                          _mm256_and_ps(updating, _mm256_cmp_ps(projected, highest, _CMP_GE_OQ))));
        _mm256_storeu_ps(passMin + lane, _mm256_blendv_ps(lowest, projected,
                                                          _mm256_and_ps(updating, _mm256_cmp_ps(projected, lowest, _CMP_LT_OQ))));
        const __m256 moving = _mm256_and_ps(updating, _mm256_cmp_ps(_mm256_and_ps(projected, magnitude), smallest, _CMP_GT_OQ));
        const __m256 candidate = _mm256_sub_ps(old, _mm256_div_ps(gradient, _mm256_add_ps(curvatures, diagonal)));
        const __m256 updated = _mm256_blendv_ps(candidate, zero, _mm256_cmp_ps(zero, candidate, _CMP_GE_OQ));
        const __m256 next = _mm256_blendv_ps(old, updated, moving);
        _mm256_storeu_ps(alpha + lane, next);
        _mm256_storeu_ps(steps + lane, _mm256_and_ps(moving, _mm256_mul_ps(_mm256_sub_ps(next, old), sign)));
        moved |= _mm256_movemask_ps(moving) != 0;
        for (int shrunk = _mm256_movemask_ps(shrink); shrunk != 0; shrunk &= shrunk - 1) {
            const int bit = __builtin_ctz(shrunk);
            active[lane + bit] = 0;
            *activeLanes -= 1;
            activeRows[lane + bit] -= 1;
        }
    }
    return moved;
}

// Not BLAS either: the exponentials and logarithms of probability calibration
// (ProbabilityCalibration.swift), four doubles at a time with AVX2 and fused multiply-adds, for
// processors that have them. Their results are within a few units in the last place of the C
// library's `exp` and `log1p` (at most 1 and 3 over 80 million arguments spread over their
// domains), not bit-identical to them: the calibration's fitted parameters, returned
// as floats, may differ in their last bit from those of a processor without AVX2.

// 1 when the processor has AVX2 and FMA and the operating system saves the 256-bit registers.
static inline int mlkit_has_avx2_fma(void) {
    unsigned a, b, c, d;
    if (!mlkit_has_avx() || !__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_FMA)) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & bit_AVX2) != 0;
}

// e^x for x ≤ 0 in each lane: x = k·ln 2 + r with |r| ≤ ln 2 / 2 (ln 2 in two parts, so that
// k·ln 2 is exact), e^r = 1 + r·T(r) with T(r) = Σ_{i=0}^{12} r^i / (i + 1)!, the Taylor
// polynomial of degree 13 (truncated below 10^-17 on that interval), times 2^k built in the
// exponent's bits. Below -708, where e^x leaves the normal doubles, the result is 0. T is
// evaluated by Estrin's scheme (pairs, then pairs of pairs with r², r⁴ and r⁸), whose chain of
// dependent operations is 4 fused multiply-adds long where Horner's rule is 13: the calibration's
// passes are bound by that latency. The last step, 1 + r·T, adds T's few units of rounding only
// after scaling them by |r| ≤ 0.35, so the result stays within 1 unit in the last place of the C
// library's `exp` over [-708, 0], as with Horner's rule.
__attribute__((target("avx2,fma"), always_inline))
static inline __m256d mlkit_avx2_exp_nonpositive(__m256d x) {
    const __m256d floor = _mm256_set1_pd(-708.0);
    const __m256d underflow = _mm256_cmp_pd(x, floor, _CMP_LT_OQ);
    x = _mm256_max_pd(x, floor);
    const __m256d k = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(6.93147180369123816490e-01), x);
    r = _mm256_fnmadd_pd(k, _mm256_set1_pd(1.90821492927058770002e-10), r);
    // 1/1!, 1/2!, ..., 1/13!: T's coefficients.
    static const double t[13] = {
        1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0, 1.0 / 362880.0,
        1.0 / 3628800.0, 1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0};
#define MLKIT_T(i) _mm256_set1_pd(t[i])
    const __m256d r2 = _mm256_mul_pd(r, r), r4 = _mm256_mul_pd(r2, r2), r8 = _mm256_mul_pd(r4, r4);
    const __m256d t01 = _mm256_fmadd_pd(MLKIT_T(1), r, MLKIT_T(0)), t23 = _mm256_fmadd_pd(MLKIT_T(3), r, MLKIT_T(2));
    const __m256d t45 = _mm256_fmadd_pd(MLKIT_T(5), r, MLKIT_T(4)), t67 = _mm256_fmadd_pd(MLKIT_T(7), r, MLKIT_T(6));
    const __m256d t89 = _mm256_fmadd_pd(MLKIT_T(9), r, MLKIT_T(8)), t1011 = _mm256_fmadd_pd(MLKIT_T(11), r, MLKIT_T(10));
    const __m256d t03 = _mm256_fmadd_pd(t23, r2, t01), t47 = _mm256_fmadd_pd(t67, r2, t45);
    const __m256d t811 = _mm256_fmadd_pd(t1011, r2, t89);
    const __m256d t07 = _mm256_fmadd_pd(t47, r4, t03), t812 = _mm256_fmadd_pd(MLKIT_T(12), r4, t811);
#undef MLKIT_T
    const __m256d p = _mm256_fmadd_pd(_mm256_fmadd_pd(t812, r8, t07), r, _mm256_set1_pd(1.0));
    const __m256i exponent = _mm256_slli_epi64(
        _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(k)), _mm256_set1_epi64x(1023)), 52);
    return _mm256_andnot_pd(underflow, _mm256_mul_pd(p, _mm256_castsi256_pd(exponent)));
}

// log(1 + e) for 0 ≤ e ≤ 1 in each lane, given inverse = 1 / (1 + e) (which Platt's terms need
// anyway): u = 1 + e rounded, with c = e − (u − 1) the part of e lost in the rounding, is m·2^j
// with m in [√2/2, √2]; log m = 2 atanh(s) = 2s·(1 + w·R(w)), s = (m − 1)/(m + 1), w = s² ≤
// 0.0295, R(w) = Σ_{j=0}^{9} w^j / (2j + 3) (the series truncated below 10^-18, by Estrin's
// scheme as in mlkit_avx2_exp_nonpositive), and log(1 + e) = j·ln 2 + log m + c·inverse. A tiny e
// gives u = 1 and the result c = e, as log1p does. Within 3 units in the last place of the C
// library's `log1p` over [0, 1].
__attribute__((target("avx2,fma"), always_inline))
static inline __m256d mlkit_avx2_log1p_unit(__m256d e, __m256d inverse) {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d u = _mm256_add_pd(one, e);
    const __m256d lost = _mm256_sub_pd(e, _mm256_sub_pd(u, one));
    const __m256d halve = _mm256_cmp_pd(u, _mm256_set1_pd(1.4142135623730951), _CMP_GT_OQ);
    const __m256d m = _mm256_blendv_pd(u, _mm256_mul_pd(u, _mm256_set1_pd(0.5)), halve);
    const __m256d s = _mm256_div_pd(_mm256_sub_pd(m, one), _mm256_add_pd(m, one));
    const __m256d w = _mm256_mul_pd(s, s);
#define MLKIT_R(j) _mm256_set1_pd(1.0 / (2 * (j) + 3))
    const __m256d w2 = _mm256_mul_pd(w, w), w4 = _mm256_mul_pd(w2, w2), w8 = _mm256_mul_pd(w4, w4);
    const __m256d r01 = _mm256_fmadd_pd(MLKIT_R(1), w, MLKIT_R(0)), r23 = _mm256_fmadd_pd(MLKIT_R(3), w, MLKIT_R(2));
    const __m256d r45 = _mm256_fmadd_pd(MLKIT_R(5), w, MLKIT_R(4)), r67 = _mm256_fmadd_pd(MLKIT_R(7), w, MLKIT_R(6));
    const __m256d r89 = _mm256_fmadd_pd(MLKIT_R(9), w, MLKIT_R(8));
#undef MLKIT_R
    const __m256d r03 = _mm256_fmadd_pd(r23, w2, r01), r47 = _mm256_fmadd_pd(r67, w2, r45);
    const __m256d series = _mm256_fmadd_pd(r89, w8, _mm256_fmadd_pd(r47, w4, r03));
    const __m256d q = _mm256_fmadd_pd(series, w, one);
    const __m256d logM = _mm256_mul_pd(_mm256_add_pd(s, s), q);
    const __m256d scale = _mm256_and_pd(halve, _mm256_set1_pd(0.69314718055994530942));
    return _mm256_add_pd(_mm256_add_pd(scale, logM), _mm256_mul_pd(lost, inverse));
}

// The lanes of a group of four that starts `remaining` values before the end: all of them, or
// the first `remaining`, as a mask for masked loads and for dropping the rest's terms.
__attribute__((target("avx2"), always_inline))
static inline __m256i mlkit_avx2_tail_mask(long remaining) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(remaining), _mm256_setr_epi64x(0, 1, 2, 3));
}

// The sum of four lanes, added as (0 + 1) + (2 + 3).
__attribute__((target("avx2"), always_inline))
static inline double mlkit_avx2_sum_lanes(__m256d sums) {
    double lanes[4];
    _mm256_storeu_pd(lanes, sums);
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

// Platt's loss with its gradient and Hessian over n decision values (plattTerms in
// ProbabilityCalibration.swift): sums[0 ..< 6] = Σ loss, Σ g₁, Σ g₂, Σ h₁₁, Σ h₂₂, Σ h₂₁ (the
// Hessian without its shift). Value i goes to lane i % 4; the lanes are added last.
__attribute__((target("avx2,fma")))
static inline void mlkit_avx2_platt_terms(const double *values, const double *targets, long n, double a,
                                          double b, double *sums) {
    const __m256d slope = _mm256_set1_pd(a), offset = _mm256_set1_pd(b), one = _mm256_set1_pd(1.0);
    const __m256d zero = _mm256_setzero_pd(), sign = _mm256_set1_pd(-0.0);
    __m256d total[6] = {zero, zero, zero, zero, zero, zero};
    for (long i = 0; i < n; i += 4) {
        const __m256i mask = mlkit_avx2_tail_mask(n - i);
        const __m256d keep = _mm256_castsi256_pd(mask);
        const __m256d f = _mm256_maskload_pd(values + i, mask), t = _mm256_maskload_pd(targets + i, mask);
        const __m256d z = _mm256_add_pd(_mm256_mul_pd(f, slope), offset);
        const __m256d e = mlkit_avx2_exp_nonpositive(_mm256_or_pd(z, sign));  // e^(−|z|)
        const __m256d inverse = _mm256_div_pd(one, _mm256_add_pd(one, e));
        const __m256d positive = _mm256_cmp_pd(z, zero, _CMP_GE_OQ);
        const __m256d weight = _mm256_blendv_pd(_mm256_sub_pd(t, one), t, positive);
        const __m256d loss = _mm256_add_pd(_mm256_mul_pd(weight, z), mlkit_avx2_log1p_unit(e, inverse));
        const __m256d p = _mm256_blendv_pd(inverse, _mm256_mul_pd(e, inverse), positive);
        const __m256d d2 = _mm256_mul_pd(_mm256_mul_pd(e, inverse), inverse);
        const __m256d d1 = _mm256_sub_pd(t, p);
        const __m256d terms[6] = {loss, _mm256_mul_pd(f, d1), d1, _mm256_mul_pd(_mm256_mul_pd(f, f), d2), d2,
                                  _mm256_mul_pd(f, d2)};
        for (int k = 0; k < 6; k++) total[k] = _mm256_add_pd(total[k], _mm256_and_pd(terms[k], keep));
    }
    for (int k = 0; k < 6; k++) sums[k] = mlkit_avx2_sum_lanes(total[k]);
}

// The moments of softmax(β·s) over one row of `classes` scores (temperatureSlope in
// ProbabilityCalibration.swift): moments[0 ..< 3] = Σ w, Σ w·s, Σ w·s² with w = e^(β·s − max β·s),
// for β ≥ 0. Lanes as in mlkit_avx2_platt_terms.
__attribute__((target("avx2,fma")))
static inline void mlkit_avx2_softmax_moments(const float *scores, long classes, double beta, double *moments) {
    const __m256d scale = _mm256_set1_pd(beta), zero = _mm256_setzero_pd();
    // max β·s is β·max s (β ≥ 0, and rounding keeps the order), the maximum taken eight floats
    // at a time: one by one, its chain of comparisons took about a sixth of the kernel's time.
    __m256 highest = _mm256_set1_ps(-__builtin_inff());
    long lane = 0;
    for (; lane + 8 <= classes; lane += 8) highest = _mm256_max_ps(_mm256_loadu_ps(scores + lane), highest);
    float lanes[8], largest = -__builtin_inff();
    _mm256_storeu_ps(lanes, highest);
    for (int k = 0; k < 8; k++) largest = lanes[k] > largest ? lanes[k] : largest;
    for (; lane < classes; lane++) largest = scores[lane] > largest ? scores[lane] : largest;
    const __m256d top = _mm256_set1_pd(beta * (double)largest);
    __m256d total[3] = {zero, zero, zero};
    for (long i = 0; i < classes; i += 4) {
        const __m256i mask = mlkit_avx2_tail_mask(classes - i);
        // The same lanes of four floats: the low halves of the four 64-bit lanes.
        const __m128i floatMask = _mm256_castsi256_si128(
            _mm256_permutevar8x32_epi32(mask, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
        const __m256d s = _mm256_cvtps_pd(_mm_maskload_ps(scores + i, floatMask));
        const __m256d w = _mm256_and_pd(
            mlkit_avx2_exp_nonpositive(_mm256_min_pd(_mm256_sub_pd(_mm256_mul_pd(scale, s), top), zero)),
            _mm256_castsi256_pd(mask));
        const __m256d ws = _mm256_mul_pd(w, s);
        total[0] = _mm256_add_pd(total[0], w);
        total[1] = _mm256_add_pd(total[1], ws);
        total[2] = _mm256_add_pd(total[2], _mm256_mul_pd(ws, s));
    }
    for (int k = 0; k < 3; k++) moments[k] = mlkit_avx2_sum_lanes(total[k]);
}

// Not BLAS either: the model file's CRC-32 (CRC32.swift) by carry-less multiplication, for
// processors with PCLMULQDQ and SSE4.1, after Gopal et al., "Fast CRC Computation for Generic
// Polynomials Using PCLMULQDQ Instruction" (Intel, 2009), in its bit-reflected form. Four 128-bit
// lanes each fold 64 bytes ahead (multiplying by x^(512±32) mod P), then fold into one (x^(128±32)
// mod P), which is reduced to 64 bits (x^64 mod P) and to 32 by Barrett's reduction with
// μ = ⌊x^64 / P⌋. Each constant is bit-reflected (and those mod P shifted left by one), as the
// reflected products need; CRC32.swift derives them from P.

// 1 when the processor has PCLMULQDQ and SSE4.1.
static inline int mlkit_has_pclmul(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_PCLMUL) && (c & bit_SSE4_1);
}

// x folded 128 bits ahead by `distance` (two constants x^(d±32) mod P) onto the next 16 bytes.
__attribute__((target("pclmul"), always_inline))
static inline __m128i mlkit_crc32_fold_onto(__m128i x, __m128i distance, __m128i next) {
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, distance, 0x00), _mm_clmulepi64_si128(x, distance, 0x11)),
                         next);
}

// The CRC-32 register after `count` more bytes (the working value between the checksum's two
// inversions, which the table loop in CRC32.swift updates too), for `count` ≥ 64 and a multiple
// of 16. `constants` are, as 64-bit values: x^(512+32), x^(512−32), x^(128+32), x^(128−32) and
// x^64 mod P, P itself and μ (see above).
__attribute__((target("pclmul,sse4.1")))
static inline uint32_t mlkit_crc32_fold(uint32_t state, const uint8_t *bytes, long count, const uint64_t *constants) {
    const __m128i far = _mm_set_epi64x((long long)constants[1], (long long)constants[0]);
    const __m128i near = _mm_set_epi64x((long long)constants[3], (long long)constants[2]);
    const __m128i last = _mm_set_epi64x(0, (long long)constants[4]);
    const __m128i barrett = _mm_set_epi64x((long long)constants[6], (long long)constants[5]);
    const __m128i low32 = _mm_set_epi32(0, -1, 0, -1);
    __m128i lanes[4];
    for (int k = 0; k < 4; k++) lanes[k] = _mm_loadu_si128((const __m128i *)(bytes + 16 * k));
    lanes[0] = _mm_xor_si128(lanes[0], _mm_cvtsi32_si128((int)state));
    bytes += 64;
    count -= 64;
    for (; count >= 64; bytes += 64, count -= 64) {
        for (int k = 0; k < 4; k++) {
            lanes[k] = mlkit_crc32_fold_onto(lanes[k], far, _mm_loadu_si128((const __m128i *)(bytes + 16 * k)));
        }
    }
    __m128i x = lanes[0];
    for (int k = 1; k < 4; k++) x = mlkit_crc32_fold_onto(x, near, lanes[k]);
    for (; count >= 16; bytes += 16, count -= 16) x = mlkit_crc32_fold_onto(x, near, _mm_loadu_si128((const __m128i *)bytes));
    // 128 bits to 64, then to 32 bits followed by 32 zero bits.
    x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, near, 0x10));
    x = _mm_xor_si128(_mm_srli_si128(x, 4), _mm_clmulepi64_si128(_mm_and_si128(x, low32), last, 0x00));
    // Barrett: the quotient's low 32 bits times μ, then times P, cancel all but the remainder.
    __m128i quotient = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), barrett, 0x10), low32);
    x = _mm_xor_si128(x, _mm_clmulepi64_si128(quotient, barrett, 0x00));
    return (uint32_t)_mm_extract_epi32(x, 1);
}
#endif

#endif

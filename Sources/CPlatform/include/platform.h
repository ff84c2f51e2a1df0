#ifndef MLKIT_PLATFORM_H
#define MLKIT_PLATFORM_H
// What the core needs of the processor and the C library that Swift cannot express: a prefetch
// hint, glibc's allocator settings, the two sparse kernels of linear classification
// (SparseKernels.swift) in 256-bit AVX, and a linear-chain CRF's forward-backward pass
// (ForwardBackward.swift) in AVX2 with FMA, which the Swift module, compiled for baseline x86-64
// (128-bit SSE vectors), cannot emit. Each stays under the performance budget of
// docs/architecture.md.
#include <stdint.h>

// Asks the processor to fetch the cache line at `address` for reading. A hint: it changes no
// result.
static inline void mlkit_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

// Lets glibc's allocator serve blocks of up to 1 GiB from its heaps, and keep freed memory for
// the next allocations instead of returning it to the system (up to 1 GiB at the top of a heap,
// with 64 MiB to spare). By default a block above 32 MiB (a weight matrix) is mapped fresh and
// unmapped when freed, and freed memory at the top of the heap above 128 KiB is returned, so
// every new block page-faults over all its pages again. Returns 1 when all three settings took;
// 0 with another C library.
int mlkit_reuse_freed_memory(void);

// 1 when the processor has AVX and the operating system saves the 256-bit registers; 0 on other
// processors and architectures.
int mlkit_has_avx(void);

#if defined(__x86_64__)
// Each lane computes what the Swift kernels compute, a multiply and then an add, in the same
// order. AVX has no fused multiply-add, and contraction is off even when the build targets a
// processor with FMA, so the results are bit-identical to the Swift kernels' on every processor.
#pragma STDC FP_CONTRACT OFF
#include <immintrin.h>

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

// 1 when the processor has AVX2 and FMA and the operating system saves the 256-bit registers.
int mlkit_has_avx2_fma(void);

#include <math.h>
// The forward-backward pass of a linear-chain CRF (ForwardBackward.swift) over one
// sentence, eight floats at a time with AVX2 and fused multiply-adds, for processors that have
// them. Rows are padded to Lp, the label count L rounded up to 8, with zeros: the transition
// potentials M and their transpose (Lp × Lp), the start and end potentials, and the scratch rows.
// The results are not bit-identical to the Swift loops' (the fused multiply-adds round once, the
// exponential is a polynomial within 2 units in the last place of `expf`), but they are the same
// from one run to the next on one processor.

// e^x for x ≤ 0 in each of 8 float lanes: x = k·ln 2 + r, |r| ≤ ln 2 / 2, e^r by its Taylor
// polynomial of degree 6, times 2^k built in the exponent's bits; 0 below −87.
__attribute__((target("avx2,fma"), always_inline))
static inline __m256 mlkit_avx2_expf_nonpositive(__m256 x) {
    const __m256 floor = _mm256_set1_ps(-87.0f);
    const __m256 underflow = _mm256_cmp_ps(x, floor, _CMP_LT_OQ);
    x = _mm256_max_ps(x, floor);
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(exponent)));
}

__attribute__((target("avx2,fma"), always_inline))
static inline float mlkit_avx2_sum_floats(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

// out[0 ..< Lp] = Σ_{i < L} x[i] · rows[i·Lp ..< (i+1)·Lp], with the sums of up to 8 vectors (64
// lanes) in registers, a panel at a time.
__attribute__((target("avx2,fma"), always_inline))
static inline void mlkit_avx2_crf_combine_panel(const float *x, const float *rows, long L, long Lp, float *out, const int V) {
    __m256 sums[8];
    for (int v = 0; v < V; v++) sums[v] = _mm256_setzero_ps();
    for (long i = 0; i < L; i++) {
        const __m256 a = _mm256_set1_ps(x[i]);
        const float *row = rows + i * Lp;
        for (int v = 0; v < V; v++) sums[v] = _mm256_fmadd_ps(a, _mm256_loadu_ps(row + 8 * v), sums[v]);
    }
    for (int v = 0; v < V; v++) _mm256_storeu_ps(out + 8 * v, sums[v]);
}

__attribute__((target("avx2,fma")))
static inline void mlkit_avx2_crf_combine(const float *x, const float *rows, long L, long Lp, float *out) {
    long lane = 0;
    for (; Lp - lane >= 64; lane += 64) mlkit_avx2_crf_combine_panel(x, rows + lane, L, Lp, out + lane, 8);
    switch ((Lp - lane) / 8) {
    case 1: mlkit_avx2_crf_combine_panel(x, rows + lane, L, Lp, out + lane, 1); break;
    case 2: mlkit_avx2_crf_combine_panel(x, rows + lane, L, Lp, out + lane, 2); break;
    case 3: mlkit_avx2_crf_combine_panel(x, rows + lane, L, Lp, out + lane, 3); break;
    case 4: mlkit_avx2_crf_combine_panel(x, rows + lane, L, Lp, out + lane, 4); break;
    case 5: mlkit_avx2_crf_combine_panel(x, rows + lane, L, Lp, out + lane, 5); break;
    case 6: mlkit_avx2_crf_combine_panel(x, rows + lane, L, Lp, out + lane, 6); break;
    case 7: mlkit_avx2_crf_combine_panel(x, rows + lane, L, Lp, out + lane, 7); break;
    default: break;
    }
}

// One sentence of n tokens: scores (n × L, rows of L) in, marginals out; returns log Z. psi, alpha
// and beta are n × Lp scratch, scale n, work Lp. pairSums (Lp × Lp), when not NULL, gets
// Σ_t α_{t−1}[i] · ψ_t[j] β_t[j] / c_t added.
__attribute__((target("avx2,fma")))
static inline double mlkit_avx2_crf_forward_backward(float *scores, long n, long L, long Lp, const float *M, const float *Mt,
                                                     const float *startExp, const float *endExp, float *psi, float *alpha,
                                                     float *beta, float *scale, float *work, float *pairSums) {
    const long V = Lp / 8;
    double logZ = 0;
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (long t = 0; t < n; t++) {
        const float *row = scores + t * L;
        float top = row[0];
        for (long j = 1; j < L; j++) top = row[j] > top ? row[j] : top;
        logZ += top;
        const __m256 shift = _mm256_set1_ps(top);
        for (long v = 0; v < V; v++) {
            const __m256i used = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(L - 8 * v)), lanes);
            const __m256 s = _mm256_maskload_ps(row + 8 * v, used);
            const __m256 e = mlkit_avx2_expf_nonpositive(_mm256_sub_ps(s, shift));
            _mm256_storeu_ps(psi + t * Lp + 8 * v, _mm256_and_ps(e, _mm256_castsi256_ps(used)));
        }
    }
    // Forward.
    for (long t = 0; t < n; t++) {
        float *current = alpha + t * Lp;
        if (t == 0) {
            for (long v = 0; v < V; v++) _mm256_storeu_ps(current + 8 * v, _mm256_loadu_ps(startExp + 8 * v));
        } else {
            mlkit_avx2_crf_combine(alpha + (t - 1) * Lp, M, L, Lp, current);
        }
        __m256 total = _mm256_setzero_ps();
        for (long v = 0; v < V; v++) {
            const __m256 a = _mm256_mul_ps(_mm256_loadu_ps(current + 8 * v), _mm256_loadu_ps(psi + t * Lp + 8 * v));
            _mm256_storeu_ps(current + 8 * v, a);
            total = _mm256_add_ps(total, a);
        }
        const float sum = mlkit_avx2_sum_floats(total);
        scale[t] = sum;
        const __m256 inverse = _mm256_set1_ps(1.0f / sum);
        for (long v = 0; v < V; v++) _mm256_storeu_ps(current + 8 * v, _mm256_mul_ps(_mm256_loadu_ps(current + 8 * v), inverse));
    }
    const float *last = alpha + (n - 1) * Lp;
    __m256 closing = _mm256_setzero_ps();
    for (long v = 0; v < V; v++) closing = _mm256_fmadd_ps(_mm256_loadu_ps(last + 8 * v), _mm256_loadu_ps(endExp + 8 * v), closing);
    const float close = mlkit_avx2_sum_floats(closing);
    for (long t = 0; t < n; t++) logZ += log((double)scale[t]);
    logZ += log((double)close);
    // Backward.
    const __m256 inverseClose = _mm256_set1_ps(1.0f / close);
    for (long v = 0; v < V; v++)
        _mm256_storeu_ps(beta + (n - 1) * Lp + 8 * v, _mm256_mul_ps(_mm256_loadu_ps(endExp + 8 * v), inverseClose));
    for (long t = n - 1; t > 0; t--) {
        const __m256 inverse = _mm256_set1_ps(1.0f / scale[t]);
        for (long v = 0; v < V; v++) {
            const __m256 w = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(psi + t * Lp + 8 * v), _mm256_loadu_ps(beta + t * Lp + 8 * v)),
                                           inverse);
            _mm256_storeu_ps(work + 8 * v, w);
        }
        if (pairSums) {
            const float *previous = alpha + (t - 1) * Lp;
            for (long i = 0; i < L; i++) {
                const __m256 a = _mm256_set1_ps(previous[i]);
                float *sums = pairSums + i * Lp;
                for (long v = 0; v < V; v++)
                    _mm256_storeu_ps(sums + 8 * v, _mm256_fmadd_ps(a, _mm256_loadu_ps(work + 8 * v), _mm256_loadu_ps(sums + 8 * v)));
            }
        }
        mlkit_avx2_crf_combine(work, Mt, L, Lp, beta + (t - 1) * Lp);
    }
    // Marginals, in place of the scores.
    for (long t = 0; t < n; t++) {
        for (long j = 0; j < L; j++) scores[t * L + j] = alpha[t * Lp + j] * beta[t * Lp + j];
    }
    return logZ;
}
#endif

#endif

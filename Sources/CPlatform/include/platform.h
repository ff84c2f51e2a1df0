#ifndef MLKIT_PLATFORM_H
#define MLKIT_PLATFORM_H
// What the core needs of the processor and the C library that Swift cannot express: a prefetch
// hint, glibc's allocator settings, and the two sparse kernels of linear classification
// (SparseKernels.swift) in 256-bit AVX, which the Swift module, compiled for baseline x86-64
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
#endif

#endif

#ifndef MLKIT_CBLAS_SHIM_H
#define MLKIT_CBLAS_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // RTLD_DEFAULT
#endif
#include <dlfcn.h>
#include <malloc.h>
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

// Not BLAS either: lets glibc's allocator serve blocks of up to 1 GiB from its heaps, and keep up
// to 64 MiB of freed memory at the top of each heap for the next allocations. By default a block
// above 32 MiB (a weight matrix) is mapped fresh and unmapped when freed, so every new one
// page-faults over all its pages again. Returns 1 when both settings took.
static inline int mlkit_reuse_freed_memory(void) {
#ifdef __GLIBC__
    return mallopt(M_MMAP_THRESHOLD, 1 << 30) && mallopt(M_TOP_PAD, 64 << 20);
#else
    return 0;
#endif
}
// Not BLAS either: the two sparse kernels of linear classification (see SparseKernels.swift) in
// 256-bit AVX, for processors that have it. The Swift module is compiled for the baseline x86-64
// target, whose SIMD types become 128-bit SSE. Each lane computes what the Swift kernels
// compute, a multiply and then an add, in the same order; AVX has no fused multiply-add that
// could contract them, so the results are bit-identical to the Swift kernels'.
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
// sums in registers: `full` vectors of 8 lanes, then one of 4 when `half`.
__attribute__((target("avx"), always_inline))
static inline void mlkit_avx_accumulate_panel(const int32_t *indices, const float *values, long count,
                                              const float *weights, long rowLength, float *scores,
                                              const int full, const int half) {
    __m256 sums[8];
    __m128 halfSum = _mm_setzero_ps();
    for (int j = 0; j < full; j++) sums[j] = _mm256_loadu_ps(scores + 8 * j);
    if (half) halfSum = _mm_loadu_ps(scores + 8 * full);
    for (long k = 0; k < count; k++) {
        const float *row = weights + (long)indices[k] * rowLength;
        const __m256 value = _mm256_set1_ps(values[k]);
        for (int j = 0; j < full; j++) sums[j] = _mm256_add_ps(sums[j], _mm256_mul_ps(value, _mm256_loadu_ps(row + 8 * j)));
        if (half) halfSum = _mm_add_ps(halfSum, _mm_mul_ps(_mm256_castps256_ps128(value), _mm_loadu_ps(row + 8 * full)));
    }
    for (int j = 0; j < full; j++) _mm256_storeu_ps(scores + 8 * j, sums[j]);
    if (half) _mm_storeu_ps(scores + 8 * full, halfSum);
}

// scores[0 ..< classes] += Σ_k values[k] · W[indices[k], :], W feature-major with rows of
// `classes` floats: panels of 64 lanes, one of the rest rounded down to 4, and the last lanes
// one at a time.
__attribute__((target("avx")))
static inline void mlkit_avx_accumulate_rows(const int32_t *indices, const float *values, long count,
                                             const float *weights, long classes, float *scores) {
    long lane = 0;
    for (; classes - lane >= 64; lane += 64)
        mlkit_avx_accumulate_panel(indices, values, count, weights + lane, classes, scores + lane, 8, 0);
    const long rest = classes - lane;
    const float *w = weights + lane;
    float *s = scores + lane;
#define MLKIT_PANEL(full) \
    case full: \
        if (rest % 8 >= 4) mlkit_avx_accumulate_panel(indices, values, count, w, classes, s, full, 1); \
        else mlkit_avx_accumulate_panel(indices, values, count, w, classes, s, full, 0); \
        break;
    switch (rest / 8) {
        MLKIT_PANEL(0) MLKIT_PANEL(1) MLKIT_PANEL(2) MLKIT_PANEL(3)
        MLKIT_PANEL(4) MLKIT_PANEL(5) MLKIT_PANEL(6) MLKIT_PANEL(7)
    }
#undef MLKIT_PANEL
    for (lane = classes - rest % 4; lane < classes; lane++) {
        float sum = scores[lane];
        for (long k = 0; k < count; k++) sum = sum + values[k] * weights[(long)indices[k] * classes + lane];
        scores[lane] = sum;
    }
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

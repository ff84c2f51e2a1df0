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
#endif

#ifndef MLKIT_CBLAS_SHIM_H
#define MLKIT_CBLAS_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // RTLD_DEFAULT
#endif
#include <dlfcn.h>
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

#endif

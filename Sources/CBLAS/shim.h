#ifndef MLKIT_CBLAS_SHIM_H
#define MLKIT_CBLAS_SHIM_H
// Debian's libopenblas-dev puts cblas.h under the openblas-pthread include folder that
// pkg-config reports; the CBLAS interface is the same one Accelerate offers on Apple systems.
#include <cblas.h>
void openblas_set_num_threads(int num_threads);

// Not BLAS, but C: asks the processor to fetch the cache line at `address` for reading, since
// Swift has no prefetch intrinsic. The sparse kernels use it to start a document's weight-row
// misses all at once.
static inline void mlkit_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
#endif

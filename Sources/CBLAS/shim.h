#ifndef MLKIT_CBLAS_SHIM_H
#define MLKIT_CBLAS_SHIM_H
// Debian's libopenblas-dev puts cblas.h under the openblas-pthread include folder that
// pkg-config reports; the CBLAS interface is the same one Accelerate offers on Apple systems.
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
#endif

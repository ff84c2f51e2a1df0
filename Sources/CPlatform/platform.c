#include "platform.h"
#include <stdlib.h>  // __GLIBC__

#ifdef __GLIBC__
#include <malloc.h>

int mlkit_reuse_freed_memory(void) {
    return mallopt(M_MMAP_THRESHOLD, 1 << 30) && mallopt(M_TOP_PAD, 64 << 20) && mallopt(M_TRIM_THRESHOLD, 1 << 30);
}
#else
int mlkit_reuse_freed_memory(void) { return 0; }
#endif

#if defined(__x86_64__)
#include <cpuid.h>

int mlkit_has_avx(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_AVX) || !(c & bit_OSXSAVE)) return 0;
    unsigned low, high;
    __asm__("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    return (low & 6) == 6;
}
#else
int mlkit_has_avx(void) { return 0; }
#endif

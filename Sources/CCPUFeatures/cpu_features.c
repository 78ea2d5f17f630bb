#include "cpu_features.h"

#if defined(__x86_64__)
int sam_cpu_blas_kernel_level(void) {
    // __builtin_cpu_supports also checks that the OS saves the vector state (XGETBV).
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
        return 2;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
    return 0;
}
#else
int sam_cpu_blas_kernel_level(void) { return 0; }
#endif

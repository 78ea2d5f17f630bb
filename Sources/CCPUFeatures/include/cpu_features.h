#ifndef SAM_CPU_FEATURES_H
#define SAM_CPU_FEATURES_H

/// The widest OpenBLAS kernel family this CPU and its operating system run: 2 for SkylakeX's
/// (AVX-512 F, CD, BW, DQ, VL), 1 for Haswell's (AVX2 and FMA), 0 for neither (or not x86-64).
int sam_cpu_blas_kernel_level(void);

#endif

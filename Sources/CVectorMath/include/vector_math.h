#ifndef SAM_VECTOR_MATH_H
#define SAM_VECTOR_MATH_H

// Sixteen-lane versions of SAMKernels' eight-lane float loops, for CPUs with AVX-512. Swift code is
// built for one vector width (-target-cpu haswell: eight lanes), so the wider loops live here,
// compiled for AVX-512 function by function and chosen at run time. Each computes exactly what its
// Swift counterpart does, operation by operation, so results are the same bits on either path.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this CPU runs the AVX-512 functions below (AVX-512F; x86-64 only), else 0.
int sam_vector_math_has_avx512(void);

/// row[j] = exp(row[j] - shift) in place for j < count (a multiple of 8), with
/// SAMKernels' `exp8` (same constants, same fused multiply-adds); adds element j to
/// sums[j % 8] in increasing j, as `Kernels.exponentiateVectors` does. Only call when
/// sam_vector_math_has_avx512() is 1.
void sam_exponentiate_avx512(float *row, int64_t count, float shift, float sums[8]);

/// The largest of row[0..<count] (count a multiple of 8; -inf for none), as
/// `Kernels.maxOfVectors` finds it. Only call when sam_vector_math_has_avx512() is 1.
float sam_maximum_avx512(const float *row, int64_t count);

/// row[j] *= factor for j < count (a multiple of 8). Only call when sam_vector_math_has_avx512() is 1.
void sam_scale_avx512(float *row, int64_t count, float factor);

/// values[i] = GELU(values[i]) in place for i < count (a multiple of 8), with SAMKernels' `gelu8`
/// (the same erf fit, same fused multiply-adds). Only call when sam_vector_math_has_avx512() is 1.
void sam_gelu_avx512(float *values, int64_t count);

#ifdef __cplusplus
}
#endif

#endif

#ifndef SAM_FMA_PEAK_H
#define SAM_FMA_PEAK_H

#include <stdint.h>

/// The widest fused multiply-add vector this CPU runs: 16 (AVX-512F), 8 (AVX2 + FMA), or 0.
int sam_fma_peak_lanes(void);

/// Runs `iterations` rounds of 12 independent fused multiply-add chains on `sam_fma_peak_lanes()`-wide
/// registers (no memory traffic): 24 * lanes * iterations floating-point operations, at the rate the
/// core's FMA units allow. Returns a value derived from the chains so the work cannot be dropped.
/// Only call when sam_fma_peak_lanes() is not 0.
float sam_fma_peak_run(int64_t iterations);

#endif

#ifndef SAM_FMA_PEAK_H
#define SAM_FMA_PEAK_H

#include <stdint.h>

/// The widest fused multiply-add vector this CPU runs: 16 (AVX-512F), 8 (AVX2 + FMA), or 0.
int sam_fma_peak_lanes(void);

/// Runs `iterations` rounds of 12 independent fused multiply-add chains on `lanes`-wide registers (no
/// memory traffic): 24 * lanes * iterations floating-point operations, at the rate the core's FMA
/// units allow. Returns a value derived from the chains so the work cannot be dropped. `lanes` is 8 or
/// 16 and at most sam_fma_peak_lanes().
float sam_fma_peak_run(int lanes, int64_t iterations);

/// 1 when this CPU runs vdpbf16ps (AVX512_BF16, not capped below AVX-512 by SAM_CPU_CAP), else 0.
int sam_bf16_dot_peak_available(void);

/// The same 12 independent chains as vdpbf16ps steps on sixteen lanes (each adds two bfloat16
/// products per lane): 64 * 12 * iterations floating-point operations, the ceiling of the opt-in
/// bfloat16 products. Only call when sam_bf16_dot_peak_available() is 1.
float sam_bf16_dot_peak_run(int64_t iterations);

#endif

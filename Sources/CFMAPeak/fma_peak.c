// See include/fma_peak.h. The machine's float32 arithmetic ceiling, for benchmarks: how far the
// runtime's GFLOP/s is from it says how much a kernel change could still gain.
#include "fma_peak.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

int sam_fma_peak_lanes(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 16;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 8;
    return 0;
}

// Twelve chains: enough to cover the FMA latency (4-5 cycles) on two pipes.
#define SAM_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((target("avx512f,fma"))) static float run16(int64_t iterations) {
    const __m512 factor = _mm512_set1_ps(0.999999f), addend = _mm512_set1_ps(1e-7f);
#define DECLARE(i) __m512 c##i = _mm512_set1_ps((float)(i));
#define STEP(i) c##i = _mm512_fmadd_ps(c##i, factor, addend);
#define SUM(i) total = _mm512_add_ps(total, c##i);
    SAM_CHAINS(DECLARE)
    for (int64_t k = 0; k < iterations; k++) { SAM_CHAINS(STEP) }
    __m512 total = _mm512_setzero_ps();
    SAM_CHAINS(SUM)
    return _mm512_reduce_add_ps(total);
#undef DECLARE
#undef STEP
#undef SUM
}

__attribute__((target("avx2,fma"))) static float run8(int64_t iterations) {
    const __m256 factor = _mm256_set1_ps(0.999999f), addend = _mm256_set1_ps(1e-7f);
#define DECLARE(i) __m256 c##i = _mm256_set1_ps((float)(i));
#define STEP(i) c##i = _mm256_fmadd_ps(c##i, factor, addend);
#define SUM(i) total = _mm256_add_ps(total, c##i);
    SAM_CHAINS(DECLARE)
    for (int64_t k = 0; k < iterations; k++) { SAM_CHAINS(STEP) }
    __m256 total = _mm256_setzero_ps();
    SAM_CHAINS(SUM)
    float lanes[8];
    _mm256_storeu_ps(lanes, total);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
#undef DECLARE
#undef STEP
#undef SUM
}

float sam_fma_peak_run(int lanes, int64_t iterations) {
    return lanes == 16 ? run16(iterations) : run8(iterations);
}

#else

int sam_fma_peak_lanes(void) { return 0; }

float sam_fma_peak_run(int lanes, int64_t iterations) {
    (void)lanes; (void)iterations;
    __builtin_trap();
}

#endif

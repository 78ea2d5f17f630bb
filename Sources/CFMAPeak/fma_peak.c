// See include/fma_peak.h. The machine's float32 arithmetic ceiling, for benchmarks: how far the
// runtime's GFLOP/s is from it says how much a kernel change could still gain.
#include "fma_peak.h"
#include "cpu_features.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

int sam_fma_peak_lanes(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && sam_cpu_cap() >= SAM_CPU_CAP_AVX512) return 16;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 8;
    return 0;
}

// Twelve independent chains c = c * f + a (enough to cover the FMA latency, 4-5 cycles, on two
// pipes), returned summed; one definition for each vector width.
#define SAM_DEFINE_CHAINS(NAME, TARGET, VEC, SET1, FMADD, ADD)                                        \
    __attribute__((target(TARGET))) static VEC NAME(int64_t iterations) {                             \
        const VEC f = SET1(0.999999f), a = SET1(1e-7f);                                               \
        VEC c0 = SET1(0.0f), c1 = SET1(1.0f), c2 = SET1(2.0f), c3 = SET1(3.0f), c4 = SET1(4.0f);       \
        VEC c5 = SET1(5.0f), c6 = SET1(6.0f), c7 = SET1(7.0f), c8 = SET1(8.0f), c9 = SET1(9.0f);       \
        VEC c10 = SET1(10.0f), c11 = SET1(11.0f);                                                     \
        for (int64_t k = 0; k < iterations; k++) {                                                    \
            c0 = FMADD(c0, f, a); c1 = FMADD(c1, f, a); c2 = FMADD(c2, f, a); c3 = FMADD(c3, f, a);    \
            c4 = FMADD(c4, f, a); c5 = FMADD(c5, f, a); c6 = FMADD(c6, f, a); c7 = FMADD(c7, f, a);    \
            c8 = FMADD(c8, f, a); c9 = FMADD(c9, f, a); c10 = FMADD(c10, f, a); c11 = FMADD(c11, f, a); \
        }                                                                                             \
        return ADD(ADD(ADD(ADD(c0, c1), ADD(c2, c3)), ADD(ADD(c4, c5), ADD(c6, c7))),                 \
                   ADD(ADD(c8, c9), ADD(c10, c11)));                                                  \
    }

SAM_DEFINE_CHAINS(chains16, "avx512f,fma", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps)
SAM_DEFINE_CHAINS(chains8, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps)

__attribute__((target("avx512f,fma"))) static float run16(int64_t iterations) {
    return _mm512_reduce_add_ps(chains16(iterations));
}

__attribute__((target("avx2,fma"))) static float run8(int64_t iterations) {
    float lanes[8];
    _mm256_storeu_ps(lanes, chains8(iterations));
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

float sam_fma_peak_run(int lanes, int64_t iterations) {
    return lanes == 16 ? run16(iterations) : run8(iterations);
}

int sam_bf16_dot_peak_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16") && sam_cpu_cap() >= SAM_CPU_CAP_AVX512;
}

// The same twelve chains as vdpbf16ps steps: c += the sixteen lanes' two bfloat16 products each.
__attribute__((target("avx512f,avx512bf16"))) float sam_bf16_dot_peak_run(int64_t iterations) {
    const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3A833A83), y = (__m512bh)_mm512_set1_epi32(0x3A833A83);  // 0.001 pairs
    __m512 c[12];
    for (int i = 0; i < 12; i++) c[i] = _mm512_set1_ps((float)i);
    for (int64_t k = 0; k < iterations; k++) {
        c[0] = _mm512_dpbf16_ps(c[0], x, y); c[1] = _mm512_dpbf16_ps(c[1], x, y); c[2] = _mm512_dpbf16_ps(c[2], x, y);
        c[3] = _mm512_dpbf16_ps(c[3], x, y); c[4] = _mm512_dpbf16_ps(c[4], x, y); c[5] = _mm512_dpbf16_ps(c[5], x, y);
        c[6] = _mm512_dpbf16_ps(c[6], x, y); c[7] = _mm512_dpbf16_ps(c[7], x, y); c[8] = _mm512_dpbf16_ps(c[8], x, y);
        c[9] = _mm512_dpbf16_ps(c[9], x, y); c[10] = _mm512_dpbf16_ps(c[10], x, y); c[11] = _mm512_dpbf16_ps(c[11], x, y);
    }
    __m512 sum = c[0];
    for (int i = 1; i < 12; i++) sum = _mm512_add_ps(sum, c[i]);
    return _mm512_reduce_add_ps(sum);
}

#else

int sam_fma_peak_lanes(void) { return 0; }

float sam_fma_peak_run(int lanes, int64_t iterations) {
    (void)lanes; (void)iterations;
    __builtin_trap();
}

int sam_bf16_dot_peak_available(void) { return 0; }

float sam_bf16_dot_peak_run(int64_t iterations) {
    (void)iterations;
    __builtin_trap();
}

#endif

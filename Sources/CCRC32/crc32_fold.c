// CRC-32 folding with carry-less multiplication: four 128-bit lanes are each multiplied by
// x^512 mod P and added to the next 64 bytes, then the lanes are folded into one with x^128 mod P.
// What is left is 16 bytes with the message's CRC, which the caller finishes with zlib. The fold
// constants are x^n mod P for the bit-reflected IEEE polynomial (Intel, "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ"); Tests/SAMFormatsTests/ChecksumTests.swift checks the
// result against a bit-at-a-time CRC over many lengths and split points.
#include "crc32_fold.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <string.h>

int sam_crc32_fold_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_PCLMUL) && (ecx & bit_SSE4_1);
}

__attribute__((target("pclmul,sse4.1")))
static inline __m128i fold(__m128i lane, __m128i constants, __m128i next) {
    __m128i low = _mm_clmulepi64_si128(lane, constants, 0x00);
    __m128i high = _mm_clmulepi64_si128(lane, constants, 0x11);
    return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

__attribute__((target("pclmul,sse4.1")))
void sam_crc32_fold(uint32_t crc_register, const uint8_t *data, size_t length, uint8_t out[16]) {
    // (x^(512+32) mod P, x^(512-32) mod P) and the same for 128, bit-reflected and shifted by one.
    const __m128i by512 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
    const __m128i by128 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
    __m128i x0 = _mm_loadu_si128((const __m128i *)(data + 0));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(data + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(data + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(data + 48));
    x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)crc_register));
    for (size_t offset = 64; offset < length; offset += 64) {
        x0 = fold(x0, by512, _mm_loadu_si128((const __m128i *)(data + offset + 0)));
        x1 = fold(x1, by512, _mm_loadu_si128((const __m128i *)(data + offset + 16)));
        x2 = fold(x2, by512, _mm_loadu_si128((const __m128i *)(data + offset + 32)));
        x3 = fold(x3, by512, _mm_loadu_si128((const __m128i *)(data + offset + 48)));
    }
    x0 = fold(x0, by128, x1);
    x0 = fold(x0, by128, x2);
    x0 = fold(x0, by128, x3);
    _mm_storeu_si128((__m128i *)out, x0);
}

#else

int sam_crc32_fold_available(void) { return 0; }

void sam_crc32_fold(uint32_t crc_register, const uint8_t *data, size_t length, uint8_t out[16]) {
    (void)crc_register; (void)data; (void)length; (void)out;
}

#endif

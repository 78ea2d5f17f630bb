// SHA-256 (FIPS 180-4) without a crypto library, so the runtime links no OpenSSL. Whole 64-byte
// blocks go through the x86 SHA extensions where the CPU has them (four rounds per pair of
// sha256rnds2, message schedule by sha256msg1/msg2), otherwise through the plain C rounds.
// Tests/SAMFilesTests/SHA256Tests.swift checks both against FIPS 180-4's examples and sha256sum.
#include "sha256.h"

#include <string.h>

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotate_right(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void blocks_portable(uint32_t state[8], const uint8_t *data, size_t blocks) {
    for (; blocks > 0; blocks--, data += 64) {
        uint32_t w[64];
        for (int t = 0; t < 16; t++) {
            w[t] = (uint32_t)data[4 * t] << 24 | (uint32_t)data[4 * t + 1] << 16
                 | (uint32_t)data[4 * t + 2] << 8 | (uint32_t)data[4 * t + 3];
        }
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = rotate_right(w[t - 15], 7) ^ rotate_right(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = rotate_right(w[t - 2], 17) ^ rotate_right(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; t++) {
            uint32_t sum1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
            uint32_t choose = (e & f) ^ (~e & g);
            uint32_t t1 = h + sum1 + choose + round_constants[t] + w[t];
            uint32_t sum0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
            uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
            h = g; g = f; f = e; e = d + t1;
            d = c; c = b; b = a; a = t1 + sum0 + majority;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d;
        state[4] += e; state[5] += f; state[6] += g; state[7] += h;
    }
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int sam_sha256_accelerated(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    if (!(ecx & bit_SSSE3) || !(ecx & bit_SSE4_1)) return 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return (ebx & bit_SHA) != 0;
}

// The SHA instructions keep the eight words as (A, B, E, F) and (C, D, G, H).
__attribute__((target("sha,ssse3,sse4.1")))
static void blocks_sha_extensions(uint32_t state[8], const uint8_t *data, size_t blocks) {
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

    for (; blocks > 0; blocks--, data += 64) {
        const __m128i abef_before = abef, cdgh_before = cdgh;
        __m128i w[4];  // the last four groups of four schedule words, group g in w[g % 4]
        for (int group = 0; group < 16; group++) {
            __m128i words;
            if (group < 4) {
                words = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * group)), byte_swap);
            } else {
                // W[t] = W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]) for t = 4 group ... 4 group + 3.
                __m128i previous = w[(group - 1) & 3], before = w[(group - 2) & 3];
                words = _mm_sha256msg1_epu32(w[group & 3], w[(group - 3) & 3]);
                words = _mm_add_epi32(words, _mm_alignr_epi8(previous, before, 4));
                words = _mm_sha256msg2_epu32(words, previous);
            }
            w[group & 3] = words;
            __m128i message = _mm_add_epi32(words, _mm_loadu_si128((const __m128i *)&round_constants[4 * group]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(message, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
    }

    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

static int accelerated_once(void) {
    static int known = -1;
    if (known < 0) known = sam_sha256_accelerated();
    return known;
}

static void blocks(sam_sha256 *context, const uint8_t *data, size_t count) {
    if (!context->portable && accelerated_once()) blocks_sha_extensions(context->state, data, count);
    else blocks_portable(context->state, data, count);
}

#else

int sam_sha256_accelerated(void) { return 0; }

static void blocks(sam_sha256 *context, const uint8_t *data, size_t count) {
    blocks_portable(context->state, data, count);
}

#endif

void sam_sha256_init(sam_sha256 *context, int portable) {
    static const uint32_t initial[8] = {
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    };
    memcpy(context->state, initial, sizeof initial);
    context->total_bytes = 0;
    context->pending_bytes = 0;
    context->portable = portable;
}

void sam_sha256_update(sam_sha256 *context, const void *data, size_t length) {
    const uint8_t *bytes = data;
    context->total_bytes += length;
    if (context->pending_bytes > 0) {
        size_t take = 64 - context->pending_bytes;
        if (take > length) take = length;
        memcpy(context->pending + context->pending_bytes, bytes, take);
        context->pending_bytes += take;
        bytes += take;
        length -= take;
        if (context->pending_bytes < 64) return;
        blocks(context, context->pending, 1);
        context->pending_bytes = 0;
    }
    if (length >= 64) {
        blocks(context, bytes, length / 64);
        bytes += length / 64 * 64;
        length %= 64;
    }
    memcpy(context->pending, bytes, length);
    context->pending_bytes = length;
}

void sam_sha256_final(sam_sha256 *context, uint8_t digest[32]) {
    uint64_t bits = context->total_bytes * 8;
    uint8_t padding[72] = {0x80};
    // Pad to 56 bytes past a block boundary, then the message length in bits, big-endian.
    size_t padding_bytes = (context->pending_bytes < 56 ? 56 : 120) - context->pending_bytes;
    for (int i = 0; i < 8; i++) padding[padding_bytes + i] = (uint8_t)(bits >> (56 - 8 * i));
    sam_sha256_update(context, padding, padding_bytes + 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(context->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(context->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(context->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)context->state[i];
    }
}

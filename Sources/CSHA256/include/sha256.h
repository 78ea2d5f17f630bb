#ifndef SAM_SHA256_H
#define SAM_SHA256_H

#include <stddef.h>
#include <stdint.h>

/// A SHA-256 (FIPS 180-4) computation in progress. Start it with `sam_sha256_init`.
typedef struct {
    uint32_t state[8];
    uint64_t total_bytes;
    uint8_t pending[64];
    size_t pending_bytes;
    int portable;  // 1: the plain C rounds even where the CPU has SHA instructions
} sam_sha256;

/// Whether this CPU has the x86 SHA extensions (and SSSE3/SSE4.1) the fast rounds use.
int sam_sha256_accelerated(void);

/// Starts a digest; `portable` non-zero keeps to the plain C rounds (tests compare the two).
void sam_sha256_init(sam_sha256 *context, int portable);
void sam_sha256_update(sam_sha256 *context, const void *data, size_t length);
/// Writes the 32-byte digest; the context is spent.
void sam_sha256_final(sam_sha256 *context, uint8_t digest[32]);

#endif

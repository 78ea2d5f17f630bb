#ifndef SAM_CRC32_FOLD_H
#define SAM_CRC32_FOLD_H

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU has the carry-less multiply (PCLMULQDQ) and SSE4.1 that `sam_crc32_fold` needs.
int sam_crc32_fold_available(void);

/// Folds `length` bytes (a multiple of 64, at least 64) of a CRC-32 (IEEE, reflected) message whose
/// register starts at `crc_register` (zlib's crc32(c, ...) starts at ~c) into 16 bytes `out` with the
/// same CRC: R(crc_register, data) == R(0, out). Only call when `sam_crc32_fold_available()`.
void sam_crc32_fold(uint32_t crc_register, const uint8_t *data, size_t length, uint8_t out[16]);

#endif

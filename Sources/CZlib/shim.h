// zlib: CRC-32 (the .samw tensor checksums) and inflate (deflated entries of PyTorch checkpoints).
#include <zlib.h>

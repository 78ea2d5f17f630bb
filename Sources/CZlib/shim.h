// zlib, for its CRC-32 (the .samw tensor checksums).
#include <zlib.h>

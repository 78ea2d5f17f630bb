// OpenSSL's libcrypto, for SHA-256 (the provenance digests of a .samw's source files).
#include <openssl/evp.h>

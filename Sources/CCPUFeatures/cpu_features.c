#include "cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

int sam_cpu_blas_kernel_level(void) {
    // __builtin_cpu_supports also checks that the OS saves the vector state (XGETBV).
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && sam_cpu_cap() >= SAM_CPU_CAP_AVX512) {
        return 2;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
    return 0;
}

int sam_cpu_halves_512_bit_vectors(void) {
    unsigned eax, ebx, ecx, edx;
    // "AuthenticAMD" in ebx, edx, ecx.
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx) || ebx != 0x68747541 || edx != 0x69746e65 || ecx != 0x444d4163) return 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    const unsigned base = (eax >> 8) & 0xF, family = base == 0xF ? base + ((eax >> 20) & 0xFF) : base;
    __builtin_cpu_init();
    return family == 0x19 && __builtin_cpu_supports("avx512f");
}

// The grant is asked once; threads racing on the first call ask twice, which the kernel answers the
// same way.
static int amx_granted(void) {
    static _Atomic int granted = -1;
    int known = atomic_load_explicit(&granted, memory_order_relaxed);
    if (known >= 0) return known;
#if defined(__linux__)
    known = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#else
    known = 0;
#endif
    atomic_store_explicit(&granted, known, memory_order_relaxed);
    return known;
}

// The AMX kinds the CPU has (SAM_AMX_INT8 | SAM_AMX_BF16, with AMX-TILE), read once: the kernels ask
// on every call, and cpuid traps to the hypervisor on a VM (1.1 us here).
static int amx_kinds(void) {
    static _Atomic int kinds = -1;
    int known = atomic_load_explicit(&kinds, memory_order_relaxed);
    if (known >= 0) return known;
    unsigned eax, ebx, ecx, edx;
    known = 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx >> 24 & 1)) {
        known = (edx >> 25 & 1 ? SAM_AMX_INT8 : 0) | (edx >> 22 & 1 ? SAM_AMX_BF16 : 0);
    }
    atomic_store_explicit(&kinds, known, memory_order_relaxed);
    return known;
}

int sam_amx_usable(int kind) { return sam_cpu_cap() == SAM_CPU_CAP_ALL && (amx_kinds() & kind) != 0 && amx_granted(); }

typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t bytes_per_row[16];
    uint8_t rows[16];
} __attribute__((packed, aligned(64))) amx_tile_config;

__attribute__((target("amx-tile"))) void sam_amx_configure_tiles(void) {
    amx_tile_config config = {0};
    config.palette = 1;
    for (int t = 0; t < 8; t++) { config.bytes_per_row[t] = 64; config.rows[t] = 16; }
    _tile_loadconfig(&config);
}

__attribute__((target("amx-tile"))) void sam_amx_release_tiles(void) { _tile_release(); }
#else
int sam_cpu_blas_kernel_level(void) { return 0; }
int sam_cpu_halves_512_bit_vectors(void) { return 0; }
int sam_amx_usable(int kind) { (void)kind; return 0; }
void sam_amx_configure_tiles(void) { __builtin_trap(); }
void sam_amx_release_tiles(void) { __builtin_trap(); }
#endif

#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>

int sam_cpu_cap_named(const char *value) {
    if (value == NULL || value[0] == '\0') return SAM_CPU_CAP_ALL;
    if (strcasecmp(value, "avx512") == 0) return SAM_CPU_CAP_AVX512;
    if (strcasecmp(value, "avx2") == 0) return SAM_CPU_CAP_AVX2;
    return SAM_CPU_CAP_INVALID;
}

// Read once: every kernel asks on every call. Threads racing on the first call read the same value.
int sam_cpu_cap(void) {
    static _Atomic int cap = SAM_CPU_CAP_INVALID - 1;
    int known = atomic_load_explicit(&cap, memory_order_relaxed);
    if (known >= SAM_CPU_CAP_INVALID) return known == SAM_CPU_CAP_INVALID ? SAM_CPU_CAP_ALL : known;
    known = sam_cpu_cap_named(getenv("SAM_CPU_CAP"));
    atomic_store_explicit(&cap, known, memory_order_relaxed);
    return known == SAM_CPU_CAP_INVALID ? SAM_CPU_CAP_ALL : known;
}

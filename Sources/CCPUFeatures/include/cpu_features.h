#ifndef SAM_CPU_FEATURES_H
#define SAM_CPU_FEATURES_H

/// The widest OpenBLAS kernel family this CPU and its operating system run: 2 for SkylakeX's
/// (AVX-512 F, CD, BW, DQ, VL), 1 for Haswell's (AVX2 and FMA), 0 for neither (or not x86-64);
/// at most 1 under SAM_CPU_CAP=avx2.
int sam_cpu_blas_kernel_level(void);

/// 1 on AMD's family 19h CPUs with AVX-512 (Zen 4), which run each 512-bit operation as two 256-bit
/// halves: there OpenBLAS's Haswell (AVX2) kernels beat the AVX-512 ones it picks. Else 0.
int sam_cpu_halves_512_bit_vectors(void);

/// How far the environment variable SAM_CPU_CAP lets this process's kernels go, below what the CPU
/// has: SAM_CPU_CAP_ALL (unset or empty: everything the CPU has), SAM_CPU_CAP_AVX512 ("avx512":
/// no AMX tiles), SAM_CPU_CAP_AVX2 ("avx2": AVX2 and FMA, the kernels a CPU without AVX-512 runs).
/// So one machine can run, test and time the paths of older CPUs.
enum { SAM_CPU_CAP_INVALID = -1, SAM_CPU_CAP_AVX2 = 1, SAM_CPU_CAP_AVX512 = 2, SAM_CPU_CAP_ALL = 3 };

/// The cap a SAM_CPU_CAP value names: NULL or "" -> SAM_CPU_CAP_ALL, "avx512", "avx2" (any case),
/// anything else SAM_CPU_CAP_INVALID.
int sam_cpu_cap_named(const char *value);

/// The cap in force, SAM_CPU_CAP read at the first call: an invalid value caps nothing here (the
/// command-line tools refuse it before they start).
int sam_cpu_cap(void);

/// AMX tile operations `sam_amx_usable` can be asked about.
enum { SAM_AMX_INT8 = 1, SAM_AMX_BF16 = 2 };

/// 1 when this process may run AMX tile instructions of `kind` (SAM_AMX_INT8 or SAM_AMX_BF16): the
/// CPU has AMX-TILE and that kind (Intel Sapphire Rapids and later), and the operating system grants
/// the process the tile register state. Linux grants it on request (arch_prctl ARCH_REQ_XCOMP_PERM for
/// XTILEDATA), made at the first call; without the grant the first tile instruction faults. Else 0,
/// and 0 under a SAM_CPU_CAP.
int sam_amx_usable(int kind);

/// Configures this thread's eight AMX tiles as 16 rows of 64 bytes each (palette 1); release them
/// with `sam_amx_release_tiles` when done. Only after `sam_amx_usable` returned 1.
void sam_amx_configure_tiles(void);

/// Returns this thread's tiles to their initial state (so the OS need not save them).
void sam_amx_release_tiles(void);

#endif

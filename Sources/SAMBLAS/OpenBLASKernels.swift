#if !canImport(Accelerate)
import CCPUFeatures
import COpenBLAS
#if canImport(Glibc)
import Glibc
#endif

extension BLAS {
    /// OpenBLAS kernel families ("cores") older than Haswell's: what a DYNAMIC_ARCH build falls back
    /// to on a CPU model it does not know. OpenBLAS 0.3.21 (Debian 12) takes a 5th-generation Xeon
    /// (family 6, model 207) for Prescott and runs SSE3 kernels on an AVX-512 core: the whole
    /// segment-everything run on MobileSAM took 1.75x as long there as with SkylakeX's kernels.
    public static let preAVX2Cores: Set<String> = ["unknown", "prescott", "core2", "penryn", "dunnington", "nehalem", "atom",
                                            "sandybridge", "katmai", "coppermine", "northwood", "banias", "opteron",
                                            "opteron_sse3", "barcelona", "bobcat", "bulldozer", "piledriver", "nano"]

    /// OpenBLAS kernel families that run AVX-512 instructions.
    public static let avx512Cores: Set<String> = ["skylakex", "cooperlake", "sapphirerapids"]

    /// The OpenBLAS kernel family this CPU should run instead of the library's pick: the widest it
    /// runs when the library picked one for an older ISA ("SkylakeX" on an AVX-512 CPU, "Haswell" on
    /// an AVX2 + FMA one); "Haswell" for an AVX-512 pick under SAM_CPU_CAP=avx2 (the cap holds the BLAS
    /// to an AVX2 CPU's kernels too) and on Zen 4, which runs 512-bit operations as two halves
    /// (`sam_cpu_halves_512_bit_vectors`; `sambench encoder`, 3 alternating rounds: EfficientViT-SAM L0
    /// 433-435 against 452-461 ms on Cooperlake's kernels, MobileSAM 435-439 against 445-450). Else
    /// nil: when the user set OPENBLAS_CORETYPE (their choice stands), when OpenBLAS's own pick is
    /// Haswell's or newer (Zen, SkylakeX, Cooperlake, ...) and allowed, or on a CPU without AVX2. The
    /// choice takes effect only in a process started with OPENBLAS_CORETYPE set: OpenBLAS reads it
    /// once, as it loads.
    public static var strongerOpenBLASCore: String? {
        guard getenv("OPENBLAS_CORETYPE") == nil else { return nil }
        let current = (openblas_get_corename().map { String(cString: $0) } ?? "unknown").lowercased()
        let fastest = fastestKernelFamily
        guard preAVX2Cores.contains(current) || (avx512Cores.contains(current) && fastest == "Haswell") else { return nil }
        return fastest
    }

    /// The OpenBLAS kernel family that runs fastest on this CPU: `cpuKernelFamily`, except Haswell's
    /// where 512-bit operations run as two halves (Zen 4).
    public static var fastestKernelFamily: String? {
        sam_cpu_halves_512_bit_vectors() != 0 && cpuKernelFamily == "SkylakeX" ? "Haswell" : cpuKernelFamily
    }

    /// The widest OpenBLAS kernel family this CPU runs: "SkylakeX" (AVX-512 F, CD, BW, DQ, VL),
    /// "Haswell" (AVX2 and FMA; also on an AVX-512 CPU under SAM_CPU_CAP=avx2), or nil.
    public static var cpuKernelFamily: String? {
        switch sam_cpu_blas_kernel_level() {
        case 2: "SkylakeX"
        case 1: "Haswell"
        default: nil
        }
    }
}

extension BLAS {
    /// For a command-line tool, first thing in `main`: when `strongerOpenBLASCore` names a kernel
    /// family, starts this program again in place (same process id, arguments and environment)
    /// with OPENBLAS_CORETYPE set to it, so that OpenBLAS loads with it. Returns (having changed
    /// nothing) when there is nothing to change or the program cannot be started again. An app
    /// embedding the package sets OPENBLAS_CORETYPE in its own environment instead.
    public static func restartWithStrongerKernelsIfNeeded() {
        #if os(Linux)
        guard let core = strongerOpenBLASCore, setenv("OPENBLAS_CORETYPE", core, 1) == 0 else { return }
        _ = execv("/proc/self/exe", CommandLine.unsafeArgv)
        // Not restarted (no /proc, exec refused): run on with the library's own choice, and say so
        // to nothing else in this process.
        unsetenv("OPENBLAS_CORETYPE")
        #endif
    }
}
#endif

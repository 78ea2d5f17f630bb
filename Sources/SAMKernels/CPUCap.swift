import CCPUFeatures
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SAM_CPU_CAP: the environment variable that holds the numeric kernels' choices (products, vector
/// loops, the BLAS) below what the CPU has, so one machine runs, tests and times an older CPU's paths.
/// `avx2`: no AVX-512 anywhere (the panel product's sixteen-lane blocks and the attention built on them,
/// the sixteen-lane loops, bfloat16 and VNNI products, AMX tiles), OpenBLAS's Haswell kernels
/// (the tools start again with OPENBLAS_CORETYPE=Haswell unless it is set); `avx512`: no AMX tiles.
/// Unset or empty: the CPU's own. Read once, as the process starts.
public enum CPUCap: String, Sendable, CaseIterable {
    /// A CPU without AVX-512: AVX2 and FMA kernels throughout.
    case avx2
    /// AVX-512 without AMX tiles.
    case avx512
    /// No cap: the kernels for everything the CPU has.
    case none

    /// The cap in force in this process.
    public static var current: CPUCap {
        switch sam_cpu_cap() {
        case Int32(SAM_CPU_CAP_AVX2): .avx2
        case Int32(SAM_CPU_CAP_AVX512): .avx512
        default: .none
        }
    }

    /// Why SAM_CPU_CAP cannot be used (a value this build does not know), nil when it can.
    public static var environmentProblem: String? {
        guard let value = getenv("SAM_CPU_CAP"), sam_cpu_cap_named(value) == Int32(SAM_CPU_CAP_INVALID) else { return nil }
        return "SAM_CPU_CAP='\(String(cString: value))' is not avx2 or avx512 (unset it for the CPU's own kernels)"
    }
}

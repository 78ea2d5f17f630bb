#if canImport(Glibc)
import Glibc
#endif

extension Kernels {
    /// Makes glibc's malloc keep freed memory for the next tensor instead of returning it to the
    /// kernel. By default every allocation above 32 MB (a 256x256 map of 256 channels is 64 MB)
    /// is a fresh mmap, so each layer's outputs are page-faulted in again: on the 2-core VM this
    /// was 635k page faults and ~13% of the CPU time of three encoder runs; with this, 63k and
    /// the same peak RSS (`perf stat`, see BENCHMARKS.md). Process-wide and idempotent; `Sam`
    /// calls it when a model is built. No-op off glibc.
    public static func keepFreedMemoryForReuse() {
        _ = allocatorConfigured
    }

    private static let allocatorConfigured: Void = {
        #if canImport(Glibc)
        // mallopt is declared in <malloc.h>, which the Glibc module does not export; look it
        // up instead. Option numbers are glibc's ABI (malloc.h).
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let trimThreshold: Int32 = -1, topPad: Int32 = -2, mmapMax: Int32 = -4
        // Serve every size from the heap (no per-allocation mmap), never trim its top, and
        // grow it 64 MB at a time.
        _ = mallopt(mmapMax, 0)
        _ = mallopt(trimThreshold, Int32.max)
        _ = mallopt(topPad, 64 << 20)
        #endif
    }()
}

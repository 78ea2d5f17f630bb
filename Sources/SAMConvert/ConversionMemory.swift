#if canImport(Glibc)
import Glibc
#endif

/// Process-wide malloc settings for a conversion, which allocates and frees tensor-sized buffers one
/// after another. glibc raises its mmap threshold to the largest block freed so far (up to 32 MB), so
/// by default later tensors come from the heap, and the heap keeps every hole it had (a conversion of
/// SAM ViT-H held 1.9 GB that way). A fixed threshold makes each buffer of 1 MB or more its own
/// mapping, given back when freed. Nothing in the package applies it on its own: samconvert calls
/// it at start-up. No-op off glibc.
public enum ConversionMemory {
    public static func returnLargeBuffersWhenFreed() {
        _ = largeBuffersReturned
    }

    private static let largeBuffersReturned: Void = {
        #if canImport(Glibc)
        // mallopt is declared in <malloc.h>, which the Glibc module does not export; look it up
        // instead. Option numbers are glibc's ABI (malloc.h).
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let mmapThreshold: Int32 = -3
        _ = mallopt(mmapThreshold, 1 << 20)
        #endif
    }()
}

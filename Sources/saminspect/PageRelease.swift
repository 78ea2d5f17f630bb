#if canImport(Glibc)
import Glibc
#endif

/// Hands pages already read back to the kernel, so reading through a large mapped file keeps a
/// window, not the file, resident.
enum PageRelease {
    /// Linux 5.4's MADV_PAGEOUT (not in every libc's headers): reclaim these pages now. Clean file
    /// pages are dropped (re-read on the next access); nothing is ever lost.
    private static let madvPageOut: Int32 = 21

    static func pageOut(_ bytes: UnsafeRawBufferPointer) {
        #if os(Linux)
        guard let base = bytes.baseAddress else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = (Int(bitPattern: base) + page - 1) / page * page
        let last = (Int(bitPattern: base) + bytes.count) / page * page
        guard last > first else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: first), last - first, madvPageOut)
        #endif
    }
}

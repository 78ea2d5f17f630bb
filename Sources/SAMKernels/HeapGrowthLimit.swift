#if canImport(Glibc)
import Glibc
#endif

extension Kernels {
    /// When to give freed memory back between units of work of one kind (a video's frames): only once
    /// the resident set has grown by more than `allowedGrowth` over what the first unit after the last
    /// return left resident. Returning after every unit bounds RSS but makes each unit fault its
    /// temporaries in again (samtrack, SAM 2.1 tiny, one object, Zen 5, medians per frame: 1.70–1.71 s
    /// against 1.59–1.64 s never returning); never returning let the heap of two tracked objects grow
    /// from 0.75 to 2.3 GB over 80 frames as its holes stopped fitting the next frame's temporaries.
    /// Off Linux (no /proc/self/statm, and `returnFreedMemory` a no-op there) it never returns. For a
    /// process on glibc's malloc that runs a `VideoTracker` frame after frame: samtrack links jemalloc
    /// instead (its resident peak stays flat over a long clip; see docs/video.md), where this has
    /// nothing to return.
    public struct HeapGrowthLimit: Sendable {
        /// How far the resident set may grow past the reference before freed memory is given back,
        /// as a fraction of it (0.1: by more than 10%).
        public let allowedGrowth: Double
        /// Reads the resident set, and gives freed memory back (tests give their own of both).
        private let residentBytes: @Sendable () -> Int?
        private let returnFreedMemory: @Sendable () -> Void
        /// Resident bytes after the first unit since the last return; nil until that unit ends.
        private var reference: Int?

        /// A limit that gives freed memory back once the resident set grows by more than `allowedGrowth`
        /// (a fraction, 0 or more) over what the first unit after the last return left resident.
        public init(allowedGrowth: Double = 0.1) {
            self.init(allowedGrowth: allowedGrowth, residentBytes: { Kernels.residentBytes() },
                      returnFreedMemory: { Kernels.returnFreedMemory() })
        }

        init(allowedGrowth: Double, residentBytes: @escaping @Sendable () -> Int?,
             returnFreedMemory: @escaping @Sendable () -> Void) {
            precondition(allowedGrowth >= 0, "HeapGrowthLimit: allowedGrowth \(allowedGrowth) is negative")
            self.allowedGrowth = allowedGrowth
            self.residentBytes = residentBytes
            self.returnFreedMemory = returnFreedMemory
        }

        /// Call after each unit of work; returns whether freed memory was given back.
        @discardableResult
        public mutating func unitFinished() -> Bool {
            guard let resident = residentBytes() else { return false }
            guard let reference else {
                self.reference = resident
                return false
            }
            guard Double(resident) > Double(reference) * (1 + allowedGrowth) else { return false }
            returnFreedMemory()
            self.reference = nil
            return true
        }
    }

    /// The process's resident set in bytes (/proc/self/statm's second field), nil where it cannot be read.
    static func residentBytes() -> Int? {
        #if canImport(Glibc)
        let file = open("/proc/self/statm", O_RDONLY)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = bytes[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
        #else
        return nil
        #endif
    }
}

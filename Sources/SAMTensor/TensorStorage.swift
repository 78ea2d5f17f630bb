#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a tensor: either an aligned allocation it owns, or a view into memory
/// owned by someone else (a memory-mapped file, an unpacked protobuf message) kept alive
/// through `owner`, so readers can hand out large tensors without copying them again.
public final class TensorStorage: @unchecked Sendable {
    /// SIMD-friendly alignment for owned allocations.
    package static let alignment = 64

    /// The bytes, valid while this storage lives (64-byte aligned when owned).
    public let bytes: UnsafeRawBufferPointer
    private let owner: AnyObject?
    private let allocation: Allocation

    private enum Allocation {
        /// Swift's allocator (traps when the system has no memory).
        case swift
        /// posix_memalign, released with free: a failed request returns nil instead of trapping.
        case system
        /// Borrowed: `owner` keeps it alive.
        case none
    }

    /// Allocates `byteCount` bytes, zero-filled.
    public init(zeroedByteCount byteCount: Int) {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: Self.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: max(byteCount, 1))
        bytes = UnsafeRawBufferPointer(start: raw, count: byteCount)
        owner = nil
        allocation = .swift
    }

    /// Allocates `byteCount` bytes, zero-filled, or nil when the system cannot provide them (or the
    /// count is negative): for sizes that come from a file, where running out of memory is an error
    /// to report, not a trap.
    package init?(zeroedByteCountIfAvailable byteCount: Int) {
        guard byteCount >= 0 else { return nil }
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, Self.alignment, max(byteCount, 1)) == 0, let raw else { return nil }
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: max(byteCount, 1))
        bytes = UnsafeRawBufferPointer(start: raw, count: byteCount)
        owner = nil
        allocation = .system
    }

    /// Copies `source` into a new owned allocation.
    public convenience init(copying source: UnsafeRawBufferPointer) {
        self.init(zeroedByteCount: source.count)
        if source.count > 0 {
            UnsafeMutableRawPointer(mutating: bytes.baseAddress!).copyMemory(from: source.baseAddress!, byteCount: source.count)
        }
    }

    /// Views `source` without copying; `owner` must keep that memory valid while this storage lives.
    package init(borrowing source: UnsafeRawBufferPointer, owner: AnyObject) {
        bytes = source
        self.owner = owner
        allocation = .none
    }

    deinit {
        guard let base = bytes.baseAddress else { return }
        switch allocation {
        case .swift: base.deallocate()
        case .system: free(UnsafeMutableRawPointer(mutating: base))
        case .none: break
        }
    }
}

/// The bytes of a tensor: either an aligned allocation it owns, or a view into memory
/// owned by someone else (a memory-mapped file, an unpacked protobuf message) kept alive
/// through `owner`, so readers can hand out large tensors without copying them again.
public final class TensorStorage: @unchecked Sendable {
    /// SIMD-friendly alignment for owned allocations.
    public static let alignment = 64

    public let bytes: UnsafeRawBufferPointer
    private let owner: AnyObject?
    private let ownsAllocation: Bool

    /// Allocates `byteCount` bytes, zero-filled.
    public init(zeroedByteCount byteCount: Int) {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: Self.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: max(byteCount, 1))
        bytes = UnsafeRawBufferPointer(start: raw, count: byteCount)
        owner = nil
        ownsAllocation = true
    }

    /// Copies `source` into a new owned allocation.
    public convenience init(copying source: UnsafeRawBufferPointer) {
        self.init(zeroedByteCount: source.count)
        if source.count > 0 {
            UnsafeMutableRawPointer(mutating: bytes.baseAddress!).copyMemory(from: source.baseAddress!, byteCount: source.count)
        }
    }

    /// Views `source` without copying; `owner` must keep that memory valid while this storage lives.
    public init(borrowing source: UnsafeRawBufferPointer, owner: AnyObject) {
        bytes = source
        self.owner = owner
        ownsAllocation = false
    }

    deinit {
        if ownsAllocation, let base = bytes.baseAddress { base.deallocate() }
    }
}

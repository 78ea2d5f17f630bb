#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SAMTensor

/// Zero bytes of any length that cost no memory: an anonymous read-only mapping, never written, so
/// every page of it is the kernel's one shared zero page.
final class ZeroPages: @unchecked Sendable {
    private let bytes: UnsafeRawBufferPointer

    /// Nil when the address space cannot be reserved.
    init?(count: Int) {
        let count = max(count, 1)
        let address = mmap(nil, count, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let address, address != MAP_FAILED else { return nil }
        bytes = UnsafeRawBufferPointer(start: address, count: count)
    }

    /// A tensor of zeros of `dtype` and `shape` on these pages (`count` must cover it).
    func tensor(_ dtype: DType, shape: [Int]) -> Tensor {
        let byteCount = shape.reduce(1, *) * dtype.byteSize
        let storage = TensorStorage(borrowing: UnsafeRawBufferPointer(rebasing: bytes[0..<byteCount]), owner: self)
        return Tensor(dtype: dtype, shape: shape, checkedStorage: storage)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count) }
}

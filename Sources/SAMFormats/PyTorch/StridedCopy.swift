import SAMTensor

/// Copies a strided view (a transposed or sliced tensor) out of its storage into C order.
enum StridedCopy {
    /// `shape` elements of `elementSize` bytes starting at element `offset`, stepping by `strides`;
    /// the caller has checked that every element reached lies inside `source`. nil when the memory
    /// for the copy cannot be had.
    static func gather(_ source: UnsafeRawBufferPointer, elementSize: Int, offset: Int, shape: [Int], strides: [Int]) -> TensorStorage? {
        let count = shape.reduce(1, *)
        guard let storage = TensorStorage(zeroedByteCountIfAvailable: count * elementSize) else { return nil }
        guard count > 0, let base = source.baseAddress else { return storage }
        let target = UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!)
        // A dimension of size 1 is never stepped along: its stride (which may be anything) is dropped.
        let strides = zip(shape, strides).map { size, stride in size == 1 ? 0 : stride }
        // Rows along the last dimension, the outer indices advanced like an odometer.
        let rank = shape.count
        let rowLength = rank > 0 ? shape[rank - 1] : 1
        let rowStride = rank > 0 ? strides[rank - 1] : 1
        var index = [Int](repeating: 0, count: max(rank - 1, 0))
        var rowStart = offset
        var written = 0
        while written < count {
            copyRow(from: base, start: rowStart, stride: rowStride, count: rowLength, elementSize: elementSize,
                    to: target + written * elementSize)
            written += rowLength
            var dimension = rank - 2
            while dimension >= 0 {
                index[dimension] += 1
                rowStart += strides[dimension]
                if index[dimension] < shape[dimension] { break }
                rowStart -= strides[dimension] * shape[dimension]
                index[dimension] = 0
                dimension -= 1
            }
        }
        return storage
    }

    private static func copyRow(from source: UnsafeRawPointer, start: Int, stride: Int, count: Int, elementSize: Int,
                                to target: UnsafeMutableRawPointer) {
        switch elementSize {
        case 8: copyRow(from: source, start: start, stride: stride, count: count, to: target, as: UInt64.self)
        case 4: copyRow(from: source, start: start, stride: stride, count: count, to: target, as: UInt32.self)
        case 2: copyRow(from: source, start: start, stride: stride, count: count, to: target, as: UInt16.self)
        default: copyRow(from: source, start: start, stride: stride, count: count, to: target, as: UInt8.self)
        }
    }

    @inline(__always)
    private static func copyRow<T: FixedWidthInteger>(from source: UnsafeRawPointer, start: Int, stride: Int, count: Int,
                                                      to target: UnsafeMutableRawPointer, as: T.Type) {
        let size = MemoryLayout<T>.size
        for column in 0..<count {
            let element = source.loadUnaligned(fromByteOffset: (start + column * stride) * size, as: T.self)
            target.storeBytes(of: element, toByteOffset: column * size, as: T.self)
        }
    }
}

import SAMTensor

/// CPU kernels for the SAM runtime. Every kernel takes and returns `FloatTensor`s in C order
/// (NCHW for images, [..., tokens, channels] for sequences) and uses PyTorch's weight layouts,
/// so weights exported from PyTorch can be used as they are.
///
/// The kernels themselves are the package's own; what an app sees are the process-wide settings:
/// `tuneProcessForInference()`, the precision and product of linear layers, int8 products and the
/// worker count.
public enum Kernels {}

// Output allocation. Touching freshly allocated pages for the first time costs a page fault
// each, which for the tens of megabytes of a 256x256 activation rivals the kernel itself. So
// outputs are allocated uninitialised and filled by parallel tasks, in one pass, with the value
// the kernel accumulates onto (bias or zero) instead of a serial zero fill followed by a second
// pass.
extension Kernels {
    /// A new tensor built row by row: `initializeRow(start, rowIndex)` must initialise the
    /// `rowLength` elements at `start`. Rows are consecutive runs of `rowLength` elements.
    static func makeTensor(_ shape: [Int], rowLength: Int,
                           initializeRow: (UnsafeMutablePointer<Float>, Int) -> Void) -> FloatTensor {
        let count = shape.reduce(1, *)
        guard count > 0, rowLength > 0 else { return FloatTensor(zeros: shape) }
        let rows = count / rowLength
        let data = [Float](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            let base = buffer.baseAddress!
            parallelRanges(rows, minimumChunk: max(1, 65_536 / rowLength)) { rowRange in
                for row in rowRange { initializeRow(base + row * rowLength, row) }
            }
            initializedCount = count
        }
        return FloatTensor(shape: shape, data: data)
    }

    /// A new tensor of zeros.
    static func zeroTensor(_ shape: [Int]) -> FloatTensor {
        let rowLength = shape.last ?? 1
        return makeTensor(shape, rowLength: rowLength) { row, _ in row.initialize(repeating: 0, count: rowLength) }
    }

    /// A new NCHW tensor with every channel plane set to that channel's bias (zeros without bias).
    static func biasSeededNCHW(_ shape: [Int], bias: FloatTensor?) -> FloatTensor {
        guard let bias else { return zeroTensor(shape) }
        let channels = shape[1], planeSize = shape[2] * shape[3]
        return bias.data.withUnsafeBufferPointer { biasBuffer in
            let b = biasBuffer.baseAddress!
            return makeTensor(shape, rowLength: planeSize) { plane, index in
                plane.initialize(repeating: b[index % channels], count: planeSize)
            }
        }
    }

    /// A new [..., n] tensor whose every row is a copy of `bias` [n] (zeros without bias).
    static func biasSeededRows(_ shape: [Int], bias: FloatTensor?) -> FloatTensor {
        guard let bias else { return zeroTensor(shape) }
        let rowLength = shape.last ?? 1
        return bias.data.withUnsafeBufferPointer { biasBuffer in
            let b = biasBuffer.baseAddress!
            return makeTensor(shape, rowLength: rowLength) { row, _ in row.initialize(from: b, count: rowLength) }
        }
    }
}

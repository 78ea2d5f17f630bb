import SAMTensor
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension Kernels {
    /// Softmax over the last dimension, in place. Subtracts each row's max before exponentiating
    /// so large logits cannot overflow.
    public static func softmaxLastDim(_ x: inout FloatTensor) {
        guard let rowLength = x.shape.last, rowLength > 0, x.count > 0 else { return }
        let rows = x.count / rowLength
        x.data.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            parallelRanges(rows, minimumChunk: max(1, 16_384 / rowLength)) { rowRange in
                for r in rowRange { softmaxRow(base + r * rowLength, count: rowLength) }
            }
        }
    }

    /// Stable softmax of one contiguous row, in place.
    @inline(__always)
    static func softmaxRow(_ row: UnsafeMutablePointer<Float>, count: Int) {
        var rowMax = row[0]
        for j in 1..<count { rowMax = max(rowMax, row[j]) }
        var sum: Float = 0
        for j in 0..<count {
            let e = expf(row[j] - rowMax)
            row[j] = e
            sum += e
        }
        let inverseSum = 1 / sum
        for j in 0..<count { row[j] *= inverseSum }
    }
}

import CVectorMath
import SAMTensor
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

extension Kernels {
    /// Softmax over the last dimension, in place. Subtracts each row's max before exponentiating
    /// so large logits cannot overflow.
    package static func softmaxLastDim(_ x: inout FloatTensor) {
        guard let rowLength = x.shape.last, rowLength > 0, x.count > 0 else { return }
        let rows = x.count / rowLength
        x.data.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            parallelRanges(rows, minimumChunk: max(1, 16_384 / rowLength)) { rowRange in
                for r in rowRange { softmaxRow(base + r * rowLength, count: rowLength) }
            }
        }
    }

    /// Stable softmax of one contiguous row, in place, after adding `bias` (same length) when
    /// given: max, then exp and sum, then scale, eight lanes at a time.
    @inline(__always)
    static func softmaxRow(_ row: UnsafeMutablePointer<Float>, count: Int, adding bias: UnsafePointer<Float>? = nil) {
        if let bias { addInPlace(row, bias, count: count) }
        let rowMax = maxOfRow(UnsafePointer(row), count: count)
        scaleRow(row, count: count, by: 1 / exponentiateRow(row, count: count, minus: rowMax))
    }

    /// One block of keys of a running softmax (flash attention's order) for one query row: `row` holds
    /// the block's scores and becomes their weights exp(score - max), the row's running maximum is raised
    /// to the block's, and its sum and output so far (`outputCount` floats) are scaled by exp(old - new)
    /// before the block's weights are added to the sum. While every score so far is -inf (a masking
    /// bias) the weights are 0 and the maximum and sum stay, as the whole row's softmax gives them.
    @inline(__always)
    static func runningSoftmaxStep(_ row: UnsafeMutablePointer<Float>, count: Int, runningMax: inout Float, sum: inout Float,
                                   output: UnsafeMutablePointer<Float>, outputCount: Int) {
        let raised = max(runningMax, maxOfRow(UnsafePointer(row), count: count))
        guard raised > -.infinity else {
            row.update(repeating: 0, count: count)
            return
        }
        // exp(-inf) = 0 before the first block: the sum and output are still zero.
        let factor = expf(runningMax - raised)
        if factor != 1 { scaleRow(output, count: outputCount, by: factor) }
        sum = sum * factor + exponentiateRow(row, count: count, minus: raised)
        runningMax = raised
    }

    /// row[j] *= factor for j < count.
    @inline(__always)
    static func scaleRow(_ row: UnsafeMutablePointer<Float>, count: Int, by factor: Float) {
        let vectorEnd = count & ~7
        var j = 0
        if vectorEnd >= 16 && wideVectorsAvailable {
            sam_scale_avx512(row, Int64(vectorEnd), factor)
            j = vectorEnd
        }
        while j < vectorEnd { row.store8(row.load8(at: j) * factor, at: j); j += 8 }
        while j < count { row[j] *= factor; j += 1 }
    }

    /// The largest of row[0..<count] (-inf for none).
    @inline(__always)
    static func maxOfRow(_ row: UnsafePointer<Float>, count: Int) -> Float {
        let vectorEnd = count & ~7
        var rowMax = maxOfVectors(row, count: vectorEnd)
        for j in vectorEnd..<count { rowMax = max(rowMax, row[j]) }
        return rowMax
    }

    /// row[j] = exp(row[j] - shift) in place for j < count; returns their sum.
    @inline(__always)
    static func exponentiateRow(_ row: UnsafeMutablePointer<Float>, count: Int, minus shift: Float) -> Float {
        let vectorEnd = count & ~7
        // The tail is padded into one more vector so every element goes through exp8.
        var sums = exponentiateVectors(row, count: vectorEnd, minus: shift)
        let j = vectorEnd
        if j < count {
            // Lanes past the row end hold -inf, whose exp is set to 0. (Copies through memory:
            // per-lane SIMD subscripts compile to slow code.)
            let tailCount = count - j
            var tail = SIMD8<Float>(repeating: -.infinity)
            withUnsafeMutableBytes(of: &tail) { bytes in
                let lanes = bytes.baseAddress!.assumingMemoryBound(to: Float.self)
                for lane in 0..<tailCount { lanes[lane] = row[j + lane] }
            }
            var e = exp8(tail - shift).replacing(with: 0, where: tail .== -.infinity)
            withUnsafeBytes(of: &e) { bytes in
                let lanes = bytes.baseAddress!.assumingMemoryBound(to: Float.self)
                for lane in 0..<tailCount { row[j + lane] = lanes[lane] }
            }
            sums += e
        }
        return horizontalSum(sums)
    }

    /// The largest of row[0..<count], count a multiple of 8 (-inf for none).
    @inline(__always)
    static func maxOfVectors(_ row: UnsafePointer<Float>, count: Int) -> Float {
        if count >= 16 && wideVectorsAvailable { return sam_maximum_avx512(row, Int64(count)) }
        var maxima = SIMD8<Float>(repeating: -.infinity)
        var j = 0
        while j < count { maxima = pointwiseMax8(maxima, row.load8(at: j)); j += 8 }
        return horizontalMax(maxima)
    }

    /// row[j] = exp(row[j] - shift) in place for j < count (a multiple of 8); returns the
    /// lane-wise sums of the exponentials.
    @inline(__always)
    static func exponentiateVectors(_ row: UnsafeMutablePointer<Float>, count: Int, minus shift: Float) -> SIMD8<Float> {
        // Rows of two vectors or more go sixteen lanes at a time where the CPU can (same bits).
        if count >= 16 && wideVectorsAvailable { return exponentiateWideVectors(row, count: count, minus: shift) }
        var sums = SIMD8<Float>(repeating: 0)
        var j = 0
        while j < count {
            let e = exp8(row.load8(at: j) - shift)
            row.store8(e, at: j)
            sums += e
            j += 8
        }
        return sums
    }

    // The generic SIMD reductions (`max()`, `sum()`) are calls that walk the lanes; these are
    // inlined shuffles and adds (softmax of a 49-wide row: ~30% faster).
    @inline(__always)
    static func horizontalMax(_ v: SIMD8<Float>) -> Float {
        let folded = pointwiseMax8(v, SIMD8(v[4], v[5], v[6], v[7], v[0], v[1], v[2], v[3]))
        return max(max(folded[0], folded[1]), max(folded[2], folded[3]))
    }

    @inline(__always)
    static func horizontalSum(_ v: SIMD8<Float>) -> Float {
        ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]))
    }

    /// Lane-wise max as compare-and-blend (the generic `pointwiseMax` is not inlined).
    @inline(__always)
    static func pointwiseMax8(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
        a.replacing(with: b, where: b .> a)
    }
}

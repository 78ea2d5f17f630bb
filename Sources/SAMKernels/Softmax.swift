import SAMTensor

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

    /// Stable softmax of one contiguous row, in place, after adding `bias` (same length) when
    /// given: max, then exp and sum, then scale, eight lanes at a time.
    @inline(__always)
    static func softmaxRow(_ row: UnsafeMutablePointer<Float>, count: Int, adding bias: UnsafePointer<Float>? = nil) {
        let vectorEnd = count & ~7
        if let bias {
            var j = 0
            while j < vectorEnd { row.store8(row.load8(at: j) + bias.load8(at: j), at: j); j += 8 }
            while j < count { row[j] += bias[j]; j += 1 }
        }
        var maxima = SIMD8<Float>(repeating: -.infinity)
        var j = 0
        while j < vectorEnd { maxima = pointwiseMax8(maxima, row.load8(at: j)); j += 8 }
        var rowMax = maxima.max()
        while j < count { rowMax = max(rowMax, row[j]); j += 1 }

        // The tail is padded into one more vector so every element goes through exp8.
        var sums = SIMD8<Float>(repeating: 0)
        j = 0
        while j < vectorEnd {
            let e = exp8(row.load8(at: j) - rowMax)
            row.store8(e, at: j)
            sums += e
            j += 8
        }
        if j < count {
            // Lanes past the row end hold -inf, whose exp is set to 0. (Copies through memory:
            // per-lane SIMD subscripts compile to slow code.)
            let tailCount = count - j
            var tail = SIMD8<Float>(repeating: -.infinity)
            withUnsafeMutableBytes(of: &tail) { $0.baseAddress!.assumingMemoryBound(to: Float.self).update(from: row + j, count: tailCount) }
            var e = exp8(tail - rowMax).replacing(with: 0, where: tail .== -.infinity)
            withUnsafeBytes(of: &e) { (row + j).update(from: $0.baseAddress!.assumingMemoryBound(to: Float.self), count: tailCount) }
            sums += e
        }
        let inverseSum = 1 / sums.sum()
        j = 0
        while j < vectorEnd { row.store8(row.load8(at: j) * inverseSum, at: j); j += 8 }
        while j < count { row[j] *= inverseSum; j += 1 }
    }

    /// Lane-wise max as compare-and-blend (the generic `pointwiseMax` is not inlined).
    @inline(__always)
    static func pointwiseMax8(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
        a.replacing(with: b, where: b .> a)
    }
}

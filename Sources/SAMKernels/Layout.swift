import SAMTensor

extension Kernels {
    /// NCHW [B, C, H, W] -> tokens [B, H*W, C]; with `y` (the same shape as x), the tokens of
    /// x + y, added as the blocks are transposed rather than in a pass of their own.
    package static func nchwToTokens(_ x: FloatTensor, plus y: FloatTensor? = nil) -> FloatTensor {
        precondition(x.shape.count == 4, "nchwToTokens: expected NCHW, got \(x.shape)")
        if let y { precondition(y.shape == x.shape, "nchwToTokens: shapes \(x.shape) and \(y.shape) differ") }
        let batch = x.shape[0], channels = x.shape[1], pixels = x.shape[2] * x.shape[3]
        return FloatTensor(shape: [batch, pixels, channels],
                           data: transposed(x.data, adding: y?.data, batch: batch, rows: channels, columns: pixels))
    }

    /// Tokens [B, H*W, C] -> NCHW [B, C, H, W].
    package static func tokensToNCHW(_ x: FloatTensor, height: Int, width: Int) -> FloatTensor {
        precondition(x.shape.count == 3 && x.shape[1] == height * width,
                     "tokensToNCHW: \(x.shape) is not [B, \(height)*\(width), C]")
        let batch = x.shape[0], channels = x.shape[2]
        return FloatTensor(shape: [batch, channels, height, width],
                           data: transposed(x.data, batch: batch, rows: height * width, columns: channels))
    }

    /// The transposes [columns, rows] of the `batch` row-major [rows, columns] matrices in
    /// `source`.
    ///
    /// Eight-by-eight blocks are transposed in registers. A task is a strip of 64 source
    /// columns (64 destination rows) walked eight source rows at a time, so the lines read
    /// together are few even when the source rows are a multiple of 4 KB apart (an NCHW plane of
    /// 64x64 is 16 KB: a taller tile of such rows maps to one L1 set and is evicted before it is
    /// used up; that made the decoder's three transposes ~1.6 ms each).
    /// With `addend` (as long as `source`), the transposes of source + addend.
    static func transposed(_ source: [Float], adding addend: [Float]? = nil, batch: Int, rows: Int, columns: Int) -> [Float] {
        let count = batch * rows * columns
        return [Float](unsafeUninitializedCapacity: count) { destinationBuffer, initializedCount in
            defer { initializedCount = count }
            guard count > 0 else { return }
            let strip = 64
            let strips = (columns + strip - 1) / strip
            source.withUnsafeBufferPointer { sourceBuffer in
            (addend ?? []).withUnsafeBufferPointer { addendBuffer in
                let sourceBase = sourceBuffer.baseAddress!, destinationBase = destinationBuffer.baseAddress!
                // An empty array may still have a base address, so decide by `addend` itself.
                let addendBase = addend == nil ? nil : addendBuffer.baseAddress
                parallelFor(batch * strips) { task in
                    let matrixOffset = (task / strips) * rows * columns
                    let from = sourceBase + matrixOffset, to = destinationBase + matrixOffset
                    let c0 = (task % strips) * strip, c1 = min(c0 + strip, columns)
                    transpose(from + c0, adding: addendBase.map { $0 + matrixOffset + c0 }, stride: columns, rows: rows,
                              columns: c1 - c0, into: to + c0 * rows, stride: rows)
                }
            }
            }
        }
    }

    /// destination[c * destinationStride + r] = source[r * sourceStride + c] (+ addend[r *
    /// sourceStride + c] when given) for r < rows and c < columns: 8x8 blocks in registers,
    /// walked eight source rows at a time, the edges element by element.
    @inline(__always)
    static func transpose(_ source: UnsafePointer<Float>, adding addend: UnsafePointer<Float>? = nil,
                          stride sourceStride: Int, rows: Int, columns: Int,
                          into destination: UnsafeMutablePointer<Float>, stride destinationStride: Int) {
        @inline(__always) func element(_ row: Int, _ column: Int) -> Float {
            let offset = row * sourceStride + column
            return addend.map { source[offset] + $0[offset] } ?? source[offset]
        }
        let vectorColumnsEnd = columns / 8 * 8
        var r = 0
        while r + 8 <= rows {
            var c = 0
            while c < vectorColumnsEnd {
                let offset = r * sourceStride + c
                transpose8x8(source + offset, adding: addend.map { $0 + offset }, stride: sourceStride,
                             into: destination + c * destinationStride + r, stride: destinationStride)
                c += 8
            }
            for column in vectorColumnsEnd..<columns {
                for row in r..<(r + 8) {
                    (destination + column * destinationStride + row).initialize(to: element(row, column))
                }
            }
            r += 8
        }
        for row in r..<rows {
            for column in 0..<columns {
                (destination + column * destinationStride + row).initialize(to: element(row, column))
            }
        }
    }

    /// Writes the transpose of the 8x8 block at `source` (rows `sourceStride` apart) to
    /// `destination` (rows `destinationStride` apart): three rounds of splitting every pair of
    /// rows into their even and odd lanes, which for 2^3 rows is a transpose.
    @inline(__always)
    private static func transpose8x8(_ source: UnsafePointer<Float>, adding addend: UnsafePointer<Float>?,
                                     stride sourceStride: Int,
                                     into destination: UnsafeMutablePointer<Float>, stride destinationStride: Int) {
        var r0 = source.load8(at: 0), r1 = source.load8(at: sourceStride)
        var r2 = source.load8(at: 2 * sourceStride), r3 = source.load8(at: 3 * sourceStride)
        var r4 = source.load8(at: 4 * sourceStride), r5 = source.load8(at: 5 * sourceStride)
        var r6 = source.load8(at: 6 * sourceStride), r7 = source.load8(at: 7 * sourceStride)
        if let a = addend {
            r0 += a.load8(at: 0); r1 += a.load8(at: sourceStride)
            r2 += a.load8(at: 2 * sourceStride); r3 += a.load8(at: 3 * sourceStride)
            r4 += a.load8(at: 4 * sourceStride); r5 += a.load8(at: 5 * sourceStride)
            r6 += a.load8(at: 6 * sourceStride); r7 += a.load8(at: 7 * sourceStride)
        }
        for _ in 0..<3 {
            (r0, r1, r2, r3, r4, r5, r6, r7) = (
                SIMD8(lowHalf: r0.evenHalf, highHalf: r1.evenHalf), SIMD8(lowHalf: r2.evenHalf, highHalf: r3.evenHalf),
                SIMD8(lowHalf: r4.evenHalf, highHalf: r5.evenHalf), SIMD8(lowHalf: r6.evenHalf, highHalf: r7.evenHalf),
                SIMD8(lowHalf: r0.oddHalf, highHalf: r1.oddHalf), SIMD8(lowHalf: r2.oddHalf, highHalf: r3.oddHalf),
                SIMD8(lowHalf: r4.oddHalf, highHalf: r5.oddHalf), SIMD8(lowHalf: r6.oddHalf, highHalf: r7.oddHalf))
        }
        destination.store8(r0, at: 0); destination.store8(r1, at: destinationStride)
        destination.store8(r2, at: 2 * destinationStride); destination.store8(r3, at: 3 * destinationStride)
        destination.store8(r4, at: 4 * destinationStride); destination.store8(r5, at: 5 * destinationStride)
        destination.store8(r6, at: 6 * destinationStride); destination.store8(r7, at: 7 * destinationStride)
    }
}

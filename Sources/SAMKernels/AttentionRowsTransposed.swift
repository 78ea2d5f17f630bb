import SAMTensor

extension Kernels {
    /// Whether `attendRows` takes the small-heads kernels: AVX-512 (the sixteen-lane rows product),
    /// value heads a whole number of vectors of eight, and keys few enough that their transpose is
    /// a scratch buffer (windows: 16 to 196 keys in Hiera, 49 in TinyViT).
    static func attendRowsTransposedPays(keys: Int, valueDim: Int) -> Bool {
        wideVectorsAvailable && valueDim % 8 == 0 && keys <= 1024
    }

    /// `attendRows` on the small-heads kernels (`attentionSmallHeads` for one head and one block of
    /// rows): the keys transposed to [D, stride], the scores six rows by thirty-two keys at a time,
    /// the softmax numerators in place, then the values read in place and each output row divided
    /// by its sum as it is stored. Same result as the sgemm path up to rounding order.
    static func attendRowsTransposed(_ rows: Int, q: UnsafePointer<Float>, qStride: Int, keys: Int,
                                     k: UnsafePointer<Float>, kStride: Int, headDim: Int,
                                     v: UnsafePointer<Float>, vStride: Int, valueDim: Int, scale: Float,
                                     biasRow: (Int) -> UnsafePointer<Float>?,
                                     into out: UnsafeMutablePointer<Float>, outStride: Int) {
        let paddedKeys = paddedKeyCount(keys), keyStride = transposedKeyStride(keys)
        let floats = headDim * keyStride + rows * paddedKeys + rows
        withUnsafeTemporaryAllocation(of: Float.self, capacity: floats) { buffer in
            let keysT = buffer.baseAddress!, numerators = keysT + headDim * keyStride
            let inverseSums = numerators + rows * paddedKeys
            transposeKeys(k, rowStride: kStride, keyLength: keys, headDim: headDim, into: keysT, stride: keyStride)
            withUnsafePointer(to: scale) { scale in
                scaledRowsProduct(a: q, aStride: qStride, rows: rows, depth: headDim, b: keysT, bStride: keyStride,
                                  columns: paddedKeys, rowScales: scale, scaleStride: 0, into: numerators, outStride: paddedKeys)
            }
            // Bias rows are per query (a cropped window's queries are not consecutive positions).
            for r in 0..<rows {
                if let bias = biasRow(r) { addInPlace(numerators + r * paddedKeys, bias, count: keys) }
            }
            softmaxNumerators(numerators, rows: rows, count: keys, paddedCount: paddedKeys, adding: nil,
                              inverseSums: inverseSums)
            scaledRowsProduct(a: numerators, aStride: paddedKeys, rows: rows, depth: keys, b: v, bStride: vStride,
                              columns: valueDim, rowScales: inverseSums, scaleStride: 1, into: out, outStride: outStride)
        }
    }
}

import SAMTensor

extension Kernels {
    /// NCHW [B, C, H, W] -> tokens [B, H*W, C].
    public static func nchwToTokens(_ x: FloatTensor) -> FloatTensor {
        precondition(x.shape.count == 4, "nchwToTokens: expected NCHW, got \(x.shape)")
        let batch = x.shape[0], channels = x.shape[1], pixels = x.shape[2] * x.shape[3]
        var output = zeroTensor([batch, pixels, channels])
        transposeBatched(x.data, into: &output.data, batch: batch, rows: channels, columns: pixels)
        return output
    }

    /// Tokens [B, H*W, C] -> NCHW [B, C, H, W].
    public static func tokensToNCHW(_ x: FloatTensor, height: Int, width: Int) -> FloatTensor {
        precondition(x.shape.count == 3 && x.shape[1] == height * width,
                     "tokensToNCHW: \(x.shape) is not [B, \(height)*\(width), C]")
        let batch = x.shape[0], channels = x.shape[2]
        var output = zeroTensor([batch, channels, height, width])
        transposeBatched(x.data, into: &output.data, batch: batch, rows: height * width, columns: channels)
        return output
    }

    /// For each of `batch` row-major [rows, columns] matrices in `source`, writes its transpose
    /// [columns, rows] to `destination`. Works in square tiles so both sides stay in cache.
    static func transposeBatched(_ source: [Float], into destination: inout [Float], batch: Int, rows: Int, columns: Int) {
        guard batch > 0, rows > 0, columns > 0 else { return }
        let tile = 32
        let columnTiles = (columns + tile - 1) / tile
        source.withUnsafeBufferPointer { sourceBuffer in
            destination.withUnsafeMutableBufferPointer { destinationBuffer in
                let sourceBase = sourceBuffer.baseAddress!, destinationBase = destinationBuffer.baseAddress!
                // A task is one strip of `tile` source columns = `tile` whole destination rows.
                parallelFor(batch * columnTiles) { task in
                    let matrixOffset = (task / columnTiles) * rows * columns
                    let from = sourceBase + matrixOffset, to = destinationBase + matrixOffset
                    let c0 = (task % columnTiles) * tile, c1 = min(c0 + tile, columns)
                    var r0 = 0
                    while r0 < rows {
                        let r1 = min(r0 + tile, rows)
                        for c in c0..<c1 {
                            for r in r0..<r1 { to[c * rows + r] = from[r * columns + c] }
                        }
                        r0 = r1
                    }
                }
            }
        }
    }
}

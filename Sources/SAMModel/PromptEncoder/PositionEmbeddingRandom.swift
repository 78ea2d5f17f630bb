import SAMKernels
import SAMTensor
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Positional encoding with random spatial frequencies (`prompt_encoder.pe_layer`): a point
/// (x, y) in [0, 1]² becomes [sin(2π·p), cos(2π·p)] with p = (2·(x, y) − 1) · G, G being the
/// [2, F] Gaussian matrix stored in the weights, so the encoding has 2F channels.
package struct PositionEmbeddingRandom: Sendable {
    package let path: String
    /// `positional_encoding_gaussian_matrix`, [2, F] (a buffer, saved in the state dict).
    package let gaussianMatrix: FloatTensor

    /// F, the number of random frequencies; the encoding has `2 * frequencyCount` channels.
    package var frequencyCount: Int { gaussianMatrix.shape[1] }
    package var channels: Int { 2 * frequencyCount }

    /// Loads `path.positional_encoding_gaussian_matrix` [2, embedDim / 2].
    package init(weights: WeightStore, path: String, embedDim: Int) throws(WeightError) {
        self.path = path
        guard embedDim % 2 == 0 else {
            throw .invalid(key: "\(path).positional_encoding_gaussian_matrix",
                           reason: "embed dim \(embedDim) is odd; sin/cos halves need an even dim", source: weights.source)
        }
        gaussianMatrix = try weights.take("\(path).positional_encoding_gaussian_matrix", shape: [2, embedDim / 2])
    }

    /// Writes the encoding of one point already normalised to [0, 1]² into `out[0..<channels]`
    /// (F sines, then F cosines), in float32 step by step as PyTorch evaluates it.
    /// ref: prompt_encoder.py PositionEmbeddingRandom._pe_encoding
    @inline(__always)
    func encode(x: Float, y: Float, into out: UnsafeMutablePointer<Float>) {
        let f = frequencyCount
        // ref: _pe_encoding — coords = 2 * coords - 1
        let cx = 2 * x - 1, cy = 2 * y - 1
        // ref: _pe_encoding — 2 * np.pi * coords, the python scalar rounded to float32 by torch
        let twoPi = Float(2 * Double.pi)
        gaussianMatrix.data.withUnsafeBufferPointer { g in
            for j in 0..<f {
                // ref: _pe_encoding — coords @ self.positional_encoding_gaussian_matrix
                let projected = cx * g[j] + cy * g[f + j]
                let angle = twoPi * projected
                // ref: _pe_encoding — torch.cat([torch.sin(coords), torch.cos(coords)], dim=-1)
                out[j] = sinf(angle)
                out[f + j] = cosf(angle)
            }
        }
    }

    /// Encodes points given in pixels of a `width` x `height` image: x / width, y / height, then
    /// `encode`. `pixels` holds interleaved (x, y) pairs (the caller adds the +0.5 pixel-centre
    /// shift). Returns [1, N, 2F].
    /// ref: prompt_encoder.py PositionEmbeddingRandom.forward_with_coords
    package func encode(pixels: [Float], width: Int, height: Int) -> FloatTensor {
        let pointCount = pixels.count / 2
        var out = FloatTensor(zeros: [1, pointCount, channels])
        let w = Float(width), h = Float(height)
        out.data.withUnsafeMutableBufferPointer { buffer in
            for n in 0..<pointCount {
                // ref: forward_with_coords — coords[:, :, 0] / image_size[1]; coords[:, :, 1] / image_size[0]
                encode(x: pixels[2 * n] / w, y: pixels[2 * n + 1] / h, into: buffer.baseAddress! + n * channels)
            }
        }
        return out
    }

    /// The encoding of every cell centre of a `height` x `width` grid, [1, 2F, height, width]
    /// (what `PromptEncoder.get_dense_pe` returns for the image embedding grid).
    /// ref: prompt_encoder.py PositionEmbeddingRandom.forward
    package func denseGrid(height: Int, width: Int) -> FloatTensor {
        let c = channels, plane = height * width
        let f = frequencyCount
        // ref: forward — x_embed = grid.cumsum(dim=1) - 0.5; x_embed / w, then 2 * x - 1 (_pe_encoding)
        // (padded to whole vectors; the padding columns are computed, never stored)
        let paddedWidth = (width + 7) & ~7
        let xs = (0..<paddedWidth).map { j in 2 * ((Float(j + 1) - 0.5) / Float(width)) - 1 }
        let twoPi = Float(2 * Double.pi)
        let data = [Float](unsafeUninitializedCapacity: c * plane) { buffer, initializedCount in
            gaussianMatrix.data.withUnsafeBufferPointer { g in
                xs.withUnsafeBufferPointer { xBuffer in
                    let base = buffer.baseAddress!, cx = xBuffer.baseAddress!
                    // A grid is half a million sin/cos (64x64x128 of each): rows run in parallel,
                    // eight columns at a time through Kernels.sinCos8.
                    Kernels.parallelFor(height) { i in
                        // ref: forward — y_embed = grid.cumsum(dim=0) - 0.5; y_embed / h, then 2 * y - 1
                        let cy = 2 * ((Float(i + 1) - 0.5) / Float(height)) - 1
                        for k in 0..<f {
                            let sines = base + k * plane + i * width, cosines = base + (f + k) * plane + i * width
                            var j = 0
                            while j < width {
                                // ref: _pe_encoding — coords @ G, then 2 * np.pi * coords (float32 steps as
                                // in `encode`), then sin and cos
                                let x8 = UnsafeRawPointer(cx + j).loadUnaligned(as: SIMD8<Float>.self)
                                let (sine, cosine) = Kernels.sinCos8(twoPi * (x8 * g[k] + cy * g[f + k]))
                                if j + 8 <= width {
                                    UnsafeMutableRawPointer(sines + j).storeBytes(of: sine, as: SIMD8<Float>.self)
                                    UnsafeMutableRawPointer(cosines + j).storeBytes(of: cosine, as: SIMD8<Float>.self)
                                } else {
                                    for lane in 0..<(width - j) {
                                        (sines + j + lane).initialize(to: sine[lane])
                                        (cosines + j + lane).initialize(to: cosine[lane])
                                    }
                                }
                                j += 8
                            }
                        }
                    }
                }
            }
            initializedCount = c * plane
        }
        return FloatTensor(shape: [1, c, height, width], data: data)
    }
}

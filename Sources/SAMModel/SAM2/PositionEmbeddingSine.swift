import Foundation
import SAMTensor

/// sam2/modeling/position_encoding.py `PositionEmbeddingSine` as the FPN neck builds it
/// (normalize=True, scale 2π, temperature 10000): for an H x W map, channels [0, C/2) encode the
/// row and [C/2, C) the column, sin on even and cos on odd channels. Image mode computes it for
/// every neck level but never reads it (the memory modules of video mode do); the runtime makes it
/// only for observers, so per-module dumps line up.
package struct PositionEmbeddingSine: Sendable, Equatable {
    /// C, the neck's width (num_pos_feats of the config; each axis gets C / 2).
    package let channels: Int
    package let temperature: Double = 10_000

    package init(channels: Int) { self.channels = channels }

    /// [batch, C, height, width], in float32 as torch computes it (the products and quotients
    /// rounded to float; sin and cos of the rounded argument).
    /// ref: position_encoding.py PositionEmbeddingSine._pe
    package func callAsFunction(batch: Int, height: Int, width: Int) -> FloatTensor {
        let half = channels / 2
        let scale = Float(2 * Double.pi), eps: Float = 1e-6
        // ref: _pe — dim_t = temperature ** (2 * (dim_t // 2) / num_pos_feats), in float32
        let dimT = (0..<half).map { i in Float(pow(temperature, Double(Float(2 * (i / 2)) / Float(half)))) }
        // ref: _pe — y_embed = arange(1, H + 1) / (y_embed[:, -1:, :] + eps) * scale
        let rows = (1...max(height, 1)).map { Float($0) / (Float(height) + eps) * scale }
        let columns = (1...max(width, 1)).map { Float($0) / (Float(width) + eps) * scale }
        var data = [Float](repeating: 0, count: batch * channels * height * width)
        let plane = height * width
        for c in 0..<channels {
            let axisChannel = c % half, rowAxis = c < half
            for y in 0..<height {
                for x in 0..<width {
                    // ref: _pe — pos = x_embed[..., None] / dim_t; stack(sin of even, cos of odd)
                    let argument = (rowAxis ? rows[y] : columns[x]) / dimT[axisChannel]
                    let value = axisChannel % 2 == 0 ? sinf(argument) : cosf(argument)
                    for b in 0..<batch { data[(b * channels + c) * plane + y * width + x] = value }
                }
            }
        }
        return FloatTensor(shape: [batch, channels, height, width], data: data)
    }
}

import Foundation
import SAMTensor

/// SAM 2's axial rotary position encoding on a w x h token grid: a head's D channels are D/2
/// complex pairs (2j, 2j+1); the first D/4 pairs turn by the token's column times a frequency, the
/// last D/4 by its row. Tokens are numbered row-major (t: column t % w, row t / w).
/// ref: sam2/modeling/position_encoding.py compute_axial_cis, init_t_xy, apply_rotary_enc
package struct AxialRotaryEncoding: Sendable {
    package let headDim: Int
    package let width: Int
    package let height: Int
    /// cos and sin of each token's D/2 angles, [tokens * D/2].
    let cosines: [Float]
    let sines: [Float]

    package init(headDim: Int, width: Int, height: Int, theta: Double) {
        precondition(headDim % 4 == 0, "axial RoPE needs a head width divisible by 4, got \(headDim)")
        self.headDim = headDim
        self.width = width
        self.height = height
        let quarter = headDim / 4, half = headDim / 2
        // ref: compute_axial_cis — freqs = 1 / (theta ** (arange(0, dim, 4)[: dim // 4].float() / dim)), float32
        let frequencies = (0..<quarter).map { i -> Float in
            let exponent = Float(4 * i) / Float(headDim)
            return 1 / Float(pow(Float(theta), exponent))
        }
        var cosines = [Float](repeating: 0, count: width * height * half)
        var sines = cosines
        for t in 0..<(width * height) {
            // ref: init_t_xy — t_x = t % end_x, t_y = t // end_x
            let x = Float(t % width), y = Float(t / width)
            for j in 0..<half {
                // ref: torch.outer(t, freqs) in float32, then torch.polar(1, angle)
                let angle = j < quarter ? x * frequencies[j] : y * frequencies[j - quarter]
                cosines[t * half + j] = cosf(angle)
                sines[t * half + j] = sinf(angle)
            }
        }
        self.cosines = cosines
        self.sines = sines
    }

    package var tokenCount: Int { width * height }

    /// Rotates tokens [0, count) of `x` ([L, heads * D], row-major) in place; token i takes the angles
    /// of grid position i % tokenCount (`repeat_freqs_k`: the memories of several frames share the grid).
    /// ref: apply_rotary_enc — view_as_complex(x) * freqs_cis, view_as_real
    package func rotate(_ x: inout [Float], tokens count: Int, heads: Int) {
        let half = headDim / 2, rowWidth = heads * headDim
        precondition(x.count >= count * rowWidth, "RoPE: \(x.count) values hold fewer than \(count) tokens of \(rowWidth)")
        x.withUnsafeMutableBufferPointer { values in
            cosines.withUnsafeBufferPointer { cosines in
                sines.withUnsafeBufferPointer { sines in
                    for token in 0..<count {
                        let angles = (token % tokenCount) * half
                        for head in 0..<heads {
                            let base = token * rowWidth + head * headDim
                            for j in 0..<half {
                                let re = values[base + 2 * j], im = values[base + 2 * j + 1]
                                let c = cosines[angles + j], s = sines[angles + j]
                                // (re + i im)(c + i s)
                                values[base + 2 * j] = re * c - im * s
                                values[base + 2 * j + 1] = re * s + im * c
                            }
                        }
                    }
                }
            }
        }
    }
}

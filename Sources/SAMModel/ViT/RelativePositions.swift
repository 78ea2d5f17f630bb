import SAMKernels
import SAMTensor

extension ImageEncoderViT {
    /// `rel_pos_h` or `rel_pos_w` [L, head_dim] gathered for a grid of `querySize` queries and
    /// `keySize` keys: [querySize, keySize, head_dim], entry (i, j) = rel_pos[(i - j) + keySize - 1]
    /// after resizing the table to 2 * max(querySize, keySize) - 1 entries where it has another
    /// length (linear interpolation, align_corners=False, as F.interpolate computes it in float).
    /// ref: segment_anything/modeling/image_encoder.py get_rel_pos
    static func gatheredRelativePositions(_ table: FloatTensor, querySize: Int, keySize: Int) -> FloatTensor {
        let length = table.shape[0], dim = table.shape[1]
        let wanted = 2 * max(querySize, keySize) - 1
        let resized = length == wanted ? table : resizedLinearly(table, to: wanted)
        let queryScale = max(Double(keySize) / Double(querySize), 1), keyScale = max(Double(querySize) / Double(keySize), 1)
        var out = FloatTensor(zeros: [querySize, keySize, dim])
        for i in 0..<querySize {
            for j in 0..<keySize {
                // .long() of a non-negative coordinate: truncation.
                let index = Int(Double(i) * queryScale - Double(j) * keyScale + Double(keySize - 1) * keyScale)
                let source = index * dim, destination = (i * keySize + j) * dim
                out.data.replaceSubrange(destination..<(destination + dim), with: resized.data[source..<(source + dim)])
            }
        }
        return out
    }

    /// F.interpolate(table.reshape(1, L, -1).permute(0, 2, 1), size=n, mode="linear") back to [n, dim].
    /// ref: aten/src/ATen/native/UpSample.h area_pixel_compute_source_index, upsample_linear1d
    static func resizedLinearly(_ table: FloatTensor, to size: Int) -> FloatTensor {
        let length = table.shape[0], dim = table.shape[1]
        let scale = Float(length) / Float(size)
        var out = FloatTensor(zeros: [size, dim])
        for x in 0..<size {
            let source = max(scale * (Float(x) + 0.5) - 0.5, 0)
            let lower = Int(source), upper = lower + (lower < length - 1 ? 1 : 0)
            let upperWeight = source - Float(lower), lowerWeight = 1 - upperWeight
            for c in 0..<dim {
                out.data[x * dim + c] = lowerWeight * table.data[lower * dim + c] + upperWeight * table.data[upper * dim + c]
            }
        }
        return out
    }
}

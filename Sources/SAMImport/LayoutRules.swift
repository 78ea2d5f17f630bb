import SAMArchitecture
import SAMTensor

/// A layout rule's precondition failed; the importer adds the file and tensor.
struct LayoutRuleError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Every layout change between an exported tensor and its canonical form, in one place.
/// Each is applied only when a mapping rule (name or consumer) asked for it, never guessed
/// from a shape; each checks the shape it expects.
enum LayoutRules {
    /// Linear weight stored for `x @ W` as [in, out] -> PyTorch's [out, in].
    /// ref: torch.nn.functional.linear = x @ weight.T; TorchScript exports MatMul(x, weight.T).
    static func linearWeightFromMatMul(_ stored: Tensor) throws(LayoutRuleError) -> Tensor {
        guard stored.shape.count == 2 else {
            throw LayoutRuleError("a MatMul weight must be 2-D [in,out], got \(Shape.text(stored.shape))")
        }
        // out[j, i] = stored[i, j]
        return stored.transposed2D()
    }

    /// LayerNorm2d's `weight[:, None, None]` / `bias[:, None, None]`, stored [C,1,1] -> [C].
    /// ref: mobile_sam/modeling/common.py LayerNorm2d.forward, tiny_vit_sam.py LayerNorm2d.forward.
    static func channelAffine(_ stored: Tensor) throws(LayoutRuleError) -> Tensor {
        guard stored.shape.count == 3, stored.shape[1] == 1, stored.shape[2] == 1 else {
            throw LayoutRuleError("a LayerNorm2d affine must be [C,1,1], got \(Shape.text(stored.shape))")
        }
        return stored.reshaped(checked: [stored.shape[0]])
    }

    /// A LayerNorm2d affine broadcast with a batch axis, `weight.view(1, -1, 1, 1)`: [1,C,1,1] -> [C].
    /// ref: efficientsam/models/nn/norm.py LayerNorm2d.forward (L17).
    static func batchedChannelAffine(_ stored: Tensor) throws(LayoutRuleError) -> Tensor {
        guard stored.shape.count == 4, stored.shape[0] == 1, stored.shape[2] == 1, stored.shape[3] == 1 else {
            throw LayoutRuleError("a LayerNorm2d affine viewed as (1, -1, 1, 1) must be [1,C,1,1], got \(Shape.text(stored.shape))")
        }
        return stored.reshaped(checked: [stored.shape[1]])
    }

    /// `no_mask_embed.weight.reshape(1, -1, 1, 1)`, stored [1,C,1,1] -> the embedding's [1,C].
    /// ref: prompt_encoder.py PromptEncoder.forward; utils/onnx.py SamOnnxModel._embed_masks.
    static func noMaskEmbedding(_ stored: Tensor) throws(LayoutRuleError) -> Tensor {
        guard stored.shape.count == 4, stored.shape[0] == 1, stored.shape[2] == 1, stored.shape[3] == 1 else {
            throw LayoutRuleError("a reshaped no-mask embedding must be [1,C,1,1], got \(Shape.text(stored.shape))")
        }
        return stored.reshaped(checked: [1, stored.shape[1]])
    }

    /// `cat([iou_token.weight, mask_tokens.weight]).unsqueeze(0)`, stored [1, 1+M, C] ->
    /// `iou_token.weight` [1,C] and `mask_tokens.weight` [M,C].
    /// ref: mask_decoder.py MaskDecoder.predict_masks (output_tokens).
    static func splitOutputTokens(_ stored: Tensor) throws(LayoutRuleError) -> (iouToken: Tensor, maskTokens: Tensor) {
        guard stored.shape.count == 3, stored.shape[0] == 1, stored.shape[1] >= 2 else {
            throw LayoutRuleError("concatenated output tokens must be [1, 1+num_mask_tokens, C], got \(Shape.text(stored.shape))")
        }
        let (tokens, channels) = (stored.shape[1], stored.shape[2])
        let iou = stored.gathered(shape: [1, channels], count: channels) { $0 }
        let masks = stored.gathered(shape: [tokens - 1, channels], count: (tokens - 1) * channels) { channels + $0 }
        return (iou, masks)
    }

    /// `get_dense_pe().flatten(2).permute(0, 2, 1)`, stored [1, g*g, C] -> [1, C, g, g].
    /// ref: transformer.py TwoWayTransformer.forward (image_pe flattened to tokens).
    static func densePEFromTokens(_ stored: Tensor) throws(LayoutRuleError) -> Tensor {
        guard stored.shape.count == 3, stored.shape[0] == 1, let side = exactSquareRoot(stored.shape[1]) else {
            throw LayoutRuleError("dense PE tokens must be [1, g*g, C], got \(Shape.text(stored.shape))")
        }
        let (positions, channels) = (stored.shape[1], stored.shape[2])
        // out[c, p] = stored[p, c]
        return stored.gathered(shape: [1, channels, side, side], count: positions * channels) { index in
            let (c, p) = index.quotientAndRemainder(dividingBy: positions)
            return p * channels + c
        }
    }

    /// TinyViT's eval-mode cache `attention_biases[:, attention_bias_idxs]` [H, N, N] -> the
    /// parameter `attention_biases` [H, offsets]. Every (i, j) with the same offset must hold the
    /// same bits (it was a gather), or the table is not what upstream builds and this throws.
    static func attentionBiasesFromTable(_ stored: Tensor) throws(LayoutRuleError) -> Tensor {
        guard stored.shape.count == 3, stored.shape[1] == stored.shape[2] else {
            throw LayoutRuleError("an attention-bias table must be [heads, N, N], got \(Shape.text(stored.shape))")
        }
        let (heads, points) = (stored.shape[0], stored.shape[1])
        guard let window = exactSquareRoot(points) else {
            throw LayoutRuleError("an attention-bias table covers a square window, but N = \(points) is not a square")
        }
        let offsets = AttentionBiasOffsets(height: window, width: window)
        let (indices, offsetCount) = (offsets.indices, offsets.offsetCount)
        // First (i, j) of each offset, then check every other (i, j) against it.
        var representative = [Int](repeating: -1, count: offsetCount)
        for (pair, offset) in indices.enumerated() where representative[offset] < 0 { representative[offset] = pair }
        for head in 0..<heads {
            let base = head * points * points
            for (pair, offset) in indices.enumerated() where !stored.elementBitsEqual(base + pair, base + representative[offset]) {
                let (i, j) = pair.quotientAndRemainder(dividingBy: points)
                let (ri, rj) = representative[offset].quotientAndRemainder(dividingBy: points)
                throw LayoutRuleError("not a gathered attention-bias table: head \(head) (\(i),\(j)) = \(stored.value(at: base + pair)) but "
                    + "(\(ri),\(rj)), same offset \(offset), = \(stored.value(at: base + representative[offset])) (window \(window))")
            }
        }
        return stored.gathered(shape: [heads, offsetCount], count: heads * offsetCount) { index in
            let (head, offset) = index.quotientAndRemainder(dividingBy: offsetCount)
            return head * points * points + representative[offset]
        }
    }

    /// SAM ViT's relative positions gathered for a square grid of side s, [s, s, d] with entry
    /// (i, j) = rel_pos[i - j + s - 1] (what exporters fold get_rel_pos into) -> the table
    /// [2s - 1, d]. Every (i, j) with the same i - j must hold the same bits, or this throws.
    /// ref: segment_anything/modeling/image_encoder.py get_rel_pos (query and key sizes equal)
    static func relativePositionsFromGathered(_ stored: Tensor) throws(LayoutRuleError) -> Tensor {
        guard stored.shape.count == 3, stored.shape[0] == stored.shape[1], stored.shape[0] >= 1 else {
            throw LayoutRuleError("gathered relative positions must be [s, s, head_dim], got \(Shape.text(stored.shape))")
        }
        let (side, dim) = (stored.shape[0], stored.shape[2])
        // Entry t of the table: the first (i, j) with i - j = t - (s - 1).
        func representative(_ t: Int) -> (i: Int, j: Int) {
            let difference = t - (side - 1)
            return difference >= 0 ? (difference, 0) : (0, -difference)
        }
        for i in 0..<side {
            for j in 0..<side {
                let (ri, rj) = representative(i - j + side - 1)
                for c in 0..<dim where !stored.elementBitsEqual((i * side + j) * dim + c, (ri * side + rj) * dim + c) {
                    throw LayoutRuleError("not gathered relative positions: (\(i),\(j)) differs from (\(ri),\(rj)) "
                        + "at channel \(c), though both stand for offset \(i - j)")
                }
            }
        }
        return stored.gathered(shape: [2 * side - 1, dim], count: (2 * side - 1) * dim) { index in
            let (t, c) = index.quotientAndRemainder(dividingBy: dim)
            let (i, j) = representative(t)
            return (i * side + j) * dim + c
        }
    }

    /// Eval-mode BatchNorm folded into the convolution before it (`BatchNormFold`), shapes checked.
    /// Output dtype is the weight's (float16 stays float16).
    static func foldBatchNorm(weight: Tensor, convBias: Tensor?, gamma: Tensor, beta: Tensor, mean: Tensor,
                              variance: Tensor, eps: Double) throws(LayoutRuleError) -> (weight: Tensor, bias: Tensor) {
        guard let channels = weight.shape.first, channels > 0 else {
            throw LayoutRuleError("conv weight \(Shape.text(weight.shape)) has no output channels")
        }
        for (name, tensor) in [("bn.weight", gamma), ("bn.bias", beta), ("bn.running_mean", mean), ("bn.running_var", variance)]
            + (convBias.map { [("c.bias", $0)] } ?? []) where tensor.shape != [channels] {
            throw LayoutRuleError("\(name) has shape \(Shape.text(tensor.shape)), the conv has \(channels) output channels")
        }
        let (folded, bias) = BatchNormFold.fold(channels: channels, weight: weight.value(at:), weightCount: weight.elementCount,
                                                convBias: convBias.map { $0.value(at:) }, gamma: gamma.value(at:),
                                                beta: beta.value(at:), mean: mean.value(at:), variance: variance.value(at:), eps: eps)
        let dtype: DType = weight.dtype == .float16 ? .float16 : .float32
        return (Tensor.floating(dtype, shape: weight.shape, values: folded), Tensor.floating(dtype, shape: [channels], values: bias))
    }

    static func exactSquareRoot(_ value: Int) -> Int? {
        guard value > 0 else { return nil }
        let root = Int(Double(value).squareRoot().rounded())
        return root * root == value ? root : nil
    }
}

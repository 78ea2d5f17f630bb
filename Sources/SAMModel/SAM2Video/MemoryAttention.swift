import SAMKernels
import SAMTensor

/// SAM 2's memory attention (`memory_attention`): the current frame's tokens attend to themselves,
/// then to the memories and object pointers, in `layers` pre-norm layers with a ReLU feed-forward,
/// then a final LayerNorm. As every published config builds it: the position encoding added at the
/// input (scaled by 0.1) and to the cross-attention keys only (`pos_enc_at_input`,
/// `pos_enc_at_cross_attn_keys`; not at self-attention nor at the cross-attention queries).
/// ref: sam2/modeling/memory_attention.py MemoryAttention, MemoryAttentionLayer
package struct MemoryAttention: Sendable {
    package struct Layer: Sendable {
        package let selfAttention: RoPEAttention
        package let crossAttention: RoPEAttention
        package let linear1: NN.Linear
        package let linear2: NN.Linear
        package let norm1: NN.LayerNorm
        package let norm2: NN.LayerNorm
        package let norm3: NN.LayerNorm
    }

    package let path: String
    package let layers: [Layer]
    package let norm: NN.LayerNorm
    package let theta: Double

    package var modelDim: Int { norm.weight.count }
    package var memoryDim: Int { layers[0].crossAttention.keyValueDim }

    package init(weights: WeightStore, path: String, config: SAM2VideoConfig, modelDim: Int) throws(WeightError) {
        self.path = path
        theta = config.ropeTheta
        guard config.memoryAttentionLayers >= 1 else {
            throw .invalid(key: "\(path).layers", reason: "the memory attention has no layers", source: weights.source)
        }
        layers = try (0..<config.memoryAttentionLayers).map { (index) throws(WeightError) in
            let layer = "\(path).layers.\(index)"
            let selfAttention = try RoPEAttention(weights: weights, path: "\(layer).self_attn", embeddingDim: modelDim,
                                                  keyValueDim: modelDim, heads: config.memoryAttentionHeads, theta: config.ropeTheta)
            let crossAttention = try RoPEAttention(weights: weights, path: "\(layer).cross_attn_image", embeddingDim: modelDim,
                                                   keyValueDim: config.memoryDim, heads: config.memoryAttentionHeads,
                                                   theta: config.ropeTheta)
            return Layer(selfAttention: selfAttention, crossAttention: crossAttention,
                         linear1: try NN.Linear(weights: weights, path: "\(layer).linear1", inFeatures: modelDim,
                                                outFeatures: config.memoryAttentionFeedForward),
                         linear2: try NN.Linear(weights: weights, path: "\(layer).linear2", inFeatures: config.memoryAttentionFeedForward,
                                                outFeatures: modelDim),
                         norm1: try NN.LayerNorm(weights: weights, path: "\(layer).norm1", dim: modelDim),
                         norm2: try NN.LayerNorm(weights: weights, path: "\(layer).norm2", dim: modelDim),
                         norm3: try NN.LayerNorm(weights: weights, path: "\(layer).norm3", dim: modelDim))
        }
        norm = try NN.LayerNorm(weights: weights, path: "\(path).norm", dim: modelDim)
    }

    /// The rotary encoding of a `width` x `height` grid of tokens, as the attention layers use it: the
    /// same for every frame of a clip, so a tracker makes it once.
    package func rotaryEncoding(width: Int, height: Int) -> AxialRotaryEncoding {
        AxialRotaryEncoding(headDim: layers[0].selfAttention.headDim, width: width, height: height, theta: theta)
    }

    /// current [L, C] (the frame's tokens, row-major over the rotary encoding's grid) and their position
    /// encoding -> the tokens after the first layer's self-attention [L, C]: the memories enter only at
    /// the first cross-attention, so every object tracked on a frame has the same, and a frame with
    /// several objects makes it once (`callAsFunction(firstSelfAttended:...)`).
    /// ref: MemoryAttention.forward — output = curr + 0.1 * curr_pos; layers[0]._forward_sa
    package func firstSelfAttended(current: FloatTensor, currentPosition: FloatTensor, rope: AxialRotaryEncoding,
                                   observer: ModuleObserver? = nil) -> FloatTensor {
        var output = current
        for i in output.data.indices { output.data[i] += 0.1 * currentPosition.data[i] }
        selfAttend(&output, layers[0], rope: rope, observer: observer)
        return output
    }

    /// The frame's tokens after `firstSelfAttended` [L, C] attended with the memories and object
    /// pointers: memory and its position encoding [M, mem_dim], whose last `pointerTokens` rows are
    /// object pointers -> [L, C].
    /// ref: MemoryAttention.forward, MemoryAttentionLayer.forward, _forward_sa, _forward_ca
    package func callAsFunction(firstSelfAttended: FloatTensor, memory: FloatTensor, memoryPosition: FloatTensor, pointerTokens: Int,
                               rope: AxialRotaryEncoding, observer: ModuleObserver? = nil) -> FloatTensor {
        // ref: _forward_ca — k = memory + pos
        var keys = memory
        Kernels.add(&keys, memoryPosition)
        var output = firstSelfAttended
        for (index, layer) in layers.enumerated() {
            if index > 0 { selfAttend(&output, layer, rope: rope, observer: observer) }
            // ref: _forward_ca — tgt2 = norm2(tgt); cross_attn_image(q=tgt2, k=memory + pos, v=memory)
            let normed2 = layer.norm2.normalized(output)
            Kernels.add(&output, layer.crossAttention(queries: normed2, keys: keys, values: memory, rope: rope,
                                                      excludedKeys: pointerTokens, observer: observer))
            // ref: forward — tgt2 = linear2(relu(linear1(norm3(tgt)))); tgt = tgt + tgt2
            let normed3 = layer.norm3.normalized(output)
            let hidden = layer.linear1(normed3, then: .relu)
            output = layer.linear2(hidden, then: Kernels.Epilogue(residual: output))
            observer?("\(path).layers.\(index)", output)
        }
        norm(&output, observer: observer)
        return output
    }

    /// ref: _forward_sa — tgt2 = norm1(tgt); q = k = v = tgt2; tgt = tgt + self_attn(q, k, v)
    private func selfAttend(_ output: inout FloatTensor, _ layer: Layer, rope: AxialRotaryEncoding, observer: ModuleObserver?) {
        let normed1 = layer.norm1.normalized(output)
        Kernels.add(&output, layer.selfAttention(queries: normed1, keys: normed1, values: normed1, rope: rope, observer: observer))
    }
}

/// The modules of SAM's image encoders with weights, in forward order, for matching graphs
/// stripped of names. Block counts come from what the graph holds.
enum SAMEncoderModuleOrder {
    /// MobileSAM's TinyViT: a convolutional stage of MBConv blocks, then attention stages; every
    /// stage but the last ends in a PatchMerging. Conv2d_BN layers are exported with their
    /// BatchNorm folded, so each is one convolution under `<name>.c`.
    /// ref: mobile_sam/modeling/tiny_vit_sam.py TinyViT.forward_features, ConvLayer, MBConv,
    /// PatchMerging, BasicLayer, TinyViTBlock.forward, Attention, Mlp; TinyViT.neck.
    static func tinyViT(convolutionalBlocks: Int, attentionStageDepths: [Int]) -> [ExpectedModule] {
        var order = [ExpectedModule("image_encoder.patch_embed.seq.0.c", .conv),
                     ExpectedModule("image_encoder.patch_embed.seq.2.c", .conv)]
        func patchMerging(_ stage: Int) -> [ExpectedModule] {
            ["conv1", "conv2", "conv3"].map { ExpectedModule("image_encoder.layers.\(stage).downsample.\($0).c", .conv) }
        }
        for block in 0..<convolutionalBlocks {
            order += ["conv1", "conv2", "conv3"].map { ExpectedModule("image_encoder.layers.0.blocks.\(block).\($0).c", .conv) }
        }
        order += patchMerging(0)
        for (offset, depth) in attentionStageDepths.enumerated() {
            let stage = offset + 1
            for block in 0..<depth {
                let prefix = "image_encoder.layers.\(stage).blocks.\(block)."
                order += [ExpectedModule(prefix + "attn.norm", .layerNorm), ExpectedModule(prefix + "attn", .fusedAttention),
                          ExpectedModule(prefix + "local_conv.c", .conv), ExpectedModule(prefix + "mlp.norm", .layerNorm),
                          ExpectedModule(prefix + "mlp.fc1", .linear), ExpectedModule(prefix + "mlp.fc2", .linear)]
            }
            if offset < attentionStageDepths.count - 1 { order += patchMerging(stage) }
        }
        return order + neck
    }

    /// SAM's ViT: patch embedding, absolute positions, blocks, neck.
    /// ref: segment_anything/modeling/image_encoder.py ImageEncoderViT.forward, Block.forward.
    static func vit(depth: Int) -> [ExpectedModule] {
        var order = [ExpectedModule("image_encoder.patch_embed.proj", .conv),
                     ExpectedModule("image_encoder", .positionEmbedding)]
        for block in 0..<depth {
            let prefix = "image_encoder.blocks.\(block)."
            order += [ExpectedModule(prefix + "norm1", .layerNorm), ExpectedModule(prefix + "attn", .fusedAttention),
                      ExpectedModule(prefix + "norm2", .layerNorm), ExpectedModule(prefix + "mlp.lin1", .linear),
                      ExpectedModule(prefix + "mlp.lin2", .linear)]
        }
        return order + neck
    }

    /// Conv 1x1, LayerNorm2d, Conv 3x3, LayerNorm2d (both families).
    static let neck = [ExpectedModule("image_encoder.neck.0", .conv), ExpectedModule("image_encoder.neck.1", .channelAffine),
                       ExpectedModule("image_encoder.neck.2", .conv), ExpectedModule("image_encoder.neck.3", .channelAffine)]
}

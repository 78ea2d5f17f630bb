/// Where SAM-HQ takes its early features from an encoder, and their size: SAM's ViT hands out the
/// output of its first global-attention block, TinyViT the output of its second stage.
/// ref: segment_anything_hq/modeling/image_encoder.py ImageEncoderViT.forward (interm_embeddings,
/// blocks with window_size == 0); tiny_vit_sam.py TinyViT.forward_features (i == 1)
struct EarlyFeatures: Sendable, Equatable {
    /// The tapped module's state-dict path (`image_encoder.blocks.2`, `image_encoder.layers.1`).
    var path: String
    var channels: Int
    /// Side of the square token grid the module outputs.
    var side: Int

    init?(_ encoder: AnyImageEncoderConfig, prefix: String) {
        if let vit = encoder.as(ViTConfig.self) {
            guard let first = vit.globalAttentionIndexes.min() else { return nil }
            (path, channels, side) = ("\(prefix).blocks.\(first)", vit.embedDim, vit.gridSize)
        } else if let tinyViT = encoder.as(TinyViTConfig.self) {
            // Stage 1 ends with a PatchMerging to stage 2's width: patch embedding (two stride-2 convs),
            // then the first two stages' merges, each a 3x3 pad-1 conv mapping n to (n - 1) / s + 1.
            guard tinyViT.embedDims.count > 2, tinyViT.mergeStrides.count > 1 else { return nil }
            var side = tinyViT.imageSize
            for stride in [2, 2] + tinyViT.mergeStrides.prefix(2) { side = (side - 1) / max(stride, 1) + 1 }
            (path, channels, self.side) = ("\(prefix).layers.1", tinyViT.embedDims[2], side)
        } else {
            return nil
        }
    }
}

import SAMTensor

/// A block a TinyViT stage repeats: it keeps the channel count and the map size.
package protocol TinyViTStageBlock: Sendable {
    var dim: Int { get }
    func callAsFunction(_ x: FloatTensor, observer: ModuleObserver?) -> FloatTensor
}

extension TinyViT.MBConv: TinyViTStageBlock {}
extension TinyViT.TinyViTBlock: TinyViTStageBlock {}

extension TinyViT {
    /// tiny_vit_sam.py ConvLayer: stage 0, a list of MBConv blocks on the NCHW map, then the
    /// PatchMerging `downsample` (which turns the map into tokens).
    package typealias ConvLayer = Stage<MBConv>
    /// tiny_vit_sam.py BasicLayer: an attention stage, a list of TinyViTBlocks on tokens, then the
    /// PatchMerging `downsample` except in the last stage.
    package typealias BasicLayer = Stage<TinyViTBlock>

    /// One stage (`layers.i`): `depth` blocks (`path.blocks.N`), then the optional downsample.
    /// Upstream's ConvLayer and BasicLayer differ only in their block type.
    package struct Stage<Block: TinyViTStageBlock>: Sendable {
        package let path: String
        package let inputResolution: GridSize
        package let blocks: [Block]
        /// nil only in the last stage.
        package let downsample: PatchMerging?

        package var dim: Int { blocks.first?.dim ?? 0 }
        /// Width and grid of what this stage hands to the next one.
        package var outputDim: Int { downsample?.outDim ?? dim }
        package var outputResolution: GridSize { downsample?.outputResolution ?? inputResolution }

        /// Loads `depth` blocks with `makeBlock(path.blocks.N)`, then `path.downsample` when
        /// `downsampleStride` is given.
        init(weights: WeightStore, path: String, dim: Int, depth: Int, inputResolution: GridSize, downsampleStride: Int?,
             makeBlock: (String) throws(WeightError) -> Block) throws(WeightError) {
            self.path = path
            self.inputResolution = inputResolution
            var blocks: [Block] = []
            for index in 0..<depth { blocks.append(try makeBlock("\(path).blocks.\(index)")) }
            self.blocks = blocks
            downsample = try downsampleStride.map { stride throws(WeightError) in
                try PatchMerging(weights: weights, path: "\(path).\(PatchMerging.key)", dim: dim,
                                 inputResolution: inputResolution, stride: stride)
            }
        }

        /// ConvLayer: NCHW [B, dim, H, W] -> tokens [B, H'*W', outDim] (NCHW unchanged if there is no
        /// downsample). BasicLayer: tokens [B, H*W, dim] -> tokens [B, H'*W', outDim].
        // ref: tiny_vit_sam.py ConvLayer.forward (L178-186), BasicLayer.forward (L436-444)
        package func callAsFunction(_ input: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            var x = input
            for block in blocks {
                x = block(x, observer: observer)
            }
            if let downsample {
                x = downsample(x, observer: observer)
            }
            observer?(path, x)
            return x
        }
    }
}

extension TinyViT.Stage where Block == TinyViT.MBConv {
    init(weights: WeightStore, path: String, dim: Int, depth: Int, inputResolution: TinyViT.GridSize,
         downsampleStride: Int?) throws(WeightError) {
        try self.init(weights: weights, path: path, dim: dim, depth: depth, inputResolution: inputResolution,
                      downsampleStride: downsampleStride) { blockPath throws(WeightError) in
            try TinyViT.MBConv(weights: weights, path: blockPath, dim: dim)
        }
    }
}

extension TinyViT.Stage where Block == TinyViT.TinyViTBlock {
    init(weights: WeightStore, path: String, dim: Int, depth: Int, inputResolution: TinyViT.GridSize,
         downsampleStride: Int?) throws(WeightError) {
        try self.init(weights: weights, path: path, dim: dim, depth: depth, inputResolution: inputResolution,
                      downsampleStride: downsampleStride) { blockPath throws(WeightError) in
            try TinyViT.TinyViTBlock(weights: weights, path: blockPath, dim: dim, inputResolution: inputResolution)
        }
    }
}

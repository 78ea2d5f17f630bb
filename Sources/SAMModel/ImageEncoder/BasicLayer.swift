import SAMTensor

extension TinyViT {
    /// tiny_vit_sam.py BasicLayer: an attention stage, a list of TinyViTBlocks on tokens, then the
    /// PatchMerging `downsample` except in the last stage.
    public struct BasicLayer: Sendable {
        public let path: String
        public let inputResolution: GridSize
        public let blocks: [TinyViTBlock]
        public let downsample: PatchMerging?

        public var dim: Int { blocks.first?.dim ?? 0 }

        init(weights: WeightStore, path: String, dim: Int, depth: Int, inputResolution: GridSize,
             downsampleStride: Int?) throws(WeightError) {
            self.path = path
            self.inputResolution = inputResolution
            var blocks: [TinyViTBlock] = []
            for index in 0..<depth {
                blocks.append(try TinyViTBlock(weights: weights, path: "\(path).blocks.\(index)", dim: dim,
                                               inputResolution: inputResolution))
            }
            self.blocks = blocks
            downsample = try downsampleStride.map { stride throws(WeightError) in
                try PatchMerging(weights: weights, path: "\(path).\(PatchMerging.key)", dim: dim,
                                 inputResolution: inputResolution, stride: stride)
            }
        }

        public var outputDim: Int { downsample?.outDim ?? dim }
        public var outputResolution: GridSize { downsample?.outputResolution ?? inputResolution }

        /// tokens [B, H*W, dim] -> tokens [B, H'*W', outDim]
        // ref: tiny_vit_sam.py BasicLayer.forward (L436-444)
        public func callAsFunction(_ input: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
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

import SAMTensor

extension TinyViT {
    /// tiny_vit_sam.py ConvLayer: stage 0, a list of MBConv blocks on the NCHW map, then the
    /// PatchMerging `downsample` (which turns the map into tokens).
    public struct ConvLayer: Sendable {
        public let path: String
        public let inputResolution: GridSize
        public let blocks: [MBConv]
        /// nil only when this is the last stage (MobileSAM never has that).
        public let downsample: PatchMerging?

        public var dim: Int { blocks.first?.dim ?? 0 }

        init(weights: WeightStore, path: String, dim: Int, depth: Int, inputResolution: GridSize,
             downsampleStride: Int?) throws(WeightError) {
            self.path = path
            self.inputResolution = inputResolution
            var blocks: [MBConv] = []
            for index in 0..<depth {
                blocks.append(try MBConv(weights: weights, path: "\(path).blocks.\(index)", dim: dim))
            }
            self.blocks = blocks
            downsample = try downsampleStride.map { stride throws(WeightError) in
                try PatchMerging(weights: weights, path: "\(path).\(PatchMerging.key)", dim: dim,
                                 inputResolution: inputResolution, stride: stride)
            }
        }

        /// Width and grid of what this stage hands to the next one.
        public var outputDim: Int { downsample?.outDim ?? dim }
        public var outputResolution: GridSize { downsample?.outputResolution ?? inputResolution }

        /// NCHW [B, dim, H, W] -> tokens [B, H'*W', outDim] (NCHW unchanged if there is no downsample).
        // ref: tiny_vit_sam.py ConvLayer.forward (L178-186)
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

import SAMKernels
import SAMTensor

extension TinyViT {
    /// tiny_vit_sam.py TinyViTBlock: windowed attention with a residual, a depthwise conv
    /// (`local_conv`) on the map view, then the Mlp with a residual. Tokens [B, H*W, dim] in and out.
    package struct TinyViTBlock: Sendable {
        package let path: String
        package let inputResolution: GridSize
        package let attn: Attention
        /// Depthwise Conv2d_BN, local_conv_size x local_conv_size, pad local_conv_size / 2.
        package let localConv: Conv2dBN
        package let mlp: Mlp
        /// The padded windows of the step-by-step path (see callAsFunction).
        package let windows: WindowPartition
        /// Windows up to this side run as `Attention.windowed`, whose tasks hold a window's whole
        /// side⁴ score matrix (~4 MB at 32); larger ones go through the row-blocked padded path.
        static let largestFusedWindow = 32

        package var dim: Int { attn.dim }
        package var windowSize: Int { attn.windowSize }

        init(weights: WeightStore, path: String, dim: Int, inputResolution: GridSize) throws(WeightError) {
            self.path = path
            self.inputResolution = inputResolution
            // ref: tiny_vit_sam.py TinyViTBlock.__init__ (L319-333)
            attn = try Attention(weights: weights, path: "\(path).\(Attention.key)", dim: dim)
            mlp = try Mlp(weights: weights, path: "\(path).\(Mlp.key)", dim: dim)
            localConv = try Conv2dBN(weights: weights, path: "\(path).local_conv", inChannels: dim,
                                     grouping: .depthwise)
            // pad = ks // 2 keeps the map size only for odd ks (upstream would fail its view otherwise).
            guard localConv.kernelSize % 2 == 1 else {
                throw .invalid(key: "\(localConv.path).c.weight", reason: "local_conv kernel \(localConv.kernelSize) is even; "
                               + "the map would change size", source: weights.source)
            }
            windows = WindowPartition(resolution: inputResolution, window: attn.windowSize)
        }

        /// [B, H*W, dim] -> [B, H*W, dim]
        // ref: tiny_vit_sam.py TinyViTBlock.forward (L335-376); drop_path is the identity at inference.
        package func callAsFunction(_ x: FloatTensor, observer: ModuleObserver? = nil) -> FloatTensor {
            let (height, width) = (inputResolution.height, inputResolution.width)
            precondition(x.shape.count == 3 && x.shape[1] == height * width && x.shape[2] == dim,
                         "\(path): input \(x.shape) is not [B, \(height)*\(width), \(dim)]")
            let batch = x.shape[0]

            // L369: x = res_x + attn(x)
            let attended: FloatTensor
            if height == windowSize && width == windowSize {
                // L340-341: the map is exactly one window
                var y = attn(x, observer: observer)
                Kernels.add(&y, x)
                attended = y
            } else if observer == nil && windowSize <= Self.largestFusedWindow {
                // L343-367 without materialising the padded windows
                attended = attn.windowed(x, grid: Kernels.WindowGrid(height: height, width: width, window: windowSize),
                                         plusResidual: x)
            } else {
                // L343-367 step by step, so an observer sees the attention's own [windows, N, dim]
                // output: pad, partition, attend, reverse, crop (the residual added while merging)
                let windowed = attn(windows.partition(x), observer: observer)
                attended = windows.merge(windowed, batch: batch, plusResidual: x)
            }

            // L371-373: transpose(1, 2).reshape(B, C, H, W) -> local_conv -> view(B, C, L).transpose(1, 2),
            // computed on the tokens directly (the transposes only move data).
            let y = localConv.onTokens(attended, height: height, width: width, observer: observer)

            // L375: x = x + mlp(x)
            let output = mlp(y, plusResidual: y, observer: observer)
            observer?(path, output)
            return output
        }
    }
}

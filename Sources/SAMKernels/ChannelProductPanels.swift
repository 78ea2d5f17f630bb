import CVectorMath

extension Kernels {
    /// Whether convolutions' products over tiles of pixels (`conv2d`'s 1x1 tiles and im2col bands, the
    /// inverted residual's rows) run on the panel product (`PanelChannelProduct`) instead of one sgemm
    /// per tile: where the panel product runs on 512-bit vectors and is `linear`'s float32 product. Each
    /// sgemm packed both operands (OpenBLAS's copy was 9% of `sambench inverted-residual --case MBConv`'s
    /// samples); the panel product reads the weight rows in place and copies the tile's pixels. Intel
    /// Xeon (family 6, model 207), 2 threads, alternating builds: TinyViT's MBConv by rows 49.0-49.6 ->
    /// 43.6-45.1 ms, its expansion alone 13.4-13.6 -> 10.2, its first patch-embedding convolution
    /// 5.4-5.7 -> 4.1-4.2, EfficientViT-SAM L0's 256 -> 6144 expansion at 32x32 16.0-16.1 -> 13.1-13.3;
    /// none of `sambench conv`'s cases slower (2 rounds, 4 more for the three that moved least; L0's
    /// 1024 -> 256 at 32x32 level: docs/performance.md). On Zen 4 the two were within ±5% on TinyViT's
    /// channel products (2026-11); not timed there since.
    static var channelProductPanelsChosen: Bool {
        panelProductOnWideVectors && float32LinearKernel == .panels
    }

    /// `channelProduct` on the panel product, for one task's tiles of `pixels` pixels: out[o, 0..<pixels] =
    /// epilogue(Σ_c weight[o, c] * x[c, 0..<pixels] + bias[o]) (no bias: 0). The pixels are packed as the
    /// product's features into this object's buffer (one per task, reused for every tile), the weight's
    /// rows are the product's rows; the bias is added after each sum, as sgemm with beta = 1 adds the bias-seeded
    /// output after its sum.
    final class PanelChannelProduct {
        let outChannels: Int, inChannels: Int, pixels: Int
        private let panels: UnsafeMutablePointer<Float>

        init(outChannels: Int, inChannels: Int, pixels: Int) {
            (self.outChannels, self.inChannels, self.pixels) = (outChannels, inChannels, pixels)
            let floats = max(1, Int(sam_panel_floats(Int64(pixels), Int64(inChannels))))
            panels = UnsafeMutableRawPointer.allocate(byteCount: floats * MemoryLayout<Float>.size, alignment: 64)
                .bindMemory(to: Float.self, capacity: floats)
        }

        deinit { panels.deallocate() }

        /// weight [outChannels, inChannels]; rows of `x` are `xStride` apart, rows of `out` (and of
        /// `residual`) `outStride` apart. Single-threaded.
        func callAsFunction(weight: UnsafePointer<Float>, bias: UnsafePointer<Float>?, x: UnsafePointer<Float>, xStride: Int,
                            into out: UnsafeMutablePointer<Float>, outStride: Int,
                            activation: Epilogue.Activation, residual: UnsafePointer<Float>?) {
            let panelCount = (pixels + 31) / 32
            sam_pack_panels(x, Int64(pixels), Int64(inChannels), 1, Int64(xStride), 0, Int64(panelCount), panels)
            sam_panel_product_avx512(weight, Int64(inChannels), Int64(outChannels), Int64(inChannels), panels, Int64(pixels),
                                     0, Int64(panelCount), 1, nil, out, Int64(outStride))
            for channel in 0..<outChannels {
                let row = out + channel * outStride
                if let b = bias?[channel] { for i in 0..<pixels { row[i] += b } }
                applyEpilogue(activation, row, count: pixels, residual: residual.map { $0 + channel * outStride })
            }
        }
    }
}

import CVectorMath

extension Kernels {
    /// Whether convolutions' products over tiles of pixels (`conv2d`'s 1x1 tiles and im2col bands, the
    /// inverted residual's rows) run on the panel product (`ChannelProductTiles`) instead of one sgemm
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

    /// One task's `channelProduct` calls: on the panel product when made with `onPanels` (the caller's
    /// `channelProductPanelsChosen`, read before its parallel loop: the workers do not inherit its
    /// task-local choice), else `channelProduct`'s sgemm. On the panel product the tile's pixels are
    /// packed as the product's features into this object's buffer (grown to the largest tile, reused
    /// for the task's every tile), the weight's rows are the product's rows, and the bias is added after
    /// each sum, as sgemm with beta = 1 adds the bias-seeded output after its sum.
    final class ChannelProductTiles {
        private let onPanels: Bool
        private var panels: UnsafeMutablePointer<Float>?
        private var panelCapacity = 0

        init(onPanels: Bool) { self.onPanels = onPanels }

        deinit { panels?.deallocate() }

        /// `channelProduct`'s contract: out[o, 0..<pixels] = epilogue(bias[o] + Σ_c weight[o, c] *
        /// x[c, 0..<pixels]) (no bias: 0) for weight [outChannels, inChannels]; rows of `x` are `xStride`
        /// apart, rows of `out` (and of `residual`) `outStride` apart. Single-threaded.
        func callAsFunction(weight: UnsafePointer<Float>, bias: UnsafePointer<Float>?, outChannels: Int, inChannels: Int,
                            x: UnsafePointer<Float>, xStride: Int, pixels: Int,
                            into out: UnsafeMutablePointer<Float>, outStride: Int,
                            activation: Epilogue.Activation, residual: UnsafePointer<Float>?) {
            guard onPanels else {
                channelProduct(weight: weight, bias: bias, outChannels: outChannels, inChannels: inChannels, x: x,
                               xStride: xStride, pixels: pixels, into: out, outStride: outStride,
                               activation: activation, residual: residual)
                return
            }
            let panelCount = (pixels + 31) / 32
            let panels = panelBuffer(floats: Int(sam_panel_floats(Int64(pixels), Int64(inChannels))))
            sam_pack_panels(x, Int64(pixels), Int64(inChannels), 1, Int64(xStride), 0, Int64(panelCount), panels)
            sam_panel_product_avx512(weight, Int64(inChannels), Int64(outChannels), Int64(inChannels), panels, Int64(pixels),
                                     0, Int64(panelCount), 1, nil, out, Int64(outStride))
            for channel in 0..<outChannels {
                let row = out + channel * outStride
                if let bias { addBias(bias[channel], row, count: pixels) }
                applyEpilogue(activation, row, count: pixels, residual: residual.map { $0 + channel * outStride })
            }
        }

        /// The panel buffer, 64-byte aligned, holding at least `floats`.
        private func panelBuffer(floats: Int) -> UnsafeMutablePointer<Float> {
            if let panels, floats <= panelCapacity { return panels }
            panels?.deallocate()
            panelCapacity = max(1, floats)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: panelCapacity * MemoryLayout<Float>.size, alignment: 64)
                .bindMemory(to: Float.self, capacity: panelCapacity)
            panels = buffer
            return buffer
        }
    }
}

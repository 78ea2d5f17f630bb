import SAMKernels
import SAMTensor

extension TinyViT {
    package typealias WindowPartition = SAMModel.WindowPartition
}

/// The window partition and reverse of TinyViTBlock and of SAM ViT's windowed blocks, with their
/// zero padding: tokens [B, H*W, C] are padded bottom/right with zeros to multiples of the window
/// side, then cut into [B * nH * nW, window², C] (windows in row-major order, positions row-major
/// inside a window). What the zeros stand for is the caller's: TinyViT pads before the attention's
/// LayerNorm (padded keys are the norm's bias), ViT after norm1 (padded keys are qkv's bias).
// ref: tiny_vit_sam.py TinyViTBlock.forward (L343-367); segment_anything image_encoder.py window_partition
package struct WindowPartition: Sendable, Equatable {
    package let resolution: GridSize
    package let window: Int

    package init(resolution: GridSize, window: Int) {
        precondition(window >= 1, "window side must be positive")
        self.resolution = resolution
        self.window = window
    }

    /// Windows down and across: (H + pad_b) / window, (W + pad_r) / window.
    package var windowRows: Int { (resolution.height + window - 1) / window }
    package var windowColumns: Int { (resolution.width + window - 1) / window }
    package var needsPadding: Bool { resolution.height % window != 0 || resolution.width % window != 0 }

    /// [B, H*W, C] -> [B * nH * nW, window², C], padded positions zero or `paddingRow` [C] (what a
    /// row-wise layer makes of a zero token, when the partition follows that layer).
    /// Upstream: F.pad(x, (0, 0, 0, pad_r, 0, pad_b)), then
    /// x.view(B, nH, ws, nW, ws, C).transpose(2, 3).reshape(B * nH * nW, ws * ws, C)
    package func partition(_ x: FloatTensor, paddingRow: FloatTensor? = nil) -> FloatTensor {
        let (batch, channels) = checkTokens(x)
        if let paddingRow { precondition(paddingRow.count == channels, "window partition: padding \(paddingRow.shape) is not [\(channels)]") }
        let windowCount = batch * windowRows * windowColumns
        let count = windowCount * window * window * channels
        // Each window is filled (copied rows, zero padding) by the task that owns it.
        let data = [Float](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            x.data.withUnsafeBufferPointer { source in
            (paddingRow?.data ?? []).withUnsafeBufferPointer { padding in
                let from = source.baseAddress!, to = buffer.baseAddress!
                Kernels.parallelFor(windowCount) { windowIndex in
                    let windowBase = to + windowIndex * window * window * channels
                    if paddingRow != nil, let row = padding.baseAddress {
                        for position in 0..<(window * window) { (windowBase + position * channels).initialize(from: row, count: channels) }
                    } else {
                        windowBase.initialize(repeating: 0, count: window * window * channels)
                    }
                    forEachCopiedRow(window: windowIndex) { token, windowToken, length in
                        (to + windowToken * channels).update(from: from + token * channels, count: length * channels)
                    }
                }
            }
            }
            initializedCount = count
        }
        return FloatTensor(shape: [windowCount, window * window, channels], data: data)
    }

    /// [B * nH * nW, window², C] -> [B, H*W, C], dropping the padding; with `residual`
    /// ([B, H*W, C]), returns residual + merged in the same pass (TinyViTBlock's skip connection).
    /// Upstream: x.view(B, nH, nW, ws, ws, C).transpose(2, 3).reshape(B, pH, pW, C)[:, :H, :W]
    package func merge(_ windows: FloatTensor, batch: Int, plusResidual residual: FloatTensor? = nil) -> FloatTensor {
        let windowCount = batch * windowRows * windowColumns
        precondition(windows.shape.count == 3 && windows.shape[0] == windowCount && windows.shape[1] == window * window,
                     "window merge: \(windows.shape) is not [\(batch) * \(windowRows) * \(windowColumns), \(window * window), C]")
        let channels = windows.shape[2]
        let shape = [batch, resolution.count, channels]
        if let residual { precondition(residual.shape == shape, "window merge: residual \(residual.shape) is not \(shape)") }
        let count = shape.reduce(1, *)
        // Every output token lies in exactly one window, so tasks over windows write disjoint rows.
        let data = [Float](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            windows.data.withUnsafeBufferPointer { source in
                (residual?.data ?? []).withUnsafeBufferPointer { residualBuffer in
                    let from = source.baseAddress!, to = buffer.baseAddress!
                    let skip = residual == nil ? nil : residualBuffer.baseAddress
                    Kernels.parallelFor(windowCount) { windowIndex in
                        forEachCopiedRow(window: windowIndex) { token, windowToken, length in
                            let out = to + token * channels, value = from + windowToken * channels
                            if let skip {
                                let shortcut = skip + token * channels
                                for i in 0..<(length * channels) { (out + i).initialize(to: value[i] + shortcut[i]) }
                            } else {
                                out.initialize(from: value, count: length * channels)
                            }
                        }
                    }
                }
            }
            initializedCount = count
        }
        return FloatTensor(shape: shape, data: data)
    }

    private func checkTokens(_ x: FloatTensor) -> (batch: Int, channels: Int) {
        precondition(x.shape.count == 3 && x.shape[1] == resolution.count,
                     "window partition: \(x.shape) is not [B, \(resolution.height)*\(resolution.width), C]")
        return (x.shape[0], x.shape[2])
    }

    /// Calls `copy(token, windowToken, length)` for every run of `length` consecutive tokens of
    /// one image row that lands in consecutive positions of one row of window `windowIndex`
    /// (numbered over the batch): `token` indexes the [B * H * W] token grid, `windowToken` the
    /// [B * windows * window²] window grid. Padded positions are never visited.
    private func forEachCopiedRow(window windowIndex: Int, _ copy: (_ token: Int, _ windowToken: Int, _ length: Int) -> Void) {
        let height = resolution.height, width = resolution.width
        let b = windowIndex / (windowRows * windowColumns)
        let windowRow = (windowIndex / windowColumns) % windowRows, windowColumn = windowIndex % windowColumns
        let column0 = windowColumn * window
        let length = min(window, width - column0)
        for i in 0..<window {
            let row = windowRow * window + i
            guard row < height else { break }
            copy((b * height + row) * width + column0, (windowIndex * window + i) * window, length)
        }
    }
}

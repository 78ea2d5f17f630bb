import SAMTensor

extension Kernels {
    /// Whether `pooledWindowAttention` runs: float32 products on the panel product, neither weight
    /// multiplied in int8.
    static func pooledWindowAttentionRuns(_ weights: WeightTensor...) -> Bool {
        panelAttentionChosen && linearPrecision == .float32
            && weights.allSatisfy { int8ProductCodes($0.quantized) == nil }
    }

    /// Rows of windows each task runs through its products at a time: a multiple of the panel
    /// product's twelve-row blocks, so 64-token windows waste none, and few enough that the block's
    /// q|k|v rows (576 wide at SAM 2.1's first stage transition) stay in L2 beside the weights.
    static let pooledWindowGroupRows = 192

    /// The front half of a Hiera block at a stage transition (`MultiScaleBlock` with q_pool and a
    /// window), window by window in cache. From the tokens after norm1, normed [B, H*W, C] on an
    /// H x W grid, for each `window` x `window` window (zero tokens past the grid, as upstream's
    /// padding): its q|k|v rows (qkv, [3D, C]), its queries max-pooled by `stride`, their attention
    /// over the window's keys and values (`heads` heads of D / heads, `scale`); and the shortcut,
    /// the projection (shortcutProjection, [D, C]) max-pooled by `stride` on the grid.
    /// Returns attended [windows, (window / stride)², D] in upstream's window order (before the
    /// attention's output projection) and shortcut [B, (H / stride) * (W / stride), D]; nil where
    /// `pooledWindowAttentionRuns` is false.
    ///
    /// Run layer by layer, the first transition of SAM 2.1 tiny wrote its q|k|v (151 MB) and
    /// projection (50 MB) for the whole 256x256 grid and read them back to pool and attend; here
    /// each group of windows is made, pooled and attended while it is in cache. The same kernels
    /// on the same rows in the same order: the results are those of the layers run apart.
    /// ref: sam2/modeling/backbones/hieradet.py MultiScaleBlock.forward, MultiScaleAttention.forward
    package static func pooledWindowAttention(_ normed: FloatTensor, height: Int, width: Int, window: Int, stride: Int,
                                             qkv: WeightTensor, qkvBias: FloatTensor,
                                             shortcutProjection: WeightTensor, shortcutBias: FloatTensor,
                                             heads: Int, scale: Float) -> (attended: FloatTensor, shortcut: FloatTensor)? {
        guard pooledWindowAttentionRuns(qkv, shortcutProjection) else { return nil }
        precondition(normed.shape.count == 3 && normed.shape[1] == height * width, "pooled window attention: \(normed.shape) is not [B, \(height)*\(width), C]")
        let batch = normed.shape[0], channels = normed.shape[2], dimOut = shortcutProjection.shape[0]
        precondition(qkv.shape == [3 * dimOut, channels] && shortcutProjection.shape == [dimOut, channels]
                     && qkvBias.count == 3 * dimOut && shortcutBias.count == dimOut && heads >= 1 && dimOut % heads == 0,
                     "pooled window attention: qkv \(qkv.shape) and projection \(shortcutProjection.shape) do not fit \(channels) -> \(dimOut), \(heads) heads")
        precondition(window >= 1 && stride >= 1 && window % stride == 0, "pooled window attention: window \(window) does not pool by \(stride)")
        let windowRows = (height + window - 1) / window, windowColumns = (width + window - 1) / window
        let windows = batch * windowRows * windowColumns, tokens = window * window
        let pooledWindow = window / stride, pooledTokens = pooledWindow * pooledWindow
        let outHeight = height / stride, outWidth = width / stride
        guard windows > 0, channels > 0, dimOut > 0 else { return nil }
        // Groups of at least this many windows: two (window, head) tasks per worker in each attention
        // call, as the call over every window has, so that its blocks of query rows are the same.
        let groupWindows = max(pooledWindowGroupRows / tokens, (2 * workerCount + heads - 1) / heads, 1)
        let groups = max(1, windows / groupWindows)
        func windowsOf(_ group: Int) -> Range<Int> { (windows * group / groups)..<(windows * (group + 1) / groups) }
        let largestGroup = (windows + groups - 1) / groups, rowsPerGroup = largestGroup * tokens
        var attended = [Float](), shortcut = [Float]()
        normed.data.withUnsafeBufferPointer { normedBuffer in
        qkv.withFloats { qkvWeight in
        shortcutProjection.withFloats { projectionWeight in
        qkvBias.data.withUnsafeBufferPointer { qkvBiasBuffer in
        shortcutBias.data.withUnsafeBufferPointer { projectionBiasBuffer in
            let qkvPanels = ProductPanels(features: 3 * dimOut, inputs: channels, source: qkvWeight.baseAddress!,
                                          featureStride: channels, inputStride: 1)
            let projectionPanels = ProductPanels(features: dimOut, inputs: channels, source: projectionWeight.baseAddress!,
                                                 featureStride: channels, inputStride: 1)
            let x = normedBuffer.baseAddress!
            attended = [Float](unsafeUninitializedCapacity: windows * pooledTokens * dimOut) { attendedBuffer, attendedCount in
            shortcut = [Float](unsafeUninitializedCapacity: batch * outHeight * outWidth * dimOut) { shortcutBuffer, shortcutCount in
                let attendedOut = attendedBuffer.baseAddress!, shortcutOut = shortcutBuffer.baseAddress!
                parallelForChunks(groups) { range in
                    // Per task: the group's tokens, their q|k|v rows and projections, the pooled queries.
                    let scratch = UnsafeMutablePointer<Float>.allocate(capacity: rowsPerGroup * (channels + 4 * dimOut) + largestGroup * pooledTokens * dimOut)
                    defer { scratch.deallocate() }
                    let groupTokens = scratch, groupQKV = groupTokens + rowsPerGroup * channels
                    let groupProjection = groupQKV + rowsPerGroup * 3 * dimOut, pooledQueries = groupProjection + rowsPerGroup * dimOut
                    for group in range {
                        let first = windowsOf(group).lowerBound, count = windowsOf(group).count, rows = count * tokens
                        for w in 0..<count {
                            gatherWindow(first + w, from: x, height: height, width: width, window: window, channels: channels,
                                         windowRows: windowRows, windowColumns: windowColumns, into: groupTokens + w * tokens * channels)
                        }
                        // ref: MultiScaleAttention.forward — qkv = self.qkv(x); MultiScaleBlock.forward — self.proj(x)
                        qkvPanels.product(x: groupTokens, xStride: channels, rows: rows, bias: qkvBiasBuffer.baseAddress,
                                          into: groupQKV, outStride: 3 * dimOut)
                        projectionPanels.product(x: groupTokens, xStride: channels, rows: rows, bias: projectionBiasBuffer.baseAddress,
                                                 into: groupProjection, outStride: dimOut)
                        for w in 0..<count {
                            let windowQKV = groupQKV + w * tokens * 3 * dimOut
                            // ref: do_pool(q, self.q_pool) on the window
                            poolWindow(windowQKV, window: window, stride: stride, rowWidth: 3 * dimOut, channels: dimOut,
                                       into: pooledQueries + w * pooledTokens * dimOut)
                            poolShortcut(window: first + w, projection: groupProjection + w * tokens * dimOut, dimOut: dimOut,
                                         window: window, stride: stride, windowRows: windowRows, windowColumns: windowColumns,
                                         outHeight: outHeight, outWidth: outWidth, into: shortcutOut)
                        }
                        // ref: F.scaled_dot_product_attention(q, k, v) over each window's keys and values
                        let headDim = dimOut / heads
                        let shape = AttentionShape(batch: count, queryLength: pooledTokens, keyLength: tokens, heads: heads,
                                                   headDim: headDim, valueHeadDim: headDim)
                        attention(shape, kernel: .automatic, precision: .float32, q: pooledQueries, qRowStride: dimOut,
                                  k: groupQKV + dimOut, kRowStride: 3 * dimOut, v: groupQKV + 2 * dimOut, vRowStride: 3 * dimOut,
                                  scale: scale, bias: nil, biasPerBatch: false, into: attendedOut + first * pooledTokens * dimOut)
                    }
                }
                shortcutCount = shortcutBuffer.count
            }
                attendedCount = attendedBuffer.count
            }
        }
        }
        }
        }
        }
        return (FloatTensor(shape: [windows, pooledTokens, dimOut], data: attended),
                FloatTensor(shape: [batch, outHeight * outWidth, dimOut], data: shortcut))
    }

    /// Window `index` (image-major, then down and across) of the grid's tokens into `out`
    /// [window², C], zero tokens past the grid: `WindowPartition.partition` for one window.
    private static func gatherWindow(_ index: Int, from x: UnsafePointer<Float>, height: Int, width: Int, window: Int, channels: Int,
                                     windowRows: Int, windowColumns: Int, into out: UnsafeMutablePointer<Float>) {
        let perImage = windowRows * windowColumns
        let image = index / perImage, top = (index % perImage) / windowColumns * window, left = index % windowColumns * window
        let inside = max(0, min(window, width - left))
        for row in 0..<window {
            let destination = out + row * window * channels
            if top + row < height && inside > 0 {
                destination.update(from: x + ((image * height + top + row) * width + left) * channels, count: inside * channels)
                (destination + inside * channels).update(repeating: 0, count: (window - inside) * channels)
            } else {
                destination.update(repeating: 0, count: window * channels)
            }
        }
    }

    /// `maxPoolTokens` of one window's rows (rowWidth apart, the first `channels` of each) into
    /// out [(window / stride)², channels].
    private static func poolWindow(_ rows: UnsafePointer<Float>, window: Int, stride: Int, rowWidth: Int, channels: Int,
                                   into out: UnsafeMutablePointer<Float>) {
        let pooledWindow = window / stride
        for row in 0..<pooledWindow {
            for column in 0..<pooledWindow {
                poolCell(rows + (row * stride * window + column * stride) * rowWidth, rowStride: window * rowWidth,
                         columnStride: rowWidth, stride: stride, channels: channels,
                         into: out + (row * pooledWindow + column) * channels)
            }
        }
    }

    /// The pooled cells of window `index` that lie on the pooled grid (outHeight x outWidth, floor
    /// mode), from the window's projected rows [window², D], into the shortcut [B, outHeight * outWidth, D].
    private static func poolShortcut(window index: Int, projection: UnsafePointer<Float>, dimOut: Int, window: Int, stride: Int,
                                     windowRows: Int, windowColumns: Int, outHeight: Int, outWidth: Int,
                                     into shortcut: UnsafeMutablePointer<Float>) {
        let perImage = windowRows * windowColumns, pooledWindow = window / stride
        let image = index / perImage
        let top = (index % perImage) / windowColumns * pooledWindow, left = index % windowColumns * pooledWindow
        for row in 0..<pooledWindow where top + row < outHeight {
            for column in 0..<pooledWindow where left + column < outWidth {
                poolCell(projection + (row * stride * window + column * stride) * dimOut, rowStride: window * dimOut,
                         columnStride: dimOut, stride: stride, channels: dimOut,
                         into: shortcut + ((image * outHeight + top + row) * outWidth + left + column) * dimOut)
            }
        }
    }
}

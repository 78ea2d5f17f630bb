import CInt8
import SAMTensor
import Synchronization

extension Kernels {
    /// Whether `linear` multiplies int8 weights in int8 products (opt-in, process-wide: the tools'
    /// `--int8-products`). Off, int8 weights are widened to float32 for each product, and only the
    /// weights' rounding costs accuracy.
    ///
    /// Chosen by measurement: on the full-size MobileSAM set (seeded random weights) int8 weights with
    /// float32 products keep every mask within IoU 0.98 of PyTorch's on 16 of 16 prompts; int8 products,
    /// whose inputs are rounded to 8 bits per row, on 3 of 16 (min IoU 0.948), for an encoder about
    /// 1.25x faster (AVX512_VNNI). docs/quantization.md has the figures.
    public static var int8Products: Bool {
        scopedInt8Products ?? int8ProductsSetting.load(ordering: .relaxed)
    }

    private static let int8ProductsSetting = Atomic<Bool>(false)
    @TaskLocal static var scopedInt8Products: Bool?

    /// Turns int8 products on or off for every later `linear` call in the process (the tools'
    /// `--int8-products`); a task's `withInt8Products` overrides it.
    public static func setInt8Products(_ enabled: Bool) { int8ProductsSetting.store(enabled, ordering: .relaxed) }

    /// Runs `body` with int8 products on or off in this task alone (tests, an app comparing both).
    public static func withInt8Products<R>(_ enabled: Bool, _ body: () throws -> R) rethrows -> R {
        try $scopedInt8Products.withValue(enabled) { try body() }
    }

    /// A linear layer whose weight is stored int8 (`samconvert --dtype int8`), with int8 products on:
    /// each input row is quantized to int8 with its own scale on the call (dynamic, symmetric),
    /// multiplied by the codes in exact integer sums (CInt8: AMX-INT8, AVX512_VNNI, AVX2 or portable
    /// C, all the same bits), and scaled back with the bias seeding the result.
    ///
    /// Called by `linear`; nil when int8 products are off, the weight is not int8, or its rows are
    /// too long for exact 32-bit sums.
    static func int8Linear(_ x: FloatTensor, weight: some WeightOperand, bias: FloatTensor?, epilogue: Epilogue,
                           outShape: [Int]) -> FloatTensor? {
        guard let tensor = weight as? WeightTensor, let stored = int8ProductCodes(tensor.quantized) else { return nil }
        let (outFeatures, inFeatures) = (stored.shape[0], stored.shape[1])
        let rows = x.count / inFeatures
        let packed = int8ProductPanels(tensor, codes: stored, rows: rows)
        let rowBytes = Int(sam_q8_row_bytes(Int64(inFeatures)))
        let tileRows = int8TileRows(rows)
        let tiles = (rows + tileRows - 1) / tileRows
        let count = rows * outFeatures
        let data = [Float](unsafeUninitializedCapacity: count) { outBuffer, initialized in
            let out = outBuffer.baseAddress!
            x.data.withUnsafeBufferPointer { xBuffer in
                (bias?.data ?? []).withUnsafeBufferPointer { biasBuffer in
                    withResidual(epilogue) { residual in
                        let xs = xBuffer.baseAddress!, biasPointer = bias == nil ? nil : biasBuffer.baseAddress
                        parallelFor(tiles) { tile in
                            let first = tile * tileRows, tileCount = min(tileRows, rows - first)
                            let codes = UnsafeMutablePointer<UInt8>.allocate(capacity: tileCount * rowBytes)
                            let scales = UnsafeMutablePointer<Float>.allocate(capacity: tileCount)
                            defer { codes.deallocate(); scales.deallocate() }
                            packed.product(rows: xs + first * inFeatures, count: tileCount, codes: codes, scales: scales,
                                           bias: biasPointer, into: out + first * outFeatures, activation: epilogue.activation,
                                           residual: residual.map { $0 + first * outFeatures })
                        }
                    }
                }
            }
            initialized = count
        }
        return FloatTensor(shape: outShape, data: data)
    }

    /// `codes`' panels for a product over `rows` rows: kept with the weight for calls on few rows (as
    /// `linear`'s float32 panels are), packed for the call otherwise.
    static func int8ProductPanels(_ tensor: WeightTensor, codes: QuantizedWeight, rows: Int) -> Int8Panels {
        rows < keptPanelRowLimit ? tensor.derived("int8 panels") { Int8Panels(codes) } : Int8Panels(codes)
    }

    /// Rows per task of an int8 product over `rows` rows: whole row blocks of the product kernel
    /// (AMX's 32 rows, the VNNI kernel's 6), at most 96, at least two tiles per worker when there are
    /// rows enough.
    static func int8TileRows(_ rows: Int) -> Int {
        let block = sam_q8_implementation() == 3 ? 32 : 6
        return max(block, min(96, (rows / (2 * workerCount) + block - 1) / block * block))
    }

    /// Longest rows whose integer sums cannot overflow 32 bits (65536 × 255 × 127 < 2³¹).
    static let int8MaximumInputs = 65_536

    /// `codes` when the products that multiply by them run in int8 here (linear layers, pointwise
    /// convolutions, the inverted residual's): int8 products on, an int8 [out, in] matrix, rows short
    /// enough for exact 32-bit sums; else nil, and the float path runs.
    static func int8ProductCodes(_ codes: QuantizedWeight?) -> QuantizedWeight? {
        guard let codes, int8Products, codes.scheme == .int8, codes.shape.count == 2, codes.shape[1] <= int8MaximumInputs else {
            return nil
        }
        return codes
    }

    /// An int8 weight packed for CInt8's product (panels of 64 features and their code sums), with
    /// its per-feature scales, which it reads from the weight in place.
    final class Int8Panels: @unchecked Sendable {
        let weight: QuantizedWeight
        let features: Int, inputs: Int
        private let panels: UnsafeMutablePointer<Int8>
        private let sums: UnsafeMutablePointer<Int32>

        init(_ weight: QuantizedWeight) {
            self.weight = weight
            (features, inputs) = (weight.shape[0], weight.shape[1])
            let (n, k) = (Int64(features), Int64(inputs))
            let panelCount = Int(sam_q8_panel_count(n))
            panels = .allocate(capacity: Int(sam_q8_panel_bytes(n, k)))
            sums = .allocate(capacity: panelCount * 64)
            let codes = weight.codeBytes.baseAddress!.assumingMemoryBound(to: Int8.self)
            let (panels, sums) = (panels, sums)
            parallelForChunks(panelCount) { range in
                sam_q8_pack_weights(codes, n, k, k, Int64(range.lowerBound), Int64(range.count), panels, sums)
            }
        }

        deinit {
            panels.deallocate()
            sums.deallocate()
        }

        /// out[r, j] = bias[j] + the product, for `rows` quantized rows (out rows `features` apart).
        func product(codes: UnsafePointer<UInt8>, scales: UnsafePointer<Float>, rows: Int, bias: UnsafePointer<Float>?,
                     into out: UnsafeMutablePointer<Float>) {
            let weightScales = weight.scaleBytes.baseAddress!.assumingMemoryBound(to: Float.self)
            sam_q8_linear(codes, scales, Int64(rows), Int64(inputs), panels, sums, weightScales, Int64(features),
                          bias, 0, out, Int64(features))
        }

        /// `count` float rows (`inputs` floats each) quantized into `codes` and `scales` (scratch for
        /// that many rows), multiplied, then `activation` after adding `residual` (laid out as out).
        func product(rows x: UnsafePointer<Float>, count: Int, codes: UnsafeMutablePointer<UInt8>,
                     scales: UnsafeMutablePointer<Float>, bias: UnsafePointer<Float>?, into out: UnsafeMutablePointer<Float>,
                     activation: Epilogue.Activation, residual: UnsafePointer<Float>?) {
            sam_q8_quantize_rows(x, Int64(count), Int64(inputs), Int64(inputs), codes, scales)
            product(codes: codes, scales: scales, rows: count, bias: bias, into: out)
            applyEpilogue(activation, out, count: count * features, residual: residual)
        }
    }
}

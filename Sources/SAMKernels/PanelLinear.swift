import CVectorMath
import SAMTensor
import Synchronization

extension Kernels {
    /// Which product `linear` runs in float32. `.panels` (CVectorMath's panel product, on CPUs with
    /// AVX-512, or AVX2 and FMA): the weight is packed once per call into panels of 32 output features
    /// and the input rows are read where they are, the bias seeding each sum. `.blas`: OpenBLAS sgemm,
    /// which packs both operands on every call; the path on every other CPU. Both sum in float32;
    /// they differ in rounding order only.
    public enum Float32LinearKernel: String, Sendable {
        /// The package's own panel product (AVX-512 or AVX2): weights packed per call, input rows read in place.
        case panels
        /// OpenBLAS's (or Accelerate's) sgemm: the path on CPUs without AVX2.
        case blas
    }

    /// Thrown when `.panels` is asked for on a CPU without AVX2 and FMA.
    public struct UnsupportedLinearKernel: Error, CustomStringConvertible {
        /// The kernel that was asked for.
        public let kernel: Float32LinearKernel
        /// A one-line message naming the CPU feature the kernel needs.
        public var description: String { "the \(kernel.rawValue) linear kernel needs a CPU with AVX2 and FMA; this one has not" }
    }

    /// Whether this CPU runs the panel product: AVX-512's blocks, or AVX2's (the same bits).
    public static let panelKernelAvailable: Bool = panelProductOnWideVectors || sam_vector_math_has_avx2_fma() != 0

    /// Whether the panel product runs on 512-bit vectors (else on AVX2's 256-bit ones, where it runs).
    static let panelProductOnWideVectors = sam_vector_math_has_avx512() != 0

    /// The most inputs for which `linear` takes the AVX2 panel product; longer products go to the BLAS.
    /// AVX2's sixteen registers hold six rows by sixteen lanes, so each block reads its weights from L2
    /// at 64 bytes per twelve multiply-adds; OpenBLAS's packed kernel keeps them in L1. Its packing
    /// of the rows costs most where inputs are few. Zen 3 (family 25, model 1), one core, a C harness
    /// timing per-call packing plus the product against a bias copy plus sgemm, median of 9 pairs
    /// (panel time over BLAS time): 16384 x 96 -> 384 0.60, 16384 x 128 -> 384 0.63, 4096 x 160 ->
    /// 640 0.85, 4096 x 256 -> 256 0.91, 4096 x 192 -> 576 0.96; 4096 x 320 -> 960 1.12, 1024 x 384 ->
    /// 1152 1.09, 1024 x 768 -> 2304 1.32.
    static let avx2PanelInputLimit = 256

    /// Whether `linear`'s float32 product over `inputs` runs on the panel product, given `.panels`.
    static func panelProductPays(inputs: Int) -> Bool { panelProductOnWideVectors || inputs <= avx2PanelInputLimit }

    /// Whether the attention kernels built on the panel product run (`.panels` attention, Hiera's pooled
    /// windows, ViT's relative positions): CPUs with AVX-512, whose sixteen-lane loops they use beside
    /// the products; where `linear` takes the BLAS, `automatic` attention does too.
    public static var panelAttentionAvailable: Bool { panelProductOnWideVectors }

    /// Whether the attention paths built on the panel product take it where their shapes suit: it runs
    /// here and `linear`'s float32 product is `.panels` (in this task, or the process).
    static var panelAttentionChosen: Bool { panelAttentionAvailable && float32LinearKernel == .panels }

    private static let blasLinears = Atomic<Bool>(false)
    @TaskLocal static var scopedFloat32LinearKernel: Float32LinearKernel?

    /// The float32 product of every later `linear` call in the process (`sambench --blas-linear`).
    public static func setFloat32LinearKernel(_ kernel: Float32LinearKernel) throws(UnsupportedLinearKernel) {
        if kernel == .panels && !panelKernelAvailable { throw UnsupportedLinearKernel(kernel: kernel) }
        blasLinears.store(kernel == .blas, ordering: .relaxed)
    }

    /// Runs `body` with `linear`'s float32 product set to `kernel` in this task alone.
    public static func withFloat32LinearKernel<R>(_ kernel: Float32LinearKernel, _ body: () throws -> R) throws -> R {
        if kernel == .panels && !panelKernelAvailable { throw UnsupportedLinearKernel(kernel: kernel) }
        return try $scopedFloat32LinearKernel.withValue(kernel) { try body() }
    }

    /// The float32 product `linear` uses here: this task's choice, else the process's, else the
    /// panel product where the CPU has it.
    public static var float32LinearKernel: Float32LinearKernel {
        if let scoped = scopedFloat32LinearKernel { return scoped }
        return panelKernelAvailable && !blasLinears.load(ordering: .relaxed) ? .panels : .blas
    }

    /// Products on fewer rows than this (the decoder's prompt tokens, up to ~110) multiply by the
    /// weight's panels kept from their first call (`keptPanels`): packing costs as much as about 96
    /// rows of product (Zen 4, one core, 256 -> 2048), so per-call packing or the BLAS (which packs
    /// too) spent more on packing than on the product there. Image-side products have 1024 rows or
    /// more and pack per call, so the encoders keep no second copy of their weights.
    static let keptPanelRowLimit = 512

    /// A product's right operand packed for the panel product (`sam_panel_product_avx512` or `_avx2`), for one call:
    /// `features` outputs by `inputs`, element (c, t) at source[c * featureStride + t * inputStride].
    /// Immutable once packed, so one may be kept with its weight and shared between threads.
    final class ProductPanels: @unchecked Sendable {
        let features: Int, inputs: Int, panelCount: Int
        private let storage: UnsafeMutableRawPointer

        init(features: Int, inputs: Int, source: UnsafePointer<Float>, featureStride: Int, inputStride: Int) {
            (self.features, self.inputs) = (features, inputs)
            panelCount = (features + 31) / 32
            let floats = Int(sam_panel_floats(Int64(features), Int64(inputs)))
            storage = UnsafeMutableRawPointer.allocate(byteCount: max(1, floats) * 4, alignment: 64)
            let panels = storage.bindMemory(to: Float.self, capacity: floats)
            let (n, k, count) = (Int64(features), Int64(inputs), panelCount)
            let (fs, ts) = (Int64(featureStride), Int64(inputStride))
            // A large operand is packed by all workers (ViT-H's MLP weight: 26 MB).
            guard floats >= 1 << 18, count > 1 else {
                sam_pack_panels(source, n, k, fs, ts, 0, Int64(count), panels)
                return
            }
            parallelForChunks(count) { range in
                sam_pack_panels(source, n, k, fs, ts, Int64(range.lowerBound), Int64(range.count), panels)
            }
        }

        deinit { storage.deallocate() }

        /// out[r, c] = scale * (bias[c] + Σ_t x[r, t] * operand(c, t)) for r < rows and the features
        /// of `panels`; rows of x and out `xStride` and `outStride` apart. Single-threaded.
        func product(x: UnsafePointer<Float>, xStride: Int, rows: Int, scale: Float = 1, bias: UnsafePointer<Float>?,
                     into out: UnsafeMutablePointer<Float>, outStride: Int, panels: Range<Int>? = nil) {
            let panels = panels ?? 0..<panelCount
            let product = panelProductOnWideVectors ? sam_panel_product_avx512 : sam_panel_product_avx2
            product(x, Int64(xStride), Int64(rows), Int64(inputs), storage.assumingMemoryBound(to: Float.self), Int64(features),
                    Int64(panels.lowerBound), Int64(panels.count), scale, bias, out, Int64(outStride))
        }
    }

    /// `weight` packed for the panel product once, kept with the weight (`WeightOperand.derived`)
    /// for calls on a few rows, where packing on every call costs more than the product.
    static func keptPanels(_ weight: some WeightOperand) -> ProductPanels {
        weight.derived("float32 panels") {
            let (features, inputs) = (weight.shape[0], weight.shape[1])
            return weight.withFloats { w in
                ProductPanels(features: features, inputs: inputs, source: w.baseAddress!, featureStride: inputs, inputStride: 1)
            }
        }
    }

    /// `linear`'s panel product with too few tiles of rows for the workers: every row against a
    /// share of the weight's panels each, then the epilogue over the whole output in parallel.
    static func panelProductAcrossWorkers(_ packed: ProductPanels, _ p: ProductPointers, rows: Int, epilogue: Epilogue) {
        let (outFeatures, inFeatures) = (packed.features, packed.inputs)
        let splits = rows * inFeatures * outFeatures >= parallelGEMMWorkThreshold ? min(workerCount, packed.panelCount) : 1
        let perSplit = (packed.panelCount + splits - 1) / splits
        parallelFor(splits) { split in
            let panels = (split * perSplit)..<min(packed.panelCount, (split + 1) * perSplit)
            if !panels.isEmpty {
                packed.product(x: p.x, xStride: inFeatures, rows: rows, bias: p.bias, into: p.out, outStride: outFeatures,
                               panels: panels)
            }
        }
        guard !epilogue.isIdentity else { return }
        parallelRanges(rows * outFeatures) { range in
            applyEpilogue(epilogue.activation, p.out + range.lowerBound, count: range.count,
                          residual: p.residual.map { $0 + range.lowerBound })
        }
    }
}

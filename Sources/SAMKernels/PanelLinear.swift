import CVectorMath
import SAMTensor
import Synchronization

extension Kernels {
    /// Which product `linear` runs in float32. `.panels` (CVectorMath's panel product, on CPUs with
    /// AVX-512): the weight is packed once per call into panels of 32 output features and the input
    /// rows are read where they are, the bias seeding each sum. `.blas`: OpenBLAS sgemm, which packs
    /// both operands on every call; the path on every other CPU. Both sum in float32; they differ
    /// in rounding order only.
    public enum Float32LinearKernel: String, Sendable {
        /// The package's own panel product (AVX-512): weights packed per call, input rows read in place.
        case panels
        /// OpenBLAS's (or Accelerate's) sgemm: the path on CPUs without AVX-512.
        case blas
    }

    /// Thrown when `.panels` is asked for on a CPU without AVX-512F.
    public struct UnsupportedLinearKernel: Error, CustomStringConvertible {
        /// The kernel that was asked for.
        public let kernel: Float32LinearKernel
        /// A one-line message naming the CPU feature the kernel needs.
        public var description: String { "the \(kernel.rawValue) linear kernel needs a CPU with AVX-512F; this one has not" }
    }

    /// Whether this CPU runs the panel product.
    public static let panelKernelAvailable: Bool = sam_vector_math_has_avx512() != 0

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

    /// A product's right operand packed for `sam_panel_product_avx512`, for the length of one call:
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
            sam_panel_product_avx512(x, Int64(xStride), Int64(rows), Int64(inputs),
                                     storage.assumingMemoryBound(to: Float.self), Int64(features),
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

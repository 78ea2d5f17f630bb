import CBFloat16
import SAMTensor
import Synchronization

extension Kernels {
    /// How `linear` multiplies. `.float32` (the default) is the reference path every accuracy
    /// figure of the package is measured on. `.bfloat16` rounds the weights and the layer inputs
    /// to bfloat16 (8-bit significand) and sums in float32 (CBFloat16: AMX-BF16 tiles where the CPU
    /// and the OS allow them, else AVX512_BF16's vdpbf16ps), at an accuracy the caller must judge at
    /// the task level (samverify --bf16 reports mask IoU against the references). `linear` changes,
    /// and SAM 2's memory attention runs its attention products at this precision too (most of a
    /// tracked frame); convolutions and every other attention stay float32.
    public enum LinearPrecision: String, Sendable {
        /// float32 products and sums: the default, and the path every accuracy figure is measured on.
        case float32
        /// Weights and inputs rounded to bfloat16, sums in float32; needs `bfloat16Available`.
        case bfloat16
    }

    /// Thrown when a precision needs instructions this CPU lacks (`bfloat16` without AVX512_BF16).
    public struct UnsupportedPrecision: Error, CustomStringConvertible {
        /// The precision that was asked for.
        public let precision: LinearPrecision
        /// A one-line message naming the CPU features the precision needs.
        public var description: String {
            "\(precision.rawValue) linear layers need a CPU with AVX-512 (F, BW, VL) and AVX512_BF16; this one has not"
        }
    }

    /// Whether this CPU runs the bfloat16 path.
    public static let bfloat16Available: Bool = sam_bf16_supported() != 0

    private static let bfloat16Linears = Atomic<Bool>(false)
    @TaskLocal static var scopedLinearPrecision: LinearPrecision?

    /// The precision of every later `linear` call in the process (process-wide, like
    /// `tuneProcessForInference`: the command-line tools' `--bf16`); `.bfloat16` is refused where
    /// the CPU lacks it.
    public static func setLinearPrecision(_ precision: LinearPrecision) throws(UnsupportedPrecision) {
        try checkAvailable(precision)
        bfloat16Linears.store(precision == .bfloat16, ordering: .relaxed)
    }

    /// Runs `body` with `linear` at `precision` in this task alone, whatever the process-wide
    /// setting (tests, an app comparing both paths).
    public static func withLinearPrecision<R>(_ precision: LinearPrecision, _ body: () throws -> R) throws -> R {
        try checkAvailable(precision)
        return try $scopedLinearPrecision.withValue(precision) { try body() }
    }

    /// The precision `linear` uses here: this task's `withLinearPrecision`, else the process's.
    public static var linearPrecision: LinearPrecision {
        scopedLinearPrecision ?? (bfloat16Linears.load(ordering: .relaxed) ? .bfloat16 : .float32)
    }

    private static func checkAvailable(_ precision: LinearPrecision) throws(UnsupportedPrecision) {
        if precision == .bfloat16 && !bfloat16Available { throw UnsupportedPrecision(precision: precision) }
    }

    /// `weight` [out, in] packed into CBFloat16's panels, made once per `WeightTensor`.
    static func bfloat16Panels(_ weight: some WeightOperand) -> [UInt32] {
        weight.derived("bfloat16 panels") {
            let (outFeatures, inFeatures) = (weight.shape[0], weight.shape[1])
            let count = Int(sam_bf16_panel_count(Int64(outFeatures), Int64(inFeatures)))
            return [UInt32](unsafeUninitializedCapacity: count) { panels, initialized in
                weight.withFloats { w in
                    sam_bf16_pack_weights(w.baseAddress!, Int64(outFeatures), Int64(inFeatures), panels.baseAddress!)
                }
                initialized = count
            }
        }
    }

    /// out[r, j] += Σ_i x[r, i] * weight[j, i] for `rows` rows of x (`inFeatures` apart) and out
    /// (`outFeatures` apart), in bfloat16 products with float32 sums; single-threaded.
    static func bfloat16Product(x: UnsafePointer<Float>, rows: Int, inFeatures: Int, panels: UnsafePointer<UInt32>,
                                outFeatures: Int, into out: UnsafeMutablePointer<Float>) {
        let scratchCount = Int(sam_bf16_scratch_count(Int64(inFeatures)))
        let scratch = UnsafeMutablePointer<UInt32>.allocate(capacity: scratchCount)
        defer { scratch.deallocate() }
        sam_bf16_linear_accumulate(x, Int64(rows), Int64(inFeatures), Int64(inFeatures), panels,
                                   Int64(outFeatures), out, Int64(outFeatures), scratch)
    }
}

/// How far two sources of one tensor may differ when one was computed (BatchNorm folded by a
/// different code path, constant folding): |a - b| <= absolute + relative * max(|a|, |b|).
public struct AgreementTolerance: Sendable, Equatable, CustomStringConvertible {
    public var absolute: Double
    public var relative: Double

    public init(absolute: Double, relative: Double) {
        self.absolute = absolute
        self.relative = relative
    }

    public func accepts(_ a: Double, _ b: Double) -> Bool {
        abs(a - b) <= absolute + relative * max(abs(a), abs(b))
    }

    public var description: String { "atol \(absolute) + rtol \(relative)" }
}

public struct ImportOptions: Sendable {
    /// Report weight-like tensors no rule maps in `ImportedWeights.unmapped` instead of failing.
    public var allowUnmapped = false
    /// BatchNorm2d's eps (torch default, used by every TinyViT Conv2d_BN).
    public var batchNormEps = 1e-5
    /// The eps of the BatchNorms state dicts keep for the runtime to fold (EfficientViT's ConvLayer:
    /// 1e-6, as efficientsam's model zoo sets it; the converter gives the configuration's): used only to
    /// check such a layer against an export that folded it (`FoldedBatchNormMerge`).
    public var runtimeBatchNormEps = 1e-6
    /// For tensors that were folded or computed on one side. Measured: TorchScript's and the dynamo
    /// optimizer's float32 BatchNorm folds land within 6e-8 (drop) / 1.2e-7 (tiny) absolute of the
    /// double-precision fold (1 ulp; relative up to 5e-5 only on near-zero biases); the dynamo
    /// exporter's constant-folded dense PE within 6e-8 of PyTorch's. atol 1e-5 leaves ~80x headroom.
    public var computedTolerance = AgreementTolerance(absolute: 1e-5, relative: 1e-5)
    /// g of the [1,C,g,g] dense PE for raw blobs, when no imported file states it
    /// (otherwise it is inferred from the blob's byte count, which must then be C*g*g floats).
    public var imageEmbeddingSize: Int?

    public init() {}
}

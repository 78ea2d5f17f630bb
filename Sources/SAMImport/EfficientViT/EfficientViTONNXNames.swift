/// EfficientViT-SAM's image encoder exported on its own (`EfficientViTSamImageEncoder`, as
/// `converters/export_efficientvit_sam.py --onnx` and upstream's deployment/onnx/export_encoder.py
/// export it): its weights and node scopes start at the encoder's children, `backbone`, `neck`
/// (a child of SAM's encoders too) and `norm`. The exporter folds each ConvLayer's BatchNorm into its
/// convolution (`X.conv.weight`, `X.conv.bias`, unnamed), which the runtime takes as it is.
/// ref: efficientsam/models/efficientvit/sam.py EfficientViTSamImageEncoder.__init__ (L172-177)
enum EfficientViTONNXNames {
    static let encoderChildren: [String: SAMComponent] = ["backbone": .imageEncoder, "norm": .imageEncoder]

    /// ConvLayer's BatchNorm `X.norm` and conv `X.conv`: torch's dynamo exporter fuses the BatchNorm into
    /// the conv, keeps the conv's names (`X.conv.weight`, now folded; `X.conv.weight_bias`) and puts the
    /// Conv node in the BatchNorm's scope. ref: efficientsam/models/nn/ops.py ConvLayer.__init__
    static let convLayerBatchNorm = (norm: "norm", conv: "conv")

    /// The encoder's output LayerNorm2d, efficientsam's own, which broadcasts its affine as
    /// `weight.view(1, -1, 1, 1)`: the export stores [1,C,1,1] constants (SAM's LayerNorm2d: [C,1,1]).
    /// ref: efficientsam/models/nn/norm.py LayerNorm2d.forward (L17)
    static let batchedLayerNorm2dScopes: Set<String> = ["image_encoder.norm"]

    /// The [1,C,1,1] affine multiplied or added in that LayerNorm2d's scope.
    static func target(for use: ONNXUse, shape: [Int], scope: String) -> ONNXTarget? {
        guard batchedLayerNorm2dScopes.contains(scope), shape.count == 4, shape[0] == 1, shape[2] == 1, shape[3] == 1 else {
            return nil
        }
        switch use.node.opType {
        case "Mul": return .tensor(name: scope + ".weight", layout: .batchedChannelAffine, rule: .batchedChannelAffineReshaped)
        case "Add": return .tensor(name: scope + ".bias", layout: .batchedChannelAffine, rule: .batchedChannelAffineReshaped)
        default: return nil
        }
    }
}

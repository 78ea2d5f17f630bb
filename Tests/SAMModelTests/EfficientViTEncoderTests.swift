import Foundation
import SAMFormats
import SAMModel
import SAMTensor
import SAMTestSupport
import Testing

/// EfficientViT-SAM's encoder built from the tiny set's state dict: bad weights and bad inputs are
/// typed errors naming the tensor or the shape, never a crash.
@Suite("EfficientViT-SAM image encoder: bad input")
struct EfficientViTEncoderTests {
    static let set = TestPaths.efficientViTSAMTinyReferences

    static func weights() throws -> [String: Tensor] { try HDF5File(path: set + "/efficientvit_sam.h5").readAll() }
    static func config() throws -> SAMConfig { try SAMConfig(contentsOf: set + "/config.json") }

    static func build(_ tensors: [String: Tensor], _ config: SAMConfig) throws(WeightError) -> Sam {
        try Sam(weights: WeightStore(tensors, source: "efficientvit_sam.h5"), config: config)
    }

    @Test("the unfused state dict builds (BatchNorms folded at load) and encodes to the set's embedding shape")
    func builds() throws {
        let sam = try Self.build(try Self.weights(), try Self.config())
        let input = try NPY.read(Self.set + "/references/input_image.npy")
        let embedding = try sam.encodeImage(FloatTensor(input))
        #expect(embedding.shape == [1, 32, 12, 12])
    }

    @Test("a missing weight is named", arguments: [
        "image_encoder.backbone.stages.4.op_list.1.context_module.main.aggreg.0.1.weight",
        "image_encoder.backbone.stages.2.op_list.0.main.spatial_conv.norm.running_mean",
        "image_encoder.neck.output_ops.0.op_list.0.conv.bias",
        "image_encoder.norm.weight",
    ])
    func missingWeight(key: String) throws {
        var tensors = try Self.weights()
        #expect(tensors.removeValue(forKey: key) != nil)
        #expect(throws: WeightError.missing(key: key, source: "efficientvit_sam.h5")) { try Self.build(tensors, try Self.config()) }
    }

    @Test("a weight of the wrong shape is named with both shapes")
    func wrongShape() throws {
        var tensors = try Self.weights()
        let key = "image_encoder.backbone.stages.3.op_list.1.main.point_conv.norm.running_var"
        tensors[key] = Tensor(shape: [25], floats: [Float](repeating: 1, count: 25))
        #expect(throws: WeightError.shapeMismatch(key: key, expected: [24], actual: [25], source: "efficientvit_sam.h5")) {
            try Self.build(tensors, try Self.config())
        }
    }

    @Test("widths that disagree with the config's expand ratio are named at the conv that shows them")
    func expandRatioMismatch() throws {
        var config = try Self.config()
        var encoder = try #require(config.imageEncoder.as(EfficientViTConfig.self))
        encoder.expandRatios[1] = 2
        config.imageEncoder = AnyImageEncoderConfig(encoder, family: EfficientViTFamily.self)
        let error = #expect(throws: WeightError.self) { try Self.build(try Self.weights(), config) }
        #expect("\(String(describing: error))".contains("stages.1.op_list.0.main.spatial_conv.conv.weight"), "\(String(describing: error))")
    }

    @Test("a configuration that skipped validation (per-stage lists of the wrong length) is refused, not trapped on")
    func unvalidatedConfig() throws {
        var config = try Self.config()
        var encoder = try #require(config.imageEncoder.as(EfficientViTConfig.self))
        encoder.depths = [1, 1, 1, 1]
        config.imageEncoder = AnyImageEncoderConfig(encoder, family: EfficientViTFamily.self)
        let error = #expect(throws: WeightError.self) { try Self.build(try Self.weights(), config) }
        #expect("\(String(describing: error))".contains("need 5 entries each"), "\(String(describing: error))")
    }

    @Test("an input size whose attention stage would take LiteMLA's quadratic branch is refused at load")
    func quadraticBranch() throws {
        var config = try Self.config()
        config.imageEncoder.imageSize = 48  // stage 4: 2x2 = 4 tokens, qkvDim 8
        let error = #expect(throws: WeightError.self) { try Self.build(try Self.weights(), config) }
        #expect("\(String(describing: error))".contains("quadratic branch"), "\(String(describing: error))")
    }

    @Test("an image of the wrong size is an error naming both shapes")
    func wrongImage() throws {
        let sam = try Self.build(try Self.weights(), try Self.config())
        #expect(throws: SamError.imageEncoder(.imageShape(expected: "[B, 3, 96, 96]", actual: [1, 3, 64, 64]))) {
            try sam.encodeImage(FloatTensor(zeros: [1, 3, 64, 64]))
        }
    }
}

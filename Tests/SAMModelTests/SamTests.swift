import Foundation
import SAMBLAS
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// The assembled model on the committed tiny set: image in, every case's masks out, with the
/// encoder's own embeddings feeding the decoder (errors of both stages add up here).
@Suite("Sam end to end: tiny references")
struct SamTinyTests {
    static let tolerance: Float = 1e-4
    static let references = DecoderReferences(root: TestPaths.tinyReferences, config: (try? tinyConfig()) ?? .mobileSAM,
                                              weightsSource: "reference_outputs/tiny/mobile_sam.h5")

    static func tinyConfig() throws -> SAMConfig { try SAMConfig(contentsOf: TestPaths.tinyReferences + "/config.json") }

    static func allWeights() throws -> [String: Tensor] {
        try HDF5File(path: TestPaths.tinyReferences + "/mobile_sam.h5").readAll()
    }

    @Test("config.json decodes to the tiny architecture")
    func configDecodes() throws {
        let config = try Self.tinyConfig()
        #expect(config.imageEncoder.imageSize == 128)
        #expect(config.imageEncoder.family == "tiny_vit")
        #expect(config.imageEncoder.as(TinyViTConfig.self)?.mergeStrides == [2, 2, 1])
        #expect(config.promptEncoder.imageEmbeddingSize == 8)
        #expect(config.maxPoints == 100)
    }

    @Test("Image to masks matches PyTorch on every case, all weights of the file used")
    func endToEnd() throws {
        let sam = try Sam(weights: WeightStore(Self.allWeights(), source: "tiny"), config: Self.tinyConfig())
        let image = FloatTensor(try NPY.read(TestPaths.tinyReferences + "/references/input_image.npy"))
        let embeddings = try sam.encodeImage(image)
        let expectedEmbeddings = try Self.references.imageEmbeddings()
        #expect(Difference(embeddings.data, expectedEmbeddings.data).within(Self.tolerance))
        let cases = Self.references.caseNames
        #expect(cases.count >= 6)
        for caseName in cases {
            var points = try Self.references.tensor(caseName, "onnx_point_coords")
            var labels = try Self.references.tensor(caseName, "onnx_point_labels")
            let padded = Sam.removeOfficialPaddingPoint(points: &points, labels: &labels)
            let (masks, iou) = try sam.decode(imageEmbeddings: embeddings, points: points, labels: labels, appendPaddingPoint: padded,
                                              maskInput: try Self.references.tensor(caseName, "onnx_mask_input"),
                                              hasMaskInput: try Self.references.tensor(caseName, "onnx_has_mask_input").data[0])
            let maskError = Difference(masks.data, try Self.references.tensor(caseName, "onnx_low_res_masks").data)
            let iouError = Difference(iou.data, try Self.references.tensor(caseName, "onnx_iou_predictions").data)
            #expect(maskError.within(Self.tolerance), "\(caseName) masks: \(maskError)")
            #expect(iouError.within(Self.tolerance), "\(caseName) iou: \(iouError)")
        }
    }

    #if !canImport(Accelerate)
    @Test("Building and running a Sam leaves the process's BLAS threading as it was")
    func noProcessWideSideEffects() throws {
        // Process-wide tuning is Kernels.tuneProcessForInference's, which only the tools call.
        BLAS.setThreadCount(2)
        let sam = try Sam(weights: WeightStore(Self.allWeights(), source: "tiny"), config: Self.tinyConfig())
        _ = try sam.encodeImage(FloatTensor(try NPY.read(TestPaths.tinyReferences + "/references/input_image.npy")))
        #expect(BLAS.threadCount == 2)
    }
    #endif

    @Test("A weight the model does not use is refused by name")
    func unusedWeight() throws {
        var tensors = try Self.allWeights()
        tensors["mask_decoder.extra.weight"] = Tensor(shape: [2], floats: [1, 2])
        #expect(throws: WeightError.unused(keys: ["mask_decoder.extra.weight"], source: "tiny")) {
            try Sam(weights: WeightStore(tensors, source: "tiny"), config: Self.tinyConfig())
        }
    }

    @Test("A missing weight and a wrong shape are refused with the dotted path and both shapes")
    func missingAndMisshapen() throws {
        var missing = try Self.allWeights()
        missing["mask_decoder.iou_prediction_head.layers.0.bias"] = nil
        #expect(throws: WeightError.missing(key: "mask_decoder.iou_prediction_head.layers.0.bias", source: "tiny")) {
            try Sam(weights: WeightStore(missing, source: "tiny"), config: Self.tinyConfig())
        }
        var misshapen = try Self.allWeights()
        let key = "mask_decoder.iou_prediction_head.layers.0.bias"
        misshapen[key] = Tensor(shape: [31], floats: [Float](repeating: 0, count: 31))
        let error = #expect(throws: WeightError.self) {
            try Sam(weights: WeightStore(misshapen, source: "tiny"), config: Self.tinyConfig())
        }
        #expect(error.map { "\($0)".contains(key) && "\($0)".contains("[31]") && "\($0)".contains("[32]") } == true)
    }

    @Test("Point counts outside the configured range are an error that states the range")
    func pointRange() throws {
        var config = try Self.tinyConfig()
        config.maxPoints = 4
        let sam = try Sam(weights: WeightStore(Self.allWeights(), source: "tiny"), config: config)
        let embeddings = try Self.references.imageEmbeddings()
        let points = FloatTensor(shape: [1, 5, 2], data: [Float](repeating: 10, count: 10))
        let labels = FloatTensor(shape: [1, 5], data: [Float](repeating: 1, count: 5))
        let error = #expect(throws: SamError.self) {
            try sam.decode(imageEmbeddings: embeddings, points: points, labels: labels, appendPaddingPoint: true,
                           maskInput: nil, hasMaskInput: 0)
        }
        #expect(error.map { "\($0)".contains("1...4") } == true, "\(String(describing: error))")
        let four = try sam.decode(imageEmbeddings: embeddings, points: FloatTensor(shape: [1, 4, 2], data: [Float](repeating: 10, count: 8)),
                                  labels: FloatTensor(shape: [1, 4], data: [1, 0, 1, 0]), appendPaddingPoint: true,
                                  maskInput: nil, hasMaskInput: 0)
        #expect(four.masks.shape == [1, 4, 32, 32])
    }

    @Test("An encoder-only model loads, and decoding with it names the missing component")
    func missingComponent() throws {
        let encoderOnly = try Self.allWeights().filter { $0.key.hasPrefix("image_encoder.") }
        let sam = try Sam(weights: WeightStore(encoderOnly, source: "tiny encoder"), config: Self.tinyConfig())
        #expect(sam.promptEncoder == nil)
        #expect(throws: SamError.missingComponent("prompt_encoder")) {
            try sam.decode(imageEmbeddings: FloatTensor(zeros: [1, 32, 8, 8]), points: FloatTensor(zeros: [1, 1, 2]),
                           labels: FloatTensor(shape: [1, 1], data: [1]), appendPaddingPoint: true, maskInput: nil, hasMaskInput: 0)
        }
    }
}

import Foundation
import SAMConvert
import SAMFormats
import SAMImage
import SAMTensor
import SAMTestSupport
@testable import SAMPipeline
import Testing

/// EfficientViTSamPredictor's two frames on the tiny EfficientViT-SAM set: the photo resized to the
/// encoder's 96 input, prompts and masks in the 192 prompt frame.
@Suite("Pipeline: tiny EfficientViT-SAM references")
struct EfficientViTPipelineTests {
    static let set = TestPaths.efficientViTSAMTinyReferences
    static let tolerance: Float = 1e-4

    static func segmenter(in folder: String) throws -> SegmentAnything {
        var request = ConversionRequest(inputs: [set + "/efficientvit_sam.pt"], output: folder + "/efficientvit_sam.samw")
        request.configFile = set + "/config.json"
        _ = try Converter.run(request)
        return try SegmentAnything(modelPath: request.output)
    }

    @Test("the transform: the encoder's input side, prompts and the crop in the prompt frame")
    func transform() throws {
        let folder = try TestPaths.temporaryFolder("efficientvit-pipeline")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let transform = try Self.segmenter(in: folder).transform
        #expect(transform.side == 96)
        let original = ImageSize(height: 64, width: 96)
        // ref: get_preprocess_shape(64, 96, 192) = (128, 192); apply_coords scales by 2.
        #expect(transform.inputSize(for: original) == ImageSize(height: 128, width: 192))
        #expect(try transform.applyCoords([10, 20], originalSize: original) == [20, 40])
    }

    @Test("every case's masks 1-3, scores and full-size binary masks match EfficientViTSamPredictor.predict")
    func predictorPath() throws {
        let folder = try TestPaths.temporaryFolder("efficientvit-pipeline")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let segmenter = try Self.segmenter(in: folder)
        let pixels = try NPY.read(Self.set + "/references/resized_image.npy")
        try segmenter.setImage(try RGBImage(width: pixels.shape[1], height: pixels.shape[0], pixels: Array(pixels.storage.bytes)))
        let references = Self.set + "/references"
        let cases = try FileManager.default.contentsOfDirectory(atPath: references)
            .filter { FileManager.default.fileExists(atPath: "\(references)/\($0)/masks_binary.npy") }.sorted()
        #expect(cases.count == 6)
        for caseName in cases {
            let prediction = try segmenter.predict(try TinyPipeline.prompt(root: Self.set, caseName: caseName))
            #expect(prediction.selected == [1, 2, 3])
            func reference(_ name: String) throws -> FloatTensor { FloatTensor(try NPY.read("\(references)/\(caseName)/\(name).npy")) }
            let maskError = Difference(SegmentAnythingSlices.masks(prediction.lowResLogits, 1...3).data, try reference("low_res_masks").data)
            let iouError = Difference(prediction.scores, try reference("iou_predictions").data)
            #expect(maskError.within(Self.tolerance), "\(caseName): \(maskError)")
            #expect(iouError.within(Self.tolerance), "\(caseName): \(iouError)")
            let binary = try reference("masks_binary").data.map { UInt8($0) }
            let differing = zip(prediction.masks.values, binary).filter { $0 != $1 }.count
            #expect(prediction.masks.values.count == binary.count && differing == 0, "\(caseName): \(differing) mask pixels differ")
        }
    }
}

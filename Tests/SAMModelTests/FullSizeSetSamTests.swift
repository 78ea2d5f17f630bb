import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// The assembled full-size model straight from the full-size set's `mobile_sam.h5`: image to masks on all
/// eight cases, the encoder's own embeddings feeding the decoder. `make check-reference-set` runs it
/// (and requires the full-size set); elsewhere it runs only when the full-size set is beside the clone.
@Suite("Full-size set: Sam end to end: mobilesam-seed0", .enabled(if: TestPaths.fullSizeSetIsPresent))
struct FullSizeSetSamTests {
    static let tolerance: Float = 1e-4

    @Test("input_image.npy to every case's masks within 1e-4 of PyTorch")
    func endToEnd() throws {
        let references = DecoderReferences(root: TestPaths.fullSizeSet, config: .mobileSAM, weightsSource: "mobile_sam.h5")
        let weights = WeightStore(try HDF5File(path: TestPaths.fullSizeSet + "/mobile_sam.h5").readAll(), source: "mobile_sam.h5")
        let sam = try Sam(weights: weights)
        let embeddings = try sam.encodeImage(FloatTensor(try NPY.read(TestPaths.fullSizeSet + "/references/input_image.npy")))
        let embeddingError = Difference(embeddings.data, try references.imageEmbeddings().data)
        #expect(embeddingError.within(Self.tolerance), "image embeddings: \(embeddingError)")
        #expect(references.caseNames.count == 8)
        for caseName in references.caseNames {
            var points = try references.tensor(caseName, "onnx_point_coords")
            var labels = try references.tensor(caseName, "onnx_point_labels")
            let padded = Sam.removeOfficialPaddingPoint(points: &points, labels: &labels)
            let (masks, iou) = try sam.decode(imageEmbeddings: embeddings, points: points, labels: labels, appendPaddingPoint: padded,
                                              maskInput: try references.tensor(caseName, "onnx_mask_input"),
                                              hasMaskInput: try references.tensor(caseName, "onnx_has_mask_input").data[0])
            let maskError = Difference(masks.data, try references.tensor(caseName, "onnx_low_res_masks").data)
            let iouError = Difference(iou.data, try references.tensor(caseName, "onnx_iou_predictions").data)
            #expect(maskError.within(Self.tolerance), "\(caseName) masks: \(maskError)")
            #expect(iouError.within(Self.tolerance), "\(caseName) iou: \(iouError)")
            print("fullSet end to end \(caseName): masks \(maskError); iou \(iouError)")
        }
    }
}

import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// The assembled full-size model straight from the drop's `mobile_sam.h5`: image to masks on all
/// eight cases, the encoder's own embeddings feeding the decoder. `make check-drops` runs it
/// (and requires the drop); elsewhere it runs only when the drop is beside the clone.
@Suite("Drop Sam end to end: mobilesam-seed0", .enabled(if: TestPaths.dropIsPresent))
struct DropSamTests {
    static let tolerance: Float = 1e-4

    @Test("input_image.npy to every case's masks within 1e-4 of PyTorch")
    func endToEnd() throws {
        let references = DecoderReferences(root: TestPaths.drop, config: .mobileSAM, weightsSource: "mobile_sam.h5")
        let weights = WeightStore(try HDF5File(path: TestPaths.drop + "/mobile_sam.h5").readAll(), source: "mobile_sam.h5")
        let sam = try Sam(weights: weights)
        let embeddings = try sam.encodeImage(FloatTensor(try NPY.read(TestPaths.drop + "/references/input_image.npy")))
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
            print("drop end to end \(caseName): masks \(maskError); iou \(iouError)")
        }
    }
}

import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// Full-size prompt encoder + mask decoder against PyTorch on the `mobilesam-seed0` fullSet (seeded
/// random weights, real MobileSAM architecture). Enabled only where the full-size set exists so the default
/// suite stays self-contained; `make check-reference-set` runs it (and CI always has the full-size set).
/// Named `MaskDecoder…` so `swift test --filter "PromptEncoder|MaskDecoder"` includes it.
@Suite("Full-size set: decoder, mobilesam-seed0", .enabled(if: TestPaths.fullSizeSetIsPresent))
struct MaskDecoderDropTests {
    static let fullSet = DecoderReferences(root: TestPaths.fullSizeSet, config: .mobileSAM, weightsSource: "mobile_sam.h5")
    /// The bar for every comparison; measured errors (~5e-7 on masks) are printed by each test.
    static let tolerance: Float = 1e-4

    /// The official ONNX decoder's path on every case (`onnx_*` inputs), against `SamOnnxModel`'s
    /// low-res masks and IoU predictions, with the dense PE computed from the Gaussian matrix.
    @Test("official decoder path matches SamOnnxModel on every case", arguments: fullSet.caseNames)
    func officialPath(caseName: String) throws {
        let result = try Self.fullSet.runOfficial(caseName, model: try Self.fullSet.model())
        print("Decoder fullSet \(caseName) [official, \(result.tokens) tokens, predictMasks \(result.decoderTime)]: masks \(result.masks); iou \(result.iou)")
        #expect(result.masks.within(Self.tolerance), "\(caseName) masks: \(result.masks)")
        #expect(result.iou.within(Self.tolerance), "\(caseName) iou: \(result.iou)")
    }

    /// The split path (seed article's PromptEncoder.onnx + MaskDecoder.onnx, no padding point) on the
    /// point-only cases: sparse embeddings, all four masks and IoU scores.
    @Test("split path (no padding) matches PyTorch on the point-only cases",
          arguments: fullSet.caseNames.filter { fullSet.has($0, "split_points") })
    func splitPath(caseName: String) throws {
        let (promptEncoder, maskDecoder) = try Self.fullSet.model()
        let sparse = try promptEncoder.embedPoints(coords: try Self.fullSet.tensor(caseName, "split_points"),
                                                   labels: try Self.fullSet.tensor(caseName, "split_labels"))
        let dense = try promptEncoder.denseEmbedding(maskInput: nil, hasMaskInput: 0)
        let (masks, iou) = try maskDecoder.predictMasks(imageEmbeddings: try Self.fullSet.imageEmbeddings(),
                                                        imagePE: promptEncoder.denseImagePositionalEncoding(),
                                                        sparse: sparse, dense: dense)
        let expectedSparse = try Self.fullSet.tensor(caseName, "split_sparse_embeddings")
        let expectedMasks = try Self.fullSet.tensor(caseName, "split_masks")
        let expectedIoU = try Self.fullSet.tensor(caseName, "split_iou_predictions")
        try #require(sparse.shape == expectedSparse.shape && masks.shape == expectedMasks.shape && iou.shape == expectedIoU.shape)
        let sparseDifference = Difference(sparse.data, expectedSparse.data)
        let maskDifference = Difference(masks.data, expectedMasks.data)
        let iouDifference = Difference(iou.data, expectedIoU.data)
        print("Decoder fullSet \(caseName) [split, \(sparse.shape[1]) tokens]: sparse \(sparseDifference); masks \(maskDifference); iou \(iouDifference)")
        #expect(sparseDifference.within(Self.tolerance), "\(sparseDifference)")
        #expect(maskDifference.within(Self.tolerance), "\(maskDifference)")
        #expect(iouDifference.within(Self.tolerance), "\(iouDifference)")
    }

    /// `get_dense_pe()` computed from `positional_encoding_gaussian_matrix` vs the exported blob.
    @Test("dense PE from the weights matches image_points_embeddings.bin")
    func densePositionalEncoding() throws {
        let (promptEncoder, _) = try Self.fullSet.model()
        let computed = promptEncoder.denseImagePositionalEncoding()
        let exported = try Self.exportedDensePE()
        #expect(!promptEncoder.densePositionalEncodingIsSupplied)
        try #require(computed.shape == exported.shape)
        let difference = Difference(computed.data, exported.data)
        print("Decoder fullSet dense PE (computed vs image_points_embeddings.bin): \(difference)")
        #expect(difference.within(1e-5), "\(difference)")
    }

    /// The raw blob can stand in for the computed PE, and gives the same decoder outputs.
    @Test("supplied image_points_embeddings.bin drives the decoder as well")
    func suppliedDensePositionalEncoding() throws {
        let exported = try Self.exportedDensePE()
        let model = try Self.fullSet.model(densePE: exported)
        #expect(model.0.densePositionalEncodingIsSupplied)
        #expect(model.0.denseImagePositionalEncoding() == exported)
        for caseName in ["points5", "box_point"] {
            let result = try Self.fullSet.runOfficial(caseName, model: model)
            print("Decoder fullSet \(caseName) [official, supplied PE, predictMasks \(result.decoderTime)]: masks \(result.masks); iou \(result.iou)")
            #expect(result.masks.within(Self.tolerance) && result.iou.within(Self.tolerance), "\(caseName): \(result.masks); \(result.iou)")
        }
    }

    /// SamPredictor's multimask outputs are masks 1...3 of the same decoder run; the predictor pads
    /// point-only prompts and embeds the box through `_embed_boxes`, equal to labels 2 and 3.
    @Test("masks 1...3 match SamPredictor.predict(multimask_output=True)", arguments: fullSet.caseNames)
    func predictorMultimask(caseName: String) throws {
        let (promptEncoder, maskDecoder) = try Self.fullSet.model()
        var coords = try Self.fullSet.tensor(caseName, "onnx_point_coords")
        var labels = try Self.fullSet.tensor(caseName, "onnx_point_labels")
        let padded = DecoderReferences.stripPaddingPoint(&coords, &labels)
        let sparse = try promptEncoder.embedPoints(coords: coords, labels: labels, appendPaddingPoint: padded)
        let mask: FloatTensor? = Self.fullSet.has(caseName, "mask_input") ? try Self.fullSet.tensor(caseName, "mask_input") : nil
        let dense = try promptEncoder.denseEmbedding(maskInput: mask, hasMaskInput: mask == nil ? 0 : 1)
        let (masks, iou) = try maskDecoder.predictMasks(imageEmbeddings: try Self.fullSet.imageEmbeddings(),
                                                        imagePE: promptEncoder.denseImagePositionalEncoding(),
                                                        sparse: sparse, dense: dense)
        let plane = masks.shape[2] * masks.shape[3]
        let expectedMasks = try Self.fullSet.tensor(caseName, "low_res_masks")
        let expectedIoU = try Self.fullSet.tensor(caseName, "iou_predictions")
        let maskDifference = Difference(Array(masks.data[plane...]), expectedMasks.data)
        let iouDifference = Difference(Array(iou.data[1...]), expectedIoU.data)
        print("Decoder fullSet \(caseName) [predictor, masks 1...3]: masks \(maskDifference); iou \(iouDifference)")
        #expect(maskDifference.within(Self.tolerance), "\(maskDifference)")
        #expect(iouDifference.within(Self.tolerance), "\(iouDifference)")
    }

    /// Feeding the export's padding point as an ordinary -1 point is the same as asking for it.
    @Test("an explicit (0, 0, -1) point equals appendPaddingPoint")
    func explicitPaddingPoint() throws {
        let (promptEncoder, _) = try Self.fullSet.model()
        let coords = try Self.fullSet.tensor("point1", "onnx_point_coords")
        let labels = try Self.fullSet.tensor("point1", "onnx_point_labels")
        let explicit = try promptEncoder.embedPoints(coords: coords, labels: labels)
        var stripped = coords, strippedLabels = labels
        #expect(DecoderReferences.stripPaddingPoint(&stripped, &strippedLabels))
        let appended = try promptEncoder.embedPoints(coords: stripped, labels: strippedLabels, appendPaddingPoint: true)
        #expect(explicit == appended)
    }

    /// The comparison must be able to fail: one decoder weight nudged by +0.5 moves the masks past it.
    @Test("a single perturbed decoder weight breaks the match")
    func perturbedWeightIsDetected() throws {
        var tensors = try Self.fullSet.decoderWeights()
        let key = "mask_decoder.transformer.layers.1.cross_attn_image_to_token.v_proj.weight"
        let original = try #require(tensors[key])
        var values = original.floats()
        values[0] += 0.5
        tensors[key] = Tensor(shape: original.shape, floats: values)
        let result = try Self.fullSet.runOfficial("points5", model: try Self.fullSet.model(tensors: tensors))
        print("Decoder fullSet: \(key)[0] + 0.5 -> masks \(result.masks); iou \(result.iou)")
        #expect(!result.masks.within(Self.tolerance))
    }

    static func exportedDensePE() throws -> FloatTensor {
        FloatTensor(try RawBlob.read(fullSet.path("image_points_embeddings.bin"), dtype: .float32, shape: [1, 256, 64, 64]))
    }
}

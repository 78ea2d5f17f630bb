import Foundation
import SAMFormats
import SAMImage
import SAMTensor
import SAMTestSupport
@testable import SAMPipeline
import Testing

/// SAM2ImagePredictor's path on the committed tiny SAM 2.1 set: the photo stretched to the input,
/// prompts in original pixels (box first, padding always), the selected masks clamped, masks
/// resized straight to the photo.
@Suite("Pipeline: SAM 2.1 tiny references")
struct SAM2PipelineTests {
    static let root = TestPaths.sam2TinyReferences
    static let tolerance: Float = 1e-4

    static func tensor(_ relative: String) throws -> FloatTensor { FloatTensor(try NPY.read(root + "/references/" + relative)) }

    static func photo() throws -> RGBImage {
        let pixels = try NPY.read(root + "/references/original_image.npy")
        return try RGBImage(width: pixels.shape[1], height: pixels.shape[0], pixels: Array(pixels.storage.bytes))
    }

    static func segmenter() throws -> SegmentAnything {
        let folder = try TestPaths.temporaryFolder("sam2-pipeline")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return try SegmentAnything(modelPath: try TestModels.sam2Tiny(in: folder))
    }

    @Test("the photo becomes SAM2Transforms' input: to [0, 1], antialiased resize to 96x96, normalised")
    func preprocessing() throws {
        let photo = try Self.photo()
        #expect(photo.width == 120 && photo.height == 90)  // the width shrinks (antialiased), the height grows
        let (input, inputSize) = try SquarePreprocessor(side: 96).prepare(photo)
        #expect(inputSize == ImageSize(height: 96, width: 96))
        let reference = try Self.tensor("input_image.npy")
        #expect(input.shape == reference.shape)
        let difference = Difference(input.data, reference.data)
        // torch sums a handful of float products per pass: a few ulp of values below ~2.7 (measured 7.2e-7).
        #expect(difference.maxAbs <= 2e-6, "\(difference)")
        print("SAM 2.1 tiny input image: \(difference)")
    }

    @Test("prompt coordinates are divided by the original size and times the input side, in float32")
    func coordinates() throws {
        let transform = InputTransform(SquarePreprocessor(side: 1024))
        let mapped = try transform.applyCoords([642.5, 300.25, 0, 1364], originalSize: ImageSize(height: 1365, width: 2048))
        let width: Float = 2048, height: Float = 1365, side: Float = 1024
        let expected: [Float] = [642.5 / width * side, 300.25 / height * side, 0, 1364 / height * side]
        #expect(mapped == expected)
        #expect(transform.inputSize(for: ImageSize(height: 5, width: 7)) == ImageSize(height: 1024, width: 1024))
    }

    @Test("every case's selected low-res masks, scores and binary masks match SAM2ImagePredictor.predict")
    func predictorPath() throws {
        let segmenter = try Self.segmenter()
        try segmenter.setImage(try Self.photo())
        // The encoder on the transformed photo lands where it does on the reference input.
        let features = try #require(segmenter.features)
        for (map, name) in zip(features.maps, ["image_embed", "high_res_feats_0", "high_res_feats_1"]) {
            let difference = Difference(map.data, try Self.tensor("\(name).npy").data)
            #expect(difference.within(Self.tolerance), "\(name): \(difference)")
        }
        let cases = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/references")
            .filter { FileManager.default.fileExists(atPath: "\(Self.root)/references/\($0)/multimask_output.npy") }.sorted()
        #expect(cases.count == 9)
        var singleChoices: [String: [Int]] = [:]
        for name in cases {
            let prompt = try TinyPipeline.prompt(root: Self.root, caseName: name)
            let multimask = try Self.tensor("\(name)/multimask_output.npy").data[0] == 1
            let prediction = try segmenter.predict(prompt, selection: multimask ? .multimask : .single)
            if !multimask { singleChoices[name] = prediction.selected }
            let low = Segmenter.gather(prediction.lowResLogits, prediction.selected)
            let maskError = Difference(low.data, try Self.tensor("\(name)/low_res_masks.npy").data)
            let iouError = Difference(prediction.scores, try Self.tensor("\(name)/iou_predictions.npy").data)
            #expect(maskError.within(Self.tolerance), "\(name): \(maskError)")
            #expect(iouError.within(Self.tolerance), "\(name): \(iouError)")
            #expect(prediction.objectScoreLogit != nil)
            let binaryFile = "\(Self.root)/references/\(name)/masks_binary.npy"
            if FileManager.default.fileExists(atPath: binaryFile) {
                let reference = try NPY.read(binaryFile)
                #expect(reference.shape == [1, prediction.selected.count, 90, 120])
                // SAM2ImagePredictor returns the masks as float 0 / 1.
                let expected = reference.floats().map { UInt8($0) }
                let mismatches = zip(prediction.masks.values, expected).filter { $0 != $1 }.count
                // A pixel can flip only where its logit is within rounding of 0; none is here.
                #expect(mismatches == 0, "\(name): \(mismatches) of \(expected.count) mask pixels differ")
            }
        }
        // point1's mask 0 is unstable (0.969): the best multimask output; points5's is stable (0.987).
        #expect(singleChoices["point1_single"] != [0] && singleChoices["points5_single"] == [0], "\(singleChoices)")
    }

    @Test("features from an earlier run are taken back with their record; a SAM-style embedding alone is refused")
    func cachedFeatures() throws {
        let segmenter = try Self.segmenter()
        let photo = try Self.photo()
        try segmenter.setImage(photo)
        let features = try #require(segmenter.features)
        let record = try #require(segmenter.embeddingsProvenance)
        #expect(record.inputSize == ImageSize(height: 96, width: 96))
        let prompt = Prompt(points: [.init(x: 30, y: 40)])
        let fresh = try segmenter.predict(prompt)
        try segmenter.setFeatures(features, originalSize: photo.size, provenance: record)
        #expect(try segmenter.predict(prompt).lowResLogits == fresh.lowResLogits)
        #expect(record.featureDigests?.keys.sorted() == ["high_res_feats_0", "high_res_feats_1", "image_embed"])
        // A high-resolution map of another image beside the right embedding: refused, naming the map.
        for index in features.highResolution.indices {
            var mixed = features
            mixed.highResolution[index].data[7] *= -1
            do {
                try segmenter.setFeatures(mixed, originalSize: photo.size, provenance: record)
                Issue.record("high_res_feats_\(index) of another image was accepted")
            } catch {
                #expect("\(error)".contains("high_res_feats_\(index) is not the map the record was written with"), "\(error)")
            }
        }
        do {
            try segmenter.setEmbeddings(features.embedding, originalSize: photo.size, provenance: record)
            Issue.record("an embedding without its high-resolution maps was accepted")
        } catch {
            #expect("\(error)".contains("image_embed, high_res_feats_0, high_res_feats_1"), "\(error)")
        }
    }
}

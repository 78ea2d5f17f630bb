import Foundation
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMTensor
import SAMTestSupport
@testable import SAMPipeline
import Testing

/// The predictor path (SamPredictor.predict, multimask) on the committed tiny set: photo and prompt in
/// original pixels in, masks 1..3 and their scores out, against PyTorch's.
@Suite("Pipeline: tiny references")
struct TinyPipelineTests {
    static let tolerance: Float = 1e-4

    @Test("Every case's masks 1-3 and scores match SamPredictor.predict")
    func predictorPath() throws {
        let folder = try TinyPipeline.folder()
        let segmenter = try SegmentAnything(modelPath: try TinyPipeline.model(in: folder))
        try segmenter.setImage(try ImageIO.read(try TinyPipeline.photo(in: folder)))
        let cases = try FileManager.default.contentsOfDirectory(atPath: TinyPipeline.references)
            .filter { TinyPipeline.has($0, "low_res_masks") }.sorted()
        #expect(cases.count >= 6)
        for caseName in cases {
            let prompt = try TinyPipeline.prompt(root: TestPaths.tinyReferences, caseName: caseName)
            let prediction = try segmenter.predict(prompt)
            #expect(prediction.selected == [1, 2, 3])
            let masks = SegmentAnythingSlices.masks(prediction.lowResLogits, 1...3)
            let maskError = Difference(masks.data, try TinyPipeline.tensor(caseName, "low_res_masks").data)
            let iouError = Difference(prediction.scores, try TinyPipeline.tensor(caseName, "iou_predictions").data)
            #expect(maskError.within(Self.tolerance), "\(caseName): \(maskError)")
            #expect(iouError.within(Self.tolerance), "\(caseName): \(iouError)")
        }
    }

    @Test("The single-mask rule picks mask 0 for several points and among 1-3 for one")
    func singleMaskRule() {
        let iou: [Float] = [0.1, 0.5, 0.9, 0.3]
        // One point plus padding: 2 tokens, mask 0's score drops by 500; the best of 1-3 wins.
        #expect(SegmentAnythingSelection.select(.single, iou: iou, pointCount: 2) == [2])
        // Three tokens: mask 0 gains 500.
        #expect(SegmentAnythingSelection.select(.single, iou: iou, pointCount: 3) == [0])
        #expect(SegmentAnythingSelection.select(.all, iou: iou, pointCount: 3) == [0, 1, 2, 3])
    }

    @Test("Bad prompts and states are refused with a message that says what is wrong")
    func badInput() throws {
        let folder = try TinyPipeline.folder()
        let segmenter = try SegmentAnything(modelPath: try TinyPipeline.model(in: folder))
        #expect(throws: PipelineError.self) { try segmenter.predict(Prompt(points: [.init(x: 1, y: 1)])) }  // no image yet
        try segmenter.setImage(try ImageIO.read(try TinyPipeline.photo(in: folder)))
        func message(_ prompt: Prompt) -> String {
            do { _ = try segmenter.predict(prompt); return "" } catch { return "\(error)" }
        }
        #expect(message(Prompt(points: [.init(x: 128, y: 10)])).contains("outside the 128x85 image"))
        #expect(message(Prompt(points: [.init(x: -1, y: 10)])).contains("outside"))
        #expect(message(Prompt(points: [.init(x: .nan, y: 10)])).contains("finite"))
        #expect(message(Prompt(points: [.init(x: 1, y: 1, label: 2)])).contains("label"))
        #expect(message(Prompt(points: Array(repeating: .init(x: 5, y: 5), count: 101))).contains("1...100"))
        #expect(message(Prompt(box: .init(x0: 50, y0: 10, x1: 40, y1: 20))).contains("x1 < x0"))
        #expect(message(Prompt()).contains("at least one point"))
        #expect(message(Prompt(points: [.init(x: 5, y: 5)], maskInput: FloatTensor(zeros: [1, 1, 8, 8]))).contains("[1,1,32,32]"))
        let size = ImageSize(height: 85, width: 128)
        #expect(throws: PipelineError.self) {
            try segmenter.setEmbeddings(FloatTensor(zeros: [1, 32, 4, 4]), originalSize: size, provenance: segmenter.provenance(forOriginalSize: size))
        }
    }

    @Test("setEmbeddings refuses embeddings of another image size or model, or with no record, unless told to")
    func embeddingsProvenance() throws {
        let folder = try TinyPipeline.folder()
        let segmenter = try SegmentAnything(modelPath: try TinyPipeline.model(in: folder))
        let photo = try ImageIO.read(try TinyPipeline.photo(in: folder))
        try segmenter.setImage(photo)
        let embeddings = try #require(segmenter.embeddings)
        let record = try #require(segmenter.embeddingsProvenance)
        #expect(record.originalSize == photo.size)
        #expect(record.modelIdentity == segmenter.modelIdentity && record.modelIdentity.count == 64)
        func refusal(_ size: ImageSize, _ provenance: EmbeddingsProvenance?) -> String {
            do { try segmenter.setEmbeddings(embeddings, originalSize: size, provenance: provenance); return "" } catch { return "\(error)" }
        }
        // The same image and model: accepted, and predictions match the encoder's own.
        #expect(refusal(photo.size, record) == "")
        let other = ImageSize(height: 800, width: 1000)
        #expect(refusal(other, record).contains("computed for a 128x85 image, this image is 1000x800"))
        var otherModel = record
        otherModel.modelIdentity = String(repeating: "0", count: 64)
        #expect(refusal(photo.size, otherModel).contains("computed by model 0000000000000000"))
        #expect(refusal(photo.size, nil).contains("no record"))
        // The record binds the map itself: another embedding of the right shape is refused, and so is a record without digests.
        #expect(record.featureDigests?.keys.sorted() == ["image_embeddings"])
        var changed = embeddings
        changed.data[0] += 1
        do { try segmenter.setEmbeddings(changed, originalSize: photo.size, provenance: record); Issue.record("a changed map was accepted") } catch {
            #expect("\(error)".contains("image_embeddings is not the map the record was written with"), "\(error)")
        }
        var unbound = record
        unbound.featureDigests = nil
        #expect(refusal(photo.size, unbound).contains("holds no digest of the feature maps"))
        // Forced: accepted, and the record kept is the one the embeddings came with.
        try segmenter.setEmbeddings(embeddings, originalSize: other, provenance: record, allowMismatch: true)
        #expect(segmenter.embeddingsProvenance == record)
    }

    @Test("The record round-trips through its sidecar file; a missing sidecar reads as none")
    func sidecar() throws {
        let folder = try TinyPipeline.folder()
        let record = EmbeddingsProvenance(originalSize: ImageSize(height: 85, width: 128), inputSize: ImageSize(height: 43, width: 64),
                                          modelIdentity: String(repeating: "a", count: 64))
        let path = EmbeddingsProvenance.sidecarPath(forEmbeddings: folder + "/image_embeddings.npy")
        #expect(path == folder + "/image_embeddings.json")
        try record.encoded().write(to: URL(fileURLWithPath: path))
        #expect(try EmbeddingsProvenance.read(sidecar: path) == record)
        #expect(try EmbeddingsProvenance.read(sidecar: folder + "/none.json") == nil)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/bad.json"))
        #expect(throws: PipelineError.self) { try EmbeddingsProvenance.read(sidecar: folder + "/bad.json") }
    }
}

/// Test access to the selection rule and slicing (internal to SAMPipeline).
enum SegmentAnythingSelection {
    static func select(_ selection: MaskSelection, iou: [Float], pointCount: Int) -> [Int] {
        Segmenter.select(selection, iou: iou, pointCount: pointCount)
    }
}

enum SegmentAnythingSlices {
    static func masks(_ masks: FloatTensor, _ range: ClosedRange<Int>) -> FloatTensor {
        Segmenter.gather(masks, Array(range))
    }
}

@Suite("Low-resolution predictions")
struct LowResolutionPredictionTests {
    @Test("predictLowResolution gives predict's logits, scores and selection, before any upscaling")
    func matchesPredict() throws {
        let folder = try TinyPipeline.folder()
        let segmenter = try SegmentAnything(modelPath: try TinyPipeline.model(in: folder))
        try segmenter.setImage(try ImageIO.read(try TinyPipeline.photo(in: folder)))
        for (prompt, selection) in [(Prompt(points: [.init(x: 30, y: 40)]), MaskSelection.multimask),
                                    (Prompt(points: [.init(x: 30, y: 40), .init(x: 90, y: 10, label: 0)]), .single),
                                    (Prompt(box: .init(x0: 10, y0: 5, x1: 70, y1: 60)), .all)] {
            let full = try segmenter.predict(prompt, selection: selection)
            let low = try segmenter.predictLowResolution(prompt, selection: selection)
            #expect(low.returnedLogits == full.lowResLogits && low.logits == full.lowResLogits)
            #expect(low.iouPredictions == full.iouPredictions && low.selected == full.selected)
        }
    }

    @Test("a batch of prompts decodes to the same bits as one call per prompt, in order; a bad prompt's error is thrown")
    func batchMatchesOneByOne() throws {
        let folder = try TinyPipeline.folder()
        let segmenter = try SegmentAnything(modelPath: try TinyPipeline.model(in: folder))
        try segmenter.setImage(try ImageIO.read(try TinyPipeline.photo(in: folder)))
        var prompts: [Prompt] = (0..<9).map { (index: Int) -> Prompt in
            let x = Float(7 + 13 * index), y = Float(60 - 5 * index)
            return Prompt(points: [Prompt.Point(x: x, y: y)])
        }
        prompts.append(Prompt(points: [.init(x: 30, y: 40), .init(x: 90, y: 10, label: 0)]))
        prompts.append(Prompt(box: .init(x0: 10, y0: 5, x1: 70, y1: 60)))
        for selection in [MaskSelection.multimask, .single] {
            let batch = try segmenter.predictLowResolution(prompts, selection: selection)
            #expect(batch.count == prompts.count)
            for (prompt, batched) in zip(prompts, batch) {
                let alone = try segmenter.predictLowResolution(prompt, selection: selection)
                #expect(batched.logits.data == alone.logits.data && batched.iouPredictions == alone.iouPredictions)
                #expect(batched.selected == alone.selected && batched.returnedLogits.data == alone.returnedLogits.data)
            }
        }
        #expect(try segmenter.predictLowResolution([], selection: .multimask).isEmpty)
        // A point past the allowed count fails alone and in a batch, with the same error.
        let tooMany = Prompt(points: (0..<200).map { (index: Int) -> Prompt.Point in Prompt.Point(x: Float(index % 100), y: 3) })
        var aloneError = ""
        do { _ = try segmenter.predictLowResolution(tooMany) } catch { aloneError = "\(error)" }
        #expect(!aloneError.isEmpty)
        do {
            _ = try segmenter.predictLowResolution(prompts + [tooMany] + prompts)
            Issue.record("a batch holding a bad prompt decoded")
        } catch {
            #expect("\(error)" == aloneError)
        }
    }
}

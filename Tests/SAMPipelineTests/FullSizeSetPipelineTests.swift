import Foundation
import SAMBLAS
import SAMConvert
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMPipeline

/// From the full-size set's photo and each case's prompt (original pixels) to masks, against PyTorch:
/// all four low-res logits vs the official decoder's, and case point1's full-size binary masks.
/// `make check-reference-set` runs this suite.
@Suite("Full-size set: pipeline: mobilesam-seed0", .enabled(if: TestPaths.fullSizeSetIsPresent))
struct FullSizeSetPipelineTests {
    static let tolerance: Float = 1e-4

    @Test("image.png and every case's prompt to masks within 1e-4; point1's full-size masks agree")
    func photoToMasks() throws {
        let fullSet = TestPaths.fullSizeSet
        let folder = try TinyPipeline.folder()
        let segmenter = try SegmentAnything(modelPath: try TestModels.fullSizeSet(in: folder, withImagePE: true))
        try segmenter.setImage(try ImageIO.read(fullSet + "/image.png"))
        let embeddings = try #require(segmenter.embeddings)
        let embeddingError = Difference(embeddings.data, FloatTensor(try NPY.read(fullSet + "/references/image_embeddings.npy")).data)
        print("fullSet pipeline embeddings: \(embeddingError)")
        #expect(embeddingError.within(Self.tolerance))

        let cases = try FileManager.default.contentsOfDirectory(atPath: fullSet + "/references")
            .filter { FileManager.default.fileExists(atPath: "\(fullSet)/references/\($0)/onnx_low_res_masks.npy") }.sorted()
        #expect(cases.count == 8)
        for caseName in cases {
            let prompt = try TinyPipeline.prompt(root: fullSet, caseName: caseName)
            let prediction = try segmenter.predict(prompt)
            let masks = Difference(prediction.lowResLogits.data,
                                   FloatTensor(try NPY.read("\(fullSet)/references/\(caseName)/onnx_low_res_masks.npy")).data)
            let iou = Difference(prediction.iouPredictions,
                                 FloatTensor(try NPY.read("\(fullSet)/references/\(caseName)/onnx_iou_predictions.npy")).data)
            print("fullSet pipeline \(caseName): masks \(masks); iou \(iou)")
            #expect(masks.within(Self.tolerance), "\(caseName): \(masks)")
            #expect(iou.within(Self.tolerance), "\(caseName): \(iou)")
            if caseName == "point1" {
                let reference = try NPY.read("\(fullSet)/references/point1/masks_binary.npy")
                #expect(reference.shape == [1, 3, 1365, 2048])
                let expected = Array(reference.storage.bytes)
                let disagreeing = zip(prediction.masks.values, expected).filter { ($0 != 0) != ($1 != 0) }.count
                let share = Double(disagreeing) / Double(expected.count)
                print("fullSet pipeline point1 full-size masks: \(disagreeing) of \(expected.count) pixels disagree (\(share * 100)%)")
                #expect(share <= 0.001)
            }
        }
    }

    /// As an app runs it: OpenBLAS on one thread (`Kernels.tuneProcessForInference`; the Makefile sets
    /// OPENBLAS_NUM_THREADS=1) and nothing else computing in the process (the Makefile runs this test
    /// in a process of its own, after the other full-size tests). With OpenBLAS's own threads
    /// competing, or other suites' encoders, every product in flight runs longer, and so does the
    /// wait for it.
    @Test("Cancelling an encode of the full-size photo stops it within 100 ms; the next encode is whole")
    func cancellationStopsTheEncoder() async throws {
        #expect(BLAS.threadCount == 1, "OpenBLAS runs \(BLAS.threadCount) threads: set OPENBLAS_NUM_THREADS=1, as make check-reference-set does")
        let folder = try TinyPipeline.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let segmenter = try Segmenter(modelPath: try TestModels.fullSizeSet(in: folder))
        let photo = try ImageIO.read(TestPaths.fullSizeSet + "/image.png")
        // The first encode also maps the weights and makes the derived tables: time a warm one.
        let whole = try segmenter.encodeSynchronously(photo)
        let started = ContinuousClock.now
        _ = try segmenter.encodeSynchronously(photo)
        let encodeTime = started.duration(to: .now)
        var latencies: [Duration] = []
        // Cancelled early, a third of the way and midway through the encoder.
        for share in [0.1, 0.3, 0.5] {
            let task = Task { try await segmenter.encode(photo) }
            try await Task.sleep(for: encodeTime * share)
            let cancelled = ContinuousClock.now
            task.cancel()
            let result = await task.result
            latencies.append(cancelled.duration(to: .now))
            #expect(throws: CancellationError.self, "cancelled at \(share) of the encode") { _ = try result.get() }
        }
        let restarted = ContinuousClock.now
        let again = try await segmenter.encode(photo)
        print("encode \(encodeTime), async (finer ranges) \(restarted.duration(to: .now)); from cancel to CancellationError: \(latencies)")
        #expect(latencies.allSatisfy { $0 <= .milliseconds(100) }, "\(latencies)")
        #expect(again.features == whole.features)
    }
}

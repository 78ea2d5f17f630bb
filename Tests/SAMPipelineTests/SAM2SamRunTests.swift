import Foundation
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMTensor
import SAMTestSupport
import Testing

/// samrun with a SAM 2.1 model: its three feature maps written and reused, its object score reported.
@Suite("Pipeline: samrun with SAM 2.1")
struct SAM2SamRunTests {
    @Test("a run writes SAM 2's features; --embeddings image_embed.npy reuses all three and gives the same masks")
    func outputsAndReuse() throws {
        let folder = try TinyPipeline.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let model = try TestModels.sam2Tiny(in: folder)
        let photo = folder + "/photo.png"
        try ImageIO.writePNG(try SAM2PipelineTests.photo(), to: photo)
        let prompt = ["--point", "60,40", "--box", "10,10,100,80"]
        let first = try samrunTool.run([model, photo] + prompt + ["--masks", "single", "--out", folder + "/first"])
        #expect(first.status == 0, "\(first.stderr)")
        let expected = ["image_embed.npy", "image_embed.json", "high_res_feats_0.npy", "high_res_feats_1.npy", "low_res_masks.npy",
                        "iou_predictions.npy", "overlay.png", "result.json"]
        let written = Set(try FileManager.default.contentsOfDirectory(atPath: folder + "/first"))
        #expect(written.isSuperset(of: expected) && written.count == expected.count + 1, "\(written.sorted())")  // + the one mask
        #expect(try NPY.read(folder + "/first/high_res_feats_0.npy").shape == [1, 2, 24, 24])
        #expect(try NPY.read(folder + "/first/low_res_masks.npy").shape == [1, 4, 24, 24])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/first/result.json")))
            as? [String: Any])
        #expect(result["object_score_logit"] as? Double != nil)
        #expect((result["input_size"] as? [String: Int]) == ["height": 96, "width": 96])

        let second = try samrunTool.run([model, photo] + prompt + ["--masks", "single", "--embeddings", folder + "/first/image_embed.npy",
                                                                   "--out", folder + "/second"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try NPY.read(folder + "/first/low_res_masks.npy").isBitwiseEqual(to: try NPY.read(folder + "/second/low_res_masks.npy")))

        // Without the high-resolution maps beside it, the cached embedding is refused, naming the file.
        try FileManager.default.removeItem(atPath: folder + "/first/high_res_feats_1.npy")
        let third = try samrunTool.run([model, photo] + prompt + ["--embeddings", folder + "/first/image_embed.npy", "--out", folder + "/third"])
        #expect(third.status == 2 && third.stderr.contains("high_res_feats_1.npy"), "\(third.stderr)")
    }
}

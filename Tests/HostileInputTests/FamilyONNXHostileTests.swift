import Foundation
import SAMTestSupport
import Testing

/// samconvert on the two families' committed ONNX exports with one tensor rewritten to a wrong shape:
/// exit 2, a message naming the file and the canonical tensor, nothing written.
@Suite("samconvert: family ONNX exports with a wrong-shaped tensor")
struct FamilyONNXHostileTests {
    /// (set, the file to edit, the other file of the pair, the stored tensor, its new dims, the tensor the message names)
    static let cases: [(set: String, edited: String, other: String, stored: String, dims: [Int], canonical: String)] = [
        // EfficientViT-SAM: the encoder's output LayerNorm2d affine, stored [1,32,1,1], one channel too many.
        (TestPaths.efficientViTSAMTinyReferences, "ImageEncoder.onnx", "efficientvit_sam_decoder.onnx", "onnx::Mul_701", [1, 33, 1, 1],
         "image_encoder.norm.weight"),
        // SAM-HQ: the HQ mask MLP's first layer, one row too few.
        (TestPaths.samHQViTTinyReferences, "sam_hq_decoder.onnx", "ImageEncoder.onnx", "mask_decoder.hf_mlp.layers.0.weight", [31, 32],
         "mask_decoder.hf_mlp.layers.0.weight"),
    ]

    @Test("exit 2 naming the file and the tensor, nothing written", arguments: 0..<2)
    func wrongShape(index: Int) throws {
        let entry = Self.cases[index]
        let folder = try Hostile.folder()
        defer { Hostile.remove(folder) }
        let count = entry.dims.reduce(1, *)
        let edited = try ONNXInitializerSwap.replacing(
            entry.stored, in: Hostile.read(entry.set + "/" + entry.edited),
            with: ONNXInitializerSwap.tensor(entry.stored, type: 1, dims: entry.dims, raw: Data(repeating: 0, count: count * 4)))
        let bad = folder + "/" + entry.edited
        try edited.write(to: URL(fileURLWithPath: bad))
        let out = folder + "/model.samw"
        let run = try samconvert.run([bad, entry.set + "/" + entry.other, "--config", entry.set + "/config.json", "--out", out])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains(bad) && run.stderr.contains(entry.canonical), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

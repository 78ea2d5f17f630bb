import Foundation
import SAMImport
import SAMTensor
import Testing

/// Full-size ViT global blocks exported by dynamo gather `rel_pos_h`/`rel_pos_w` [2s-1, d] at run
/// time (GatherND by constant q - k + s - 1 indices, then the rel_h / rel_w Einsum) under generated
/// names; seen in torch 2.15's ViT-H export (`val_1051` [127, 80] in blocks 7, 15, 23, 31).
@Suite("ViT relative positions gathered at run time")
struct RelativePositionGatherTests {
    static let side = 3

    /// Two generated-name tables [5, 2], each gathered by `indices` and read by the Einsum of `equations`.
    static func file(indices: [Int64], equations: (String, String) = ("bhwc,hkc->bhwk", "bhwc,wkc->bhwk")) -> ONNXTestFile {
        var file = ONNXTestFile()
        file.inputs = ["q"]
        file.outputs = ["rel_h", "rel_w"]
        file.initializer("val_11", [2 * side - 1, 2], (0..<10).map { Float($0) + 0.5 })
        file.initializer("val_12", [2 * side - 1, 2], (0..<10).map { -Float($0) })
        file.int64Initializers.append(.init(name: "val_13", shape: [side, side, 1], values: indices))
        for (table, gathered, output, equation) in [("val_11", "g_h", "rel_h", equations.0), ("val_12", "g_w", "rel_w", equations.1)] {
            file.node("GatherND", "/blocks.1/attn/GatherND_\(output)", [table, "val_13"], [gathered])
            file.node("Einsum", "/blocks.1/attn/Einsum_\(output)", ["q", gathered], [output], strings: ["equation": equation])
        }
        return file
    }

    /// ref: segment_anything/modeling/image_encoder.py get_rel_pos: relative_coords = q - k + (k_size - 1)
    static let offsets: [Int64] = (0..<side).flatMap { i in (0..<side).map { j in Int64(i - j + side - 1) } }

    @Test("each table becomes rel_pos_h or rel_pos_w as its Einsum says, values as stored")
    func mapped() throws {
        let weights = try SyntheticONNXTests.importing(Self.file(indices: Self.offsets))
        #expect(weights["image_encoder.blocks.1.attn.rel_pos_h"]?.floats() == (0..<10).map { Float($0) + 0.5 })
        #expect(weights["image_encoder.blocks.1.attn.rel_pos_w"]?.floats() == (0..<10).map { -Float($0) })
        #expect(weights.tensors["image_encoder.blocks.1.attn.rel_pos_h"]?.origin.rule == .relativePositionsGatheredAtRunTime)
    }

    @Test("indices that are not the offset table, or an Einsum that names no grid axis, leave the tables unmapped")
    func refused() throws {
        var shuffled = Self.offsets
        shuffled.swapAt(0, 1)
        for file in [Self.file(indices: shuffled), Self.file(indices: Self.offsets, equations: ("bhwc,ckh->bhwk", "bhwc,ckw->bhwk"))] {
            let error = try #require(throws: ImportError.self) { try SyntheticONNXTests.importing(file) }
            #expect(error.code == .unmappedTensors && Set(error.unmapped.map(\.name)) == ["val_11", "val_12"], "\(error)")
        }
    }
}

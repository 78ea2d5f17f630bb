import Foundation
import SAMImport
import SAMTensor
import Testing

/// What dynamo exports of SAM 2 fold, on small hand-built graphs.
@Suite("SAM 2 ONNX rules")
struct SAM2SyntheticONNXTests {
    @Test("Hiera's position embedding folded into a [1,H,W,C] constant added at the trunk's root")
    func foldedPositionEmbedding() throws {
        var file = ONNXTestFile()
        file.inputs = ["tokens"]
        file.outputs = ["y"]
        let values = (0..<(4 * 4 * 3)).map { Float($0) / 7 }
        file.initializer("permute_1", [1, 4, 4, 3], values)
        file.node("Add", "node_add_1", ["tokens", "permute_1"], ["y"], metadata: ["namespace": ": Wrapper/image_encoder: ImageEncoder/image_encoder.trunk: Hiera/add_1: aten.add.Tensor"])
        let weights = try SyntheticONNXTests.importing(file)
        let folded = try #require(weights[SAM2Names.foldedPositionEmbedding])
        #expect(folded.shape == [1, 4, 4, 3] && folded.floats() == values)
        #expect(weights.tensors[SAM2Names.foldedPositionEmbedding]?.origin.rule == .hieraPositionEmbeddingFolded)
    }

    @Test("the padding point's folded zeros are recognised only when they are zeros")
    func paddingPoint() throws {
        func importing(_ values: [Float]) throws -> ImportedWeights {
            var file = ONNXTestFile()
            file.inputs = ["point_coords"]
            file.outputs = ["y"]
            file.initializer("zeros", [1, 1, 2], values)
            file.node("Concat", "node_cat", ["point_coords", "zeros"], ["y"], ints: ["axis": 1])
            return try SyntheticONNXTests.importing(file)
        }
        #expect(try importing([0, 0]).ignored.contains { $0.rule == .paddingPointCoordinates })
        #expect(throws: ImportError.self) { _ = try importing([0, 0.5]) }
    }
}

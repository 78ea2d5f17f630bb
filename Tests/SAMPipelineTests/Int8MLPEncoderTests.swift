import Foundation
import SAMConvert
import SAMFormats
import SAMKernels
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// With int8 weights and int8 products on, an encoder's MLPs run as one tiled pass (`Kernels.int8MLP`)
/// unless observed, when their two layers run apart to show the hidden map: both ways must give the
/// same bits. SAM's ViT and SAM 2's Hiera here, whose observed encoders otherwise run as unobserved;
/// observed, TinyViT's take other paths (its float32 embedding changes too), so MobileSAM's MLP is
/// held to the two layers by `Int8MLPTests` alone.
@Suite("int8 products: encoders' MLPs in tiles")
struct Int8MLPEncoderTests {
    /// (name, inputs, config, an MLP's second layer) of the families' committed tiny weights.
    static let families = [
        ("SAM ViT", [TestPaths.vitTinyReferences + "/sam.h5"], TestPaths.vitTinyReferences, "image_encoder.blocks.0.mlp.lin2.weight"),
        ("SAM 2.1", [TestPaths.sam2TinyCheckpoint], TestPaths.sam2TinyReferences, "image_encoder.trunk.blocks.0.mlp.layers.1.weight"),
    ]

    @Test("the embedding has the bits of the MLPs' layers run apart", arguments: families)
    func sameBits(_ family: (String, [String], String, String)) throws {
        let (name, inputs, set, secondLayer) = family
        let folder = try TestPaths.temporaryFolder("int8-mlp")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var request = ConversionRequest(inputs: inputs, output: folder + "/model.samw")
        request.configFile = set + "/config.json"
        request.precision = .int8
        let result = try Converter.run(request)
        #expect(result.quantizedWeights[secondLayer]?.scheme == .int8, "\(name): \(secondLayer) not stored int8")
        let sam = try ModelFile.load(request.output).sam
        let image = FloatTensor(try NPY.read(set + "/references/input_image.npy"))

        let (tiled, apart) = try Kernels.withInt8Products(true) {
            (try sam.encodeImage(image), try sam.encodeImage(image) { _, _ in })
        }
        let widened = try sam.encodeImage(image)
        let same = tiled.data.map(\.bitPattern) == apart.data.map(\.bitPattern)
        let moved = zip(tiled.data, apart.data).filter { $0 != $1 }.count
        #expect(same, "\(name): tiled MLPs changed \(moved) of \(tiled.count) values of the embedding")
        // The int8 products ran (they round the inputs to int8, so the widened weights give other bits).
        let differs = tiled.data != widened.data
        #expect(differs, "\(name): int8 products did not run")
    }
}

import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// SAM's ViT image encoder on the committed `vit_tiny` reference set (segment_anything's classes,
/// seeded weights with non-zero relative positions and position embedding), and its tables.
@Suite("ViT image encoder")
struct ViTTests {
    static let tolerance: Float = 1e-4
    static let set = ReferenceFolder.vitTiny

    @Test("the tiny ViT matches PyTorch end to end and module by module, in PyTorch's order")
    func tinyReference() throws {
        let config: ViTConfig = try Self.set.config(ViTConfig.self)
        let weights = WeightStore(try Self.set.encoderWeights(), source: "vit_tiny/sam.h5")
        let encoder = try ImageEncoderViT(weights: weights, config: config)
        try weights.finish()
        var observed: [(path: String, output: FloatTensor)] = []
        let embeddings = try encoder(try Self.set.tensor("references/input_image.npy")) { path, output in
            observed.append((path, output))
        }
        let expected = try Self.set.tensor("references/image_embeddings.npy")
        #expect(embeddings.shape == expected.shape)
        let difference = Difference(embeddings.data, expected.data)
        #expect(difference.within(Self.tolerance), "image_embeddings: \(difference)")

        let (dumps, pytorchOrder) = try Self.set.moduleDumps()
        var calls: [String: Int] = [:]
        var worst: (path: String, maxAbs: Float) = ("", 0)
        for (path, output) in observed {
            let call = calls[path, default: 0]
            calls[path] = call + 1
            guard let file = dumps[ReferenceFolder.DumpKey(module: path, call: call)] else {
                Issue.record("no PyTorch dump for module \(path) (call \(call))")
                continue
            }
            let reference = try Self.set.tensor(file)
            #expect(output.shape == reference.shape, "\(path): shape \(output.shape) vs PyTorch \(reference.shape)")
            guard output.shape == reference.shape else { continue }
            let moduleDifference = Difference(output.data, reference.data)
            #expect(moduleDifference.within(Self.tolerance), "\(path): \(moduleDifference)")
            if moduleDifference.maxAbs >= worst.maxAbs { worst = (path, moduleDifference.maxAbs) }
        }
        let observedPaths = observed.map(\.path).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        #expect(observedPaths == pytorchOrder.filter(Set(observedPaths).contains))
        // Every module PyTorch's hooks saw has its Swift counterpart.
        #expect(Set(pytorchOrder).isSubset(of: Set(observedPaths)), "\(Set(pytorchOrder).subtracting(observedPaths))")
        print("ViT tiny: image_embeddings \(difference); \(observed.count) modules, worst \(worst.path) \(worst.maxAbs)")
    }

    /// Unobserved, a windowed block projects only the grid's tokens (`Block.windowedAttention`);
    /// observed, it runs upstream's padded windows so `attn`'s output can be compared with PyTorch's.
    /// The tiny set's 8x8 grid in 3x3 windows is padded to 9x9, so both ways differ in what they
    /// compute, and must not in what they return.
    @Test("unobserved, the windowed blocks' grid-only projections give the observed run's embeddings")
    func unobservedWindows() throws {
        let config: ViTConfig = try Self.set.config(ViTConfig.self)
        #expect(config.gridSize % config.windowSize != 0, "the set no longer pads its windows")
        let weights = WeightStore(try Self.set.encoderWeights(), source: "vit_tiny/sam.h5")
        let encoder = try ImageEncoderViT(weights: weights, config: config)
        let image = try Self.set.tensor("references/input_image.npy")
        let unobserved = try encoder(image)
        let observed = try encoder(image) { _, _ in }
        #expect(unobserved.shape == observed.shape)
        let identical = unobserved.data == observed.data
        #expect(identical, "unobserved against observed: \(Difference(unobserved.data, observed.data))")
        let expected = try Self.set.tensor("references/image_embeddings.npy")
        let difference = Difference(unobserved.data, expected.data)
        #expect(difference.within(Self.tolerance), "image_embeddings: \(difference)")
    }

    @Test("the configuration read from the weights' shapes is config.json's")
    func inferredConfiguration() throws {
        let shapes = try Self.set.allWeights().mapValues(\.shape)
        let inferred = try SAMConfig.inferred(fromShapes: shapes)
        let written = try Self.set.samConfig()
        #expect(inferred.imageEncoder == written.imageEncoder, "\(inferred.imageEncoder.summary) vs \(written.imageEncoder.summary)")
        #expect(inferred.promptEncoder == written.promptEncoder)
        #expect(inferred.maskDecoder.transformerDim == written.maskDecoder.transformerDim)
        // The published sizes are recognised from their widths and relative-position tables.
        let vitB = ViTFamily.inferConfiguration(fromShapes: Self.shapes(of: .vitB), facts: EncoderFacts(), base: nil)
        #expect(vitB == .vitB)
        let vitH = ViTFamily.inferConfiguration(fromShapes: Self.shapes(of: .vitH), facts: EncoderFacts(), base: nil)
        #expect(vitH == .vitH)
    }

    /// The shapes a state dict of `config` holds (what inference reads).
    static func shapes(of config: ViTConfig) -> [String: [Int]] {
        let dim = config.embedDim, grid = config.gridSize, headDim = config.embedDim / config.numHeads
        var shapes: [String: [Int]] = [
            "image_encoder.patch_embed.proj.weight": [dim, 3, config.patchSize, config.patchSize],
            "image_encoder.pos_embed": [1, grid, grid, dim],
            "image_encoder.neck.0.weight": [config.neckDim, dim, 1, 1],
        ]
        for block in 0..<config.depth {
            let side = config.globalAttentionIndexes.contains(block) ? grid : config.windowSize
            shapes["image_encoder.blocks.\(block).attn.rel_pos_h"] = [2 * side - 1, headDim]
            shapes["image_encoder.blocks.\(block).mlp.lin1.weight"] = [Int(Double(dim) * config.mlpRatio), dim]
        }
        return shapes
    }

    @Test("relative-position tables: gathered as get_rel_pos indexes them, resized as F.interpolate does")
    func relativePositionTables() {
        // [5, 2] table for a side of 3: entry (i, j) is row (i - j) + 2.
        let table = FloatTensor(shape: [5, 2], data: (0..<10).map(Float.init))
        let gathered = ImageEncoderViT.gatheredRelativePositions(table, querySize: 3, keySize: 3)
        #expect(gathered.shape == [3, 3, 2])
        for i in 0..<3 {
            for j in 0..<3 {
                let row = i - j + 2
                #expect(Array(gathered.data[((i * 3 + j) * 2)..<((i * 3 + j) * 2 + 2)]) == [Float(2 * row), Float(2 * row + 1)])
            }
        }
        // torch.nn.functional.interpolate(torch.tensor([[[0., 1., 4., 9.]]]), size=7, mode="linear")
        // -> [0.0, 0.35714292526245117, 0.9285714626312256, 2.5, 4.357143878936768, 7.214286804199219, 9.0]
        let short = FloatTensor(shape: [4, 1], data: [0, 1, 4, 9])
        let resized = ImageEncoderViT.resizedLinearly(short, to: 7)
        let pytorch: [Float] = [0.0, 0.35714292526245117, 0.9285714626312256, 2.5, 4.357143878936768,
                                7.214286804199219, 9.0]
        #expect(zip(resized.data, pytorch).allSatisfy { abs($0 - $1) <= 1e-6 }, "\(resized.data)")
    }
}

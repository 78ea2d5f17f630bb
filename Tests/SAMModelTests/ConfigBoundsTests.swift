import Foundation
import SAMModel
import Testing

@Suite("Configuration bounds: sizes checked before anything is built from them")
struct ConfigBoundsTests {
    @Test("the published configurations are within bounds")
    func published() {
        for config in [SAMConfig.mobileSAM, .sam(.vitB), .sam(.vitL), .sam(.vitH)] {
            #expect(config.problems.isEmpty, "\(config.problems)")
        }
    }

    @Test("each size out of bounds or inconsistent is named with its value and the bound")
    func outOfBounds() {
        var cases: [(String, (inout SAMConfig) -> Void)] = [
            ("promptEncoder.imageEmbeddingSize 2147483648 is not in 1...256", { $0.promptEncoder.imageEmbeddingSize = 1 << 31 }),
            ("maxPoints 0 is not in 1...65536", { $0.maxPoints = 0 }),
            ("maxPoints 9223372036854775807 is not in 1...65536", { $0.maxPoints = .max }),
            ("minPoints 7 is not in 0...5", { $0.maxPoints = 5; $0.minPoints = 7 }),
            ("maskDecoder.numHeads 0 is not in 1...256", { $0.maskDecoder.numHeads = 0 }),
            ("maskDecoder.mlpDim -5 is not in 1...65536", { $0.maskDecoder.mlpDim = -5 }),
            ("does not split into 7 heads", { $0.maskDecoder.numHeads = 7 }),
            ("imageEncoder.imageSize 0 is not in 1...4096", { $0.imageEncoder.imageSize = 0 }),
            ("dense positional encoding [4096, 256, 256]", { $0.promptEncoder.embedDim = 4096; $0.promptEncoder.imageEmbeddingSize = 256 }),
        ]
        cases.append(("imageEncoder.mergeStrides needs 3 entries", { config in
            var tiny = TinyViTConfig.mobileSAM
            tiny.mergeStrides = [2]
            config.imageEncoder = AnyImageEncoderConfig(tiny, family: TinyViTFamily.self)
        }))
        cases.append(("imageEncoder.patchSize 0 is not in 1...1024", { config in
            var vit = ViTConfig.vitB
            vit.patchSize = 0  // its grid would divide by zero: never computed
            config.imageEncoder = AnyImageEncoderConfig(vit, family: ViTFamily.self)
        }))
        cases.append(("imageEncoder.mlpRatio nan", { config in
            var vit = ViTConfig.vitB
            vit.mlpRatio = .nan
            config.imageEncoder = AnyImageEncoderConfig(vit, family: ViTFamily.self)
        }))
        for (says, edit) in cases {
            var config = SAMConfig.mobileSAM
            edit(&config)
            #expect(config.problems.contains { $0.contains(says) }, "expected '\(says)' in \(config.problems)")
            #expect(throws: ConfigError.self) { try config.validate(file: "x.json") }
        }
    }

    @Test("a config.json out of bounds is refused naming the file and the field")
    func configFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bounds-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var config = SAMConfig.mobileSAM
        config.promptEncoder.imageEmbeddingSize = 1 << 31
        try JSONEncoder().encode(config).write(to: URL(fileURLWithPath: path))
        do {
            _ = try SAMConfig(contentsOf: path)
            Issue.record("accepted imageEmbeddingSize 2^31")
        } catch {
            #expect(error.file == path && error.message.contains("promptEncoder.imageEmbeddingSize 2147483648"), "\(error)")
        }
    }

    @Test("shape inference never indexes a weight of unexpected rank")
    func inferenceRanks() throws {
        let shapes: [String: [Int]] = [
            "mask_decoder.iou_token.weight": [256], "prompt_encoder.not_a_point_embed.weight": [],
            "mask_decoder.transformer.layers.0.mlp.lin1.weight": [], "image_encoder.layers.0.blocks.0.conv1.c.weight": [3],
            "image_encoder.neck.0.weight": [], "image_encoder.patch_embed.seq.2.c.weight": [1],
        ]
        let config = try SAMConfig.inferred(fromShapes: shapes)
        #expect(config.maskDecoder.transformerDim == SAMConfig.mobileSAM.maskDecoder.transformerDim)
        // A decoder-only input's grid sizes the image as 16x the grid: an overflowing product is left
        // for validate to refuse, not trapped on.
        let decoderOnly = try SAMConfig.inferred(fromShapes: ["mask_decoder.iou_token.weight": [1, 256]], imageEmbeddingSize: Int.max / 8)
        #expect(decoderOnly.problems.contains { $0.hasPrefix("imageEncoder.imageSize") }, "\(decoderOnly.problems)")
    }
}

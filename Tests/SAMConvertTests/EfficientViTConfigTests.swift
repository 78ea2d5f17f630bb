import Foundation
import SAMConvert
import SAMFormats
import SAMModel
import SAMTestSupport
import Testing

/// EfficientViT-SAM's configuration: read from the exporter's config.json, inferred from weights
/// without one, and what neither may express.
@Suite("EfficientViT-SAM configuration")
struct EfficientViTConfigTests {
    static let set = TestPaths.efficientViTSAMTinyReferences

    static func configs() throws -> (file: SAMConfig, encoder: EfficientViTConfig) {
        let file = try SAMConfig(contentsOf: set + "/config.json")
        return (file, try #require(file.imageEncoder.as(EfficientViTConfig.self)))
    }

    @Test("the set's config.json: two frames, the patched 12 grid, eps 1e-6 norms; it round-trips as stored in a .samw")
    func configFile() throws {
        let (config, encoder) = try Self.configs()
        #expect(config.modelFamily == "efficientvit_sam")
        #expect(encoder.imageSize == 96 && encoder.promptFrameSize == 192 && config.promptEncoder.inputImageSize == 192)
        #expect(encoder.neck.upsampleSize == 12 && encoder.neck.inputStages == [4, 3, 2] && encoder.qkvDim == 8)
        #expect(encoder.batchNormEps == 1e-6 && encoder.outputNormEps == 1e-6 && encoder.attentionEps == 1e-15)
        #expect(config.maskDecoder.transformerLayerNormEps == 1e-6 && config.maskDecoder.layerNormEps == 1e-6)
        #expect(config.problems.isEmpty, "\(config.problems)")
        #expect(try JSONDecoder().decode(SAMConfig.self, from: config.jsonData()) == config)
        // Other families' configurations keep their bytes: no decoder eps key.
        #expect(!String(decoding: SAMConfig.sam(.vitB).jsonData(), as: UTF8.self).contains("LayerNormEps"))
    }

    @Test("a config naming an operation this port does not run is refused by name",
          arguments: [("\"activation\": \"gelu_tanh\"", "\"activation\": \"gelu\"", "'gelu' is not ported"),
                      ("\"upsampleMode\": \"bicubic\"", "\"upsampleMode\": \"bilinear\"", "'bilinear' is not ported"),
                      ("\"kernel\": \"relu\"", "\"kernel\": \"softmax\"", "'softmax' is not ported")])
    func unportedOperation(original: String, replacement: String, message: String) throws {
        let folder = try TestPaths.temporaryFolder("efficientvit-config")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = try String(contentsOfFile: Self.set + "/config.json", encoding: .utf8)
        #expect(text.contains(original))
        try text.replacingOccurrences(of: original, with: replacement).write(toFile: folder + "/config.json", atomically: true, encoding: .utf8)
        let error = #expect(throws: ConfigError.self) { try SAMConfig(contentsOf: folder + "/config.json") }
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    @Test("without a config the tiny set's weights give efficientvit_sam and the set's sizes for every shape that shows one")
    func inference() throws {
        let shapes = try HDF5File(path: Self.set + "/efficientvit_sam.h5").readAll().mapValues(\.shape)
        let inferred = try SAMConfig.inferred(fromShapes: shapes)
        let (config, want) = try Self.configs()
        #expect(inferred.modelFamily == "efficientvit_sam" && inferred.imageEncoder.family == "efficientvit")
        let encoder = try #require(inferred.imageEncoder.as(EfficientViTConfig.self))
        #expect(encoder.inChannels == want.inChannels && encoder.widths == want.widths && encoder.depths == want.depths)
        #expect(encoder.blockTypes == want.blockTypes && encoder.expandRatios == want.expandRatios && encoder.fewerNorm == want.fewerNorm)
        #expect(encoder.qkvDim == want.qkvDim && encoder.headsRatio == want.headsRatio)
        var neck = encoder.neck
        neck.upsampleSize = want.neck.upsampleSize  // the 12 grid is the set's patch: no shape shows it
        #expect(neck == want.neck)
        // What no shape shows comes from L0: a 512 input, a 64 grid, the 1024 prompt frame, eps 1e-6.
        #expect(encoder.imageSize == 512 && encoder.neck.upsampleSize == 64 && inferred.promptEncoder.inputImageSize == 1024)
        #expect(inferred.promptEncoder.imageEmbeddingSize == 64 && inferred.maskDecoder.transformerLayerNormEps == 1e-6)
        #expect(inferred.promptEncoder.embedDim == config.promptEncoder.embedDim
                && inferred.promptEncoder.maskInChannels == config.promptEncoder.maskInChannels)
        let (got, expected) = (inferred.maskDecoder, config.maskDecoder)
        #expect(got.transformerDim == expected.transformerDim && got.depth == expected.depth && got.mlpDim == expected.mlpDim
                && got.numMultimaskOutputs == expected.numMultimaskOutputs && got.iouHeadDepth == expected.iouHeadDepth
                && got.iouHeadHiddenDim == expected.iouHeadHiddenDim)
        #expect(inferred.problems.isEmpty, "\(inferred.problems)")
    }

    /// The family states the eps its runtime folds the checkpoint's BatchNorms at
    /// (`ImageEncoderConfiguration.runtimeBatchNormEps`); the converter checks those folds against the
    /// ONNX export's at that eps, whatever the family.
    @Test("conversion folds a checkpoint's BatchNorms at the configuration's eps to check them against an export")
    func mergeCheckUsesConfiguredEps() throws {
        let folder = try TestPaths.temporaryFolder("efficientvit-merge-eps")
        let inputs = [Self.set + "/ImageEncoder.onnx", Self.set + "/efficientvit_sam.pt"]
        var request = ConversionRequest(inputs: inputs, output: folder + "/merged.samw")
        request.configFile = Self.set + "/config.json"
        _ = try Converter.run(request)

        var json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.set + "/config.json")))
            as! [String: Any]
        var encoder = json["imageEncoder"] as! [String: Any]
        encoder["batchNormEps"] = 1e-2
        json["imageEncoder"] = encoder
        let otherEps = folder + "/config-eps-0.01.json"
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: otherEps))
        request.configFile = otherEps
        request.output = folder + "/refused.samw"
        #expect {
            _ = try Converter.run(request)
        } throws: { error in
            "\(error)".contains("eps 0.01") && "\(error)".contains("efficientvit_sam.pt")
        }
        #expect(!FileManager.default.fileExists(atPath: request.output))
    }
}

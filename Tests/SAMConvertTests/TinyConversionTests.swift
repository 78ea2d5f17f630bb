import Foundation
import SAMConvert
import SAMFormats
import SAMModel
import SAMModelFile
import SAMTensor
import SAMTestSupport
import Testing

/// samconvert on the committed tiny set: every input route gives a model that loads from its
/// .samw and matches PyTorch on every case.
@Suite("Conversion: tiny references")
struct TinyConversionTests {
    static let tiny = TestPaths.tinyReferences
    static let tolerance: Float = 1e-4

    func convert(_ inputs: [String], config: String? = tiny + "/config.json", imagePE: String? = nil,
                 precision: StoragePrecision = .single) throws -> (LoadedModel, ConversionResult) {
        var request = ConversionRequest(inputs: inputs, output: try temporaryFolder() + "/model.samw")
        request.configFile = config
        request.imagePE = imagePE
        request.precision = precision
        let result = try Converter.run(request)
        return (try ModelFile.load(request.output), result)
    }

    @Test("HDF5 state dict (BatchNorm unfused) to .samw to matching outputs")
    func fromStateDict() throws {
        let (model, result) = try convert([Self.tiny + "/mobile_sam.h5"])
        #expect(model.metadata.components == ["image_encoder", "prompt_encoder", "mask_decoder"])
        #expect(model.metadata.provenance.sources.map(\.path) == [Self.tiny + "/mobile_sam.h5", Self.tiny + "/config.json"])
        #expect(model.metadata.provenance.sources[0].sha256.count == 64)
        #expect(result.storedTensors.keys.allSatisfy { !$0.contains(".bn.") && !$0.hasSuffix("num_batches_tracked") })
        let errors = try ReferenceCheck(root: Self.tiny).run(model.sam)
        #expect(errors.within(Self.tolerance), "\(errors)")
    }

    @Test("The whole folder (flat and nested HDF5, TorchScript ONNX incl. the split pair, the PE blob, config.json) merges and matches")
    func fromFolder() throws {
        var request = ConversionRequest(inputs: [Self.tiny], output: try temporaryFolder() + "/model.samw")
        request.overwrite = false
        let result = try Converter.run(request)
        #expect(result.imported.files.count == 7)  // two HDF5 files, three TorchScript ONNX (encoder, split pair), the official decoder, the PE blob
        #expect(result.imported.denseImagePE != nil)
        #expect(!result.imported.agreements.isEmpty)
        let model = try ModelFile.load(request.output)
        #expect(model.metadata.densePositionalEncoding == ModelFile.densePositionalEncodingName)
        let errors = try ReferenceCheck(root: Self.tiny).run(model.sam)
        #expect(errors.within(Self.tolerance), "\(errors)")
    }

    @Test("ONNX exports without a config: input size and merge strides come from the graph")
    func fromONNXWithoutConfig() throws {
        // The tiny decoder has 2 heads, which no weight shape shows, so only the encoder is converted here.
        let (model, _) = try convert([Self.tiny + "/ImageEncoder.onnx"], config: nil)
        #expect(model.metadata.config.imageEncoder.imageSize == 128)
        let encoder = try #require(model.metadata.config.imageEncoder.as(TinyViTConfig.self))
        #expect(encoder.mergeStrides == [2, 2, 1])
        #expect(encoder.embedDims == [8, 16, 24, 32])
        let embeddings = try model.sam.encodeImage(try ReferenceCheck(root: Self.tiny).tensor("input_image.npy"))
        let error = Difference(embeddings.data, try ReferenceCheck(root: Self.tiny).tensor("image_embeddings.npy").data)
        #expect(error.within(Self.tolerance), "\(error)")
    }

    @Test("dynamo-based exports (external data, prefixed names) convert and match")
    func fromDynamo() throws {
        let (model, result) = try convert([Self.tiny + "/dynamo"])
        #expect(result.imported.files.allSatisfy { $0.hasSuffix(".onnx") })
        let errors = try ReferenceCheck(root: Self.tiny).run(model.sam)
        #expect(errors.within(Self.tolerance), "\(errors)")
    }

    @Test("f16 storage: measured error against PyTorch (reported, tolerance not widened)")
    func halfPrecision() throws {
        let (single, _) = try convert([Self.tiny + "/mobile_sam.h5"])
        let (half, result) = try convert([Self.tiny + "/mobile_sam.h5"], precision: .half)
        #expect(half.metadata.weightDType == "f16")
        #expect(result.storedTensors.values.allSatisfy { $0.dtype == .float16 })
        let singleFile = try FileManager.default.attributesOfItem(atPath: single.file.path)[.size] as! Int
        let halfFile = try FileManager.default.attributesOfItem(atPath: half.file.path)[.size] as! Int
        #expect(halfFile < singleFile * 6 / 10)
        let errors = try ReferenceCheck(root: Self.tiny).run(half.sam)
        print("f16 tiny: \(errors)")
        // f16 rounds each weight by up to 2^-11 relative; the outputs are finite and near, but need not be within 1e-4.
        #expect(errors.allFinite)
        #expect(errors.worstMask < 0.1)
    }

    @Test("An existing output is kept unless --force; bad input writes nothing")
    func refusals() throws {
        let folder = try temporaryFolder()
        let output = folder + "/model.samw"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: output))
        #expect(throws: ConversionFailure.self) { try Converter.run(ConversionRequest(inputs: [Self.tiny + "/mobile_sam.h5"], output: output)) }
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "keep me")

        let truncated = folder + "/truncated.h5"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.tiny + "/mobile_sam.h5"))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        let fresh = folder + "/fresh.samw"
        let failure = #expect(throws: ConversionFailure.self) { try Converter.run(ConversionRequest(inputs: [truncated], output: fresh)) }
        #expect(failure?.message.contains(truncated) == true, "\(String(describing: failure))")
        #expect(!FileManager.default.fileExists(atPath: fresh))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test("Weights missing a needed tensor are refused before anything is written")
    func incompleteWeights() throws {
        let folder = try temporaryFolder()
        let partial = folder + "/partial.h5"
        // A decoder-only ONNX whose prompt encoder lacks the PE matrix cannot make a model; here: the encoder
        // export alone plus a config that promises 3 stages more than it has is refused by the strict build.
        var config = try SAMConfig(contentsOf: Self.tiny + "/config.json")
        var encoder = try #require(config.imageEncoder.as(TinyViTConfig.self))
        encoder.depths = [1, 1, 3, 1]
        config.imageEncoder = AnyImageEncoderConfig(encoder, family: TinyViTFamily.self)
        let configPath = folder + "/config.json"
        try config.jsonData().write(to: URL(fileURLWithPath: configPath))
        var request = ConversionRequest(inputs: [Self.tiny + "/mobile_sam.h5"], output: partial.replacingOccurrences(of: ".h5", with: ".samw"))
        request.configFile = configPath
        let failure = #expect(throws: ConversionFailure.self) { try Converter.run(request) }
        #expect(failure?.message.contains("image_encoder.layers.2") == true, "\(String(describing: failure))")
        #expect(!FileManager.default.fileExists(atPath: request.output))
    }
}

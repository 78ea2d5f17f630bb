import Foundation
import SAMConvert
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMModel
import SAMModelFile
import SAMPipeline
import SAMTensor
import SAMTestSupport
import Testing

/// Loading a `.samw` uses the large weights where the file is mapped: no copy at load, and float16
/// storage widened only while a kernel uses it.
@Suite("Model loading: weights in place")
struct ModelLoadingTests {
    static let sampleLinear = "mask_decoder.transformer.layers.0.self_attn.q_proj.weight"

    @Test("A float32 model's Linear weights are read from the mapped file itself")
    func float32InPlace() throws {
        let folder = try TinyPipeline.folder()
        let loaded = try ModelFile.load(try TinyPipeline.model(in: folder))
        let mapped = try loaded.file.tensor(named: Self.sampleLinear).storage.bytes.baseAddress
        let linear = (loaded.sam.maskDecoder as! MaskDecoder).transformer.layers[0].selfAttn.qProj.weight
        #expect(!linear.isStoredAsHalf)
        linear.withFloats { #expect(UnsafeRawPointer($0.baseAddress) == mapped) }
    }

    @Test("A float16 model predicts exactly what the same weights widened to float32 predict")
    func float16MatchesWidened() throws {
        let folder = try TinyPipeline.folder()
        var request = ConversionRequest(inputs: [TestPaths.tinyReferences + "/mobile_sam.h5"], output: folder + "/half.samw")
        request.configFile = TestPaths.tinyReferences + "/config.json"
        request.precision = .half
        _ = try Converter.run(request)
        let half = try ModelFile.load(request.output)
        #expect((half.sam.maskDecoder as! MaskDecoder).transformer.layers[0].selfAttn.qProj.weight.isStoredAsHalf)

        // The same values stored as float32: every kernel then reads float32 from the start.
        var widened: [String: Tensor] = [:]
        for name in half.file.names where name != ModelFile.densePositionalEncodingName {
            let tensor = try half.file.tensor(named: name)
            widened[name] = tensor.dtype == .float16 ? Tensor(shape: tensor.shape, floats: tensor.floats()) : tensor
        }
        var metadata = half.metadata
        metadata.weightDType = "f32"
        let widenedPath = folder + "/widened.samw"
        try ModelFile.write(tensors: widened, densePositionalEncoding: nil, metadata: metadata, to: widenedPath)

        let photo = try ImageIO.read(try TinyPipeline.photo(in: folder))
        let prompt = try TinyPipeline.prompt(root: TestPaths.tinyReferences, caseName: "point1")
        var outputs: [[UInt32]] = []
        for model in [half, try ModelFile.load(widenedPath)] {
            let segmenter = SegmentAnything(model: model)
            try segmenter.setImage(photo)
            outputs.append(try segmenter.predict(prompt).lowResLogits.data.map(\.bitPattern))
        }
        #expect(outputs[0] == outputs[1])
    }
}

@Suite("Pipeline: preprocessing from the model")
struct PipelinePreprocessingTests {
    @Test("setImage normalises with the model's own pixel statistics")
    func statisticsFromModel() throws {
        let folder = try TinyPipeline.folder()
        let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.tinyReferences + "/config.json"))
        var object = try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["pixelMean"] = [10.0, 20.0, 30.0]
        object["pixelStd"] = [2.0, 4.0, 8.0]
        let config = folder + "/config.json"
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: config))
        var request = ConversionRequest(inputs: [TestPaths.tinyReferences + "/mobile_sam.h5"], output: folder + "/stats.samw")
        request.configFile = config
        _ = try Converter.run(request)
        let custom = try SegmentAnything(modelPath: request.output)
        #expect(custom.transform.pixelStatistics.mean == [10, 20, 30] && custom.transform.pixelStatistics.std == [2, 4, 8])
        let standard = try SegmentAnything(modelPath: try TinyPipeline.model(in: folder))
        #expect(standard.transform.pixelStatistics.mean == [123.675, 116.28, 103.53])
    }
}

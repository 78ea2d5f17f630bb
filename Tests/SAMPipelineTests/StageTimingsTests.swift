import Foundation
import SAMImageFiles
import SAMPipeline
import SAMTestSupport
import Testing

/// `StageTimings`: the stages that ran are timed, those that did not are nil, and the deprecated
/// dictionaries hold the same values under samrun's names.
@Suite("Pipeline: stage timings")
struct StageTimingsTests {
    @Test("encode and predict time the stages that ran; the deprecated dictionaries agree")
    func timedStages() throws {
        let folder = try TinyPipeline.folder()
        let segmenter = try Segmenter(contentsOf: URL(fileURLWithPath: try TinyPipeline.model(in: folder)))
        let image = try segmenter.encodeSynchronously(try ImageIO.read(try TinyPipeline.photo(in: folder)))
        let imageStages = image.stageTimings
        let preprocessing = try #require(imageStages.preprocessing), encoding = try #require(imageStages.imageEncoding)
        #expect(preprocessing > .zero && encoding > .zero)
        #expect(imageStages.decoding == nil && imageStages.postprocessing == nil)
        #expect(Legacy.timings(image) == ["preprocess": Self.seconds(preprocessing), "image_encoder": Self.seconds(encoding)])

        let prediction = try segmenter.predict(Prompt(points: [.init(x: 60, y: 40, .foreground)]), on: image)
        let promptStages = prediction.stageTimings
        let decoding = try #require(promptStages.decoding), postprocessing = try #require(promptStages.postprocessing)
        #expect(decoding > .zero && postprocessing > .zero)
        #expect(promptStages.preprocessing == nil && promptStages.imageEncoding == nil)
        #expect(Legacy.timings(prediction) == ["prompt_encoder+mask_decoder": Self.seconds(decoding), "postprocess": Self.seconds(postprocessing)])
        #expect(Legacy.timings(prediction) == promptStages.secondsByStage)

        // Features reused from earlier ran neither image stage.
        let reused = try segmenter.image(reusing: image.features, originalSize: image.originalSize,
                                         provenance: image.provenance(featureNames: segmenter.featureNames))
        #expect(reused.stageTimings == StageTimings())
        #expect(Legacy.timings(reused).isEmpty)
    }

    @Test("SegmentAnything's deprecated imageTimings is its current image's stageTimings")
    func predictorImageTimings() throws {
        let folder = try TinyPipeline.folder()
        let predictor = try SegmentAnything(modelPath: try TinyPipeline.model(in: folder))
        #expect(Legacy.imageTimings(predictor).isEmpty)
        try predictor.setImage(try ImageIO.read(try TinyPipeline.photo(in: folder)))
        let stages = try #require(predictor.current?.stageTimings)
        #expect(stages.preprocessing != nil && stages.imageEncoding != nil)
        #expect(Legacy.imageTimings(predictor) == stages.secondsByStage)
        #expect(Set(Legacy.imageTimings(predictor).keys) == ["preprocess", "image_encoder"])
    }

    @Test("secondsByStage names each stage as samrun's result.json does and leaves out those that did not run")
    func secondsByStage() {
        let all = StageTimings(preprocessing: .milliseconds(5), imageEncoding: .seconds(2), decoding: .microseconds(1500),
                               postprocessing: .nanoseconds(250))
        let expected = ["preprocess": 0.005, "image_encoder": 2, "prompt_encoder+mask_decoder": 0.0015, "postprocess": 2.5e-7]
        #expect(Set(all.secondsByStage.keys) == Set(expected.keys))
        for (stage, seconds) in expected {
            #expect(abs((all.secondsByStage[stage] ?? .nan) - seconds) <= 1e-12 * seconds, "\(stage)")
        }
        #expect(StageTimings(decoding: .seconds(1)).secondsByStage == ["prompt_encoder+mask_decoder": 1])
        #expect(StageTimings().secondsByStage.isEmpty)
        #expect(StageTimings(imageEncoding: .seconds(1)) != StageTimings(decoding: .seconds(1)))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}

/// The deprecated dictionaries, read through protocols so these tests compile without deprecation warnings.
private protocol DictionaryTimings { var timings: [String: Double] { get } }
private protocol DictionaryImageTimings { var imageTimings: [String: Double] { get } }
extension Prediction: DictionaryTimings {}
extension EncodedImage: DictionaryTimings {}
extension SegmentAnything: DictionaryImageTimings {}

private enum Legacy {
    static func timings(_ value: some DictionaryTimings) -> [String: Double] { value.timings }
    static func imageTimings(_ value: some DictionaryImageTimings) -> [String: Double] { value.imageTimings }
}

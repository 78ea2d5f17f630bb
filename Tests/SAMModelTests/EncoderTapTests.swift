import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// `ImageEncoder.features(_:observer:tapping:)`: a block's or stage's output by its state-dict path,
/// as PyTorch's forward hook on that module sees it, and the embedding unchanged by tapping.
@Suite("Encoder taps")
struct EncoderTapTests {
    @Test("a ViT block and a TinyViT stage hand out PyTorch's outputs; an unknown path is refused")
    func taps() throws {
        for (set, path) in [(ReferenceFolder.vitTiny, "image_encoder.blocks.1"), (ReferenceFolder.tiny, "image_encoder.layers.1")] {
            let config = try SAMConfig(contentsOf: set.root + "/config.json")
            let weights = WeightStore(try set.encoderWeights(), source: set.root)
            let encoder = try config.imageEncoder.makeEncoder(weights: weights, prefix: "image_encoder")
            let image = try set.tensor("references/input_image.npy")
            let (features, tapped) = try encoder.features(image, observer: nil, tapping: [path])
            let plain = try encoder.features(image, observer: nil)
            #expect(features.embedding.data == plain.embedding.data, "\(path): tapping changed the embedding")
            let output = try #require(tapped[path])
            // The manifest's dump of the module (stored once where it equals another's: `same_as`).
            let file = try #require(try set.moduleDumps().files[ReferenceFolder.DumpKey(module: path, call: 0)], "\(path)")
            let reference = try set.tensor(file)
            #expect(output.count == reference.count, "\(path): \(output.shape) vs \(reference.shape)")
            let difference = Difference(output.data, reference.data)
            #expect(difference.within(1e-4), "\(path): \(difference)")

            #expect(throws: ImageEncoderError.self) { try encoder.features(image, observer: nil, tapping: ["image_encoder.neck"]) }
            do { _ = try encoder.features(image, observer: nil, tapping: ["image_encoder.neck"]) } catch {
                #expect("\(error)".contains("cannot hand out the output of image_encoder.neck (it can: image_encoder."), "\(error)")
            }
        }
    }
}

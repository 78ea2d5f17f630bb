import Foundation
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMImage

/// Masks with their stability counts in one pass: the same binary masks as `masks`, and the counts
/// of the full-size logits `upscale` gives above threshold ± offset.
@Suite("Mask postprocessing: binary masks with stability counts")
struct MaskStabilityTests {
    @Test("equals upscale-then-count and masks(), for SAM's transform and SAM 2's, thresholds and offsets",
          arguments: [(0.0, 1.0), (0.5, 0.25), (-1.0, 2.0), (0.0, 0.0)])
    func equalsSeparatePasses(threshold: Double, offset: Double) throws {
        var random = SplitMix64(seed: 0x57AB)
        let low = FloatTensor(shape: [2, 3, 16, 16], data: (0..<(2 * 3 * 256)).map { _ in Float.random(in: -4...4, using: &random) })
        let original = ImageSize(height: 37, width: 53)
        for transform in [InputTransform(SamPreprocessor(imageSize: 64)), InputTransform(SquarePreprocessor(side: 64))] {
            let inputSize = transform.inputSize(for: original)
            let (masks, stability) = try transform.masksWithStability(low, inputSize: inputSize, originalSize: original,
                                                                      threshold: threshold, offset: offset)
            var postprocessor = MaskPostprocessor(imageSize: 64, maskThreshold: Float(threshold))
            let size: ImageSize
            if transform.base is SquarePreprocessor {
                postprocessor.imageSize = 16
                size = ImageSize(height: 16, width: 16)
            } else {
                size = inputSize
            }
            let logits = try postprocessor.upscale(low, inputSize: size, originalSize: original)
            #expect(masks == (try postprocessor.masks(low, inputSize: size, originalSize: original)))
            let plane = original.height * original.width
            let high = Float(threshold + offset), lowCut = Float(threshold - offset)
            for index in 0..<6 {
                let values = logits.data[(index * plane)..<((index + 1) * plane)]
                let expected = StabilityCounts(above: values.filter { $0 > high }.count, aboveLowered: values.filter { $0 > lowCut }.count)
                #expect(stability[index] == expected, "plane \(index): \(stability[index]) vs \(expected)")
            }
        }
    }
}

import SAMTensor
import Testing
@testable import SAMImage

/// `InputTransform` over the family-owned `InputTransforming` types: equality by type and value, and
/// each of SAM's and SAM 2's geometries as upstream's predictors compute them.
@Suite("Input transform: SAM's and SAM 2's predictor geometry")
struct InputTransformTests {
    @Test("equal only for the same type with the same values")
    func equality() {
        let sam = InputTransform(SamPreprocessor(imageSize: 64))
        #expect(sam == InputTransform(SamPreprocessor(imageSize: 64)))
        #expect(sam != InputTransform(SamPreprocessor(imageSize: 32)))
        #expect(sam != InputTransform(SquarePreprocessor(side: 64)))
        #expect(InputTransform(SquarePreprocessor(side: 64)) == InputTransform(SquarePreprocessor(side: 64)))
    }

    @Test("SAM scales prompts by the long side's factor; SAM 2 by each side's own")
    func coordinates() throws {
        let original = ImageSize(height: 50, width: 100)
        let sam = InputTransform(SamPreprocessor(imageSize: 64)), sam2 = InputTransform(SquarePreprocessor(side: 64))
        // ref: ResizeLongestSide.get_preprocess_shape(50, 100, 64) = (32, 64): both axes times 0.64
        #expect(sam.inputSize(for: original) == ImageSize(height: 32, width: 64))
        #expect(try sam.applyCoords([50, 25], originalSize: original) == [32, 16])
        // ref: SAM2Transforms.transform_coords: x / 100 * 64, y / 50 * 64
        #expect(sam2.inputSize(for: original) == ImageSize(height: 64, width: 64))
        #expect(try sam2.applyCoords([50, 25], originalSize: original) == [32, 32])
    }
}

import Foundation
import SAMFormats
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMImage
@testable import SAMImageFiles

/// The image side against the full-size set's PyTorch references (`image.png`, 2048x1365).
/// `make check-reference-set` runs it (and requires the full-size set); elsewhere it runs only when SAM_REFERENCE_SET_DIR
/// points at the full-size set.
///
/// Every threshold here is exact equality, because every step is reproduced bit for bit: the
/// resize is Pillow's integer algorithm (same coefficients, same rounding, same pass order), the
/// normalisation is the same float32 subtract and divide, the post-processing performs torch's
/// float operations in torch's order (generic kernel), and the coordinate mapping is the same
/// float64 arithmetic. A single differing value means a semantic change, not noise.
@Suite("Full-size set: image pre- and post-processing: mobilesam-seed0", .enabled(if: TestPaths.fullSizeSetIsPresent))
struct FullSizeSetImageTests {
    static var references: String { TestPaths.fullSizeSet + "/references" }

    @Test("image.png resized to 1024x683 equals PIL's resized_image.npy bit for bit")
    func resizedImage() throws {
        let image = try ImageIO.read(TestPaths.fullSizeSet + "/image.png")
        #expect(image.width == 2048 && image.height == 1365)
        let resized = try ResizeLongestSide(targetLength: 1024).apply(image)
        let reference = try NPY.read(Self.references + "/resized_image.npy")
        #expect(reference.shape == [683, 1024, 3])
        #expect(resized.width == 1024 && resized.height == 683)
        let expected = reference.floats().map { UInt8($0) }
        var differing = 0, worst = 0
        for index in expected.indices where expected[index] != resized.pixels[index] {
            differing += 1
            worst = max(worst, abs(Int(expected[index]) - Int(resized.pixels[index])))
        }
        print("fullSet resized_image: \(differing) of \(expected.count) values differ, max \(worst) levels")
        #expect(differing == 0)
    }

    @Test("normalised, padded input equals input_image.npy exactly")
    func inputImage() throws {
        let image = try ImageIO.read(TestPaths.fullSizeSet + "/image.png")
        let (input, inputSize) = try SamPreprocessor().prepare(image)
        #expect(inputSize == ImageSize(height: 683, width: 1024))
        let reference = FloatTensor(try NPY.read(Self.references + "/input_image.npy"))
        #expect(input.shape == reference.shape)
        let difference = Difference(input.data, reference.data)
        print("fullSet input_image: \(difference)")
        #expect(difference.within(0))
    }

    @Test("point1 low-res logits to full-size masks agree with masks_binary.npy")
    func masks() throws {
        let lowRes = FloatTensor(try NPY.read(Self.references + "/point1/low_res_masks.npy"))
        let reference = try NPY.read(Self.references + "/point1/masks_binary.npy")
        #expect(reference.shape == [1, 3, 1365, 2048])
        let postprocessor = MaskPostprocessor()
        let inputSize = ImageSize(height: 683, width: 1024), originalSize = ImageSize(height: 1365, width: 2048)
        let clock = ContinuousClock()
        var masks = try postprocessor.masks(lowRes, inputSize: inputSize, originalSize: originalSize)
        var best = Duration.seconds(1000)
        for _ in 0..<3 {
            let start = clock.now
            masks = try postprocessor.masks(lowRes, inputSize: inputSize, originalSize: originalSize)
            best = min(best, clock.now - start)
        }
        let expected = reference.storage.bytes
        var disagreeing = 0
        for index in 0..<masks.values.count where (masks.values[index] != 0) != (expected[index] != 0) { disagreeing += 1 }
        let share = Double(disagreeing) / Double(masks.values.count)
        print("fullSet masks_binary: \(disagreeing) of \(masks.values.count) pixels disagree (\(share * 100)%); 3 masks in \(best)")
        #expect(disagreeing == 0)
        // The float path thresholds to the same masks.
        let logits = try postprocessor.upscale(lowRes, inputSize: inputSize, originalSize: originalSize)
        #expect(logits.shape == [1, 3, 1365, 2048])
        #expect(logits.data.map { $0 > 0 ? UInt8(1) : 0 } == masks.values)
    }

    @Test("prompt coordinates map to the official decoder's 1024-space inputs in every case")
    func coordinates() throws {
        let transform = ResizeLongestSide(targetLength: 1024)
        let originalSize = ImageSize(height: 1365, width: 2048)
        let cases = try FileManager.default.contentsOfDirectory(atPath: Self.references).filter {
            FileManager.default.fileExists(atPath: Self.references + "/\($0)/onnx_point_coords.npy")
        }.sorted()
        #expect(cases.count == 8)
        for name in cases {
            let folder = Self.references + "/" + name
            var mapped = [Float]()
            if FileManager.default.fileExists(atPath: folder + "/point_coords.npy") {
                mapped += try transform.applyCoords(try NPY.read(folder + "/point_coords.npy").floats(), originalSize: originalSize)
            }
            if FileManager.default.fileExists(atPath: folder + "/box.npy") {
                mapped += try transform.applyBoxes(try NPY.read(folder + "/box.npy").floats(), originalSize: originalSize)
            }
            var expected = try NPY.read(folder + "/onnx_point_coords.npy").floats()
            let labels = try NPY.read(folder + "/onnx_point_labels.npy").floats()
            if labels.last == -1 { expected.removeLast(2) }  // the (0, 0) padding point
            #expect(mapped == expected, "\(name)")
        }
    }
}

import SAMImage
import SAMTensor
import Testing
@testable import SAMVerify

/// Synthetic frames: 8x8 low-res logits (a positive field of 2), upscaled 2x to 16x16. Low-res
/// column and row 3 feed full-resolution columns and rows 5...8 (align_corners=False).
@Suite("Verify: video logits differing through hole filling")
struct HoleFillingFlipsTests {
    static let side = 8, full = 16, tolerance = 1e-3

    struct Frame {
        var native = [Float](repeating: 2, count: 64), reference = [Float](repeating: 2, count: 64)
        var nativeFull = [Float](repeating: 2, count: 256), referenceFull = [Float](repeating: 2, count: 256)

        /// A one-pixel hole at (3, 3) filled by upstream only: the tracker's component was larger
        /// through (4, 3), a logit within rounding of 0 that upstream put in the foreground.
        static func flippedHole() -> Frame {
            var frame = Frame()
            frame.reference[3 * 8 + 3] = 0.1
            frame.native[3 * 8 + 3] = -0.5
            frame.native[3 * 8 + 4] = -0.0004
            frame.reference[3 * 8 + 4] = 0.0003
            // The filled pixel's footprint differs at full resolution.
            frame.referenceFull[6 * 16 + 6] = 0.4
            frame.nativeFull[6 * 16 + 6] = -0.2
            frame.referenceFull[8 * 16 + 5] = 0.3
            frame.nativeFull[8 * 16 + 5] = -0.1
            return frame
        }

        func check(maxArea: Int = 8, objects: Int = 1, coupled: Bool = false) -> HoleFillingFlips {
            let low = [objects, 1, HoleFillingFlipsTests.side, HoleFillingFlipsTests.side]
            let high = [objects, 1, HoleFillingFlipsTests.full, HoleFillingFlipsTests.full]
            return HoleFillingFlips(native: FloatTensor(shape: low, data: native), reference: FloatTensor(shape: low, data: reference),
                                    nativeLogits: FloatTensor(shape: high, data: nativeFull),
                                    referenceLogits: FloatTensor(shape: high, data: referenceFull),
                                    maxArea: maxArea, tolerance: HoleFillingFlipsTests.tolerance, objectsCoupled: coupled)
        }
    }

    @Test("a hole filled on one side beside a logit within rounding of 0 explains its footprint")
    func explained() {
        let result = Frame.flippedHole().check()
        #expect(result.unexplained == nil)
        #expect(result.disagreements == 1)
    }

    @Test("the flipped logit may be the filled pixel itself")
    func flippedPixelFilled() {
        var frame = Frame()
        frame.reference[3 * 8 + 3] = 0.1
        frame.native[3 * 8 + 3] = 0.0002
        frame.referenceFull[7 * 16 + 7] = 0.2
        #expect(frame.check().unexplained == nil)
        frame.native[3 * 8 + 3] = 0.002  // foreground beyond rounding: a real difference
        #expect(frame.check().unexplained?.contains("foreground") == true)
        #expect(frame.check().involvesHoleFilling)
    }

    @Test("a logit differing away from the filled pixel's footprint is not explained")
    func awayFromFootprint() {
        var frame = Frame.flippedHole()
        frame.nativeFull[12 * 16 + 12] = 2.01
        #expect(frame.check().unexplained?.contains("(12, 12)") == true)
        // Column 9 is fed by low-res columns 4 and 5 only.
        frame = Frame.flippedHole()
        frame.nativeFull[6 * 16 + 9] = 2.01
        #expect(frame.check().unexplained?.contains("(9, 6)") == true)
    }

    @Test("filling that differs with no logit within rounding of 0 beside it is not explained")
    func noNearZeroFlip() {
        var frame = Frame.flippedHole()
        frame.reference[3 * 8 + 4] = -0.0004  // both sides background: the components are the same
        #expect(frame.check().unexplained?.contains("within rounding of 0") == true)
        frame = Frame.flippedHole()
        frame.native[3 * 8 + 4] = -0.01; frame.reference[3 * 8 + 4] = 0.01  // a flip, but not within rounding
        #expect(frame.check().unexplained != nil)
    }

    @Test("more differing pixels than a hole can hold are not explained")
    func largerThanHole() {
        var frame = Frame.flippedHole()
        frame.reference[3 * 8 + 2] = 0.1
        frame.native[3 * 8 + 2] = -0.5
        #expect(frame.check(maxArea: 2).unexplained == nil)
        #expect(frame.check(maxArea: 1).unexplained?.contains("more than a hole of 1") == true)
    }

    @Test("low-res logits differing with no filled side are not explained")
    func notFilled() {
        var frame = Frame.flippedHole()
        frame.reference[5 * 8 + 5] = 1.5
        #expect(frame.check().unexplained?.contains("not a hole filled on one side") == true)
        #expect(!frame.check().involvesHoleFilling)
        frame = Frame.flippedHole()
        frame.native[3 * 8 + 3] = .nan
        #expect(frame.check().unexplained != nil)
    }

    @Test("with non-overlapping masks another object's filled hole explains a logit; otherwise it does not")
    func coupledObjects() {
        var frame = Frame.flippedHole()
        frame.native += [Float](repeating: 2, count: 64)
        frame.reference += [Float](repeating: 2, count: 64)
        frame.nativeFull += [Float](repeating: 2, count: 256)
        frame.referenceFull += [Float](repeating: 2, count: 256)
        frame.referenceFull[256 + 6 * 16 + 7] = -10  // object 2 clamped where object 1 now wins
        #expect(frame.check(objects: 2, coupled: true).unexplained == nil)
        #expect(frame.check(objects: 2, coupled: false).unexplained?.contains("object index 1") == true)
    }

    /// The rule reads the upscaling's own taps (`TorchBilinear.axes`); the footprint above relies on these.
    @Test("bilinear sources as torch computes them without aligned corners")
    func sources() {
        let (rows, _) = TorchBilinear.axes(inRows: 8, inCols: 8, outRows: 16, outCols: 16)
        func taps(_ axis: TorchBilinear.Axis, _ i: Int) -> [Int] { [axis.index0[i], axis.index1[i]] }
        #expect(taps(rows, 0) == [0, 1])  // the second at weight 0
        #expect(taps(rows, 5) == [2, 3])
        #expect(taps(rows, 8) == [3, 4])
        #expect(taps(rows, 15) == [7, 7])
        // 480 rows from 256: row 479 sits at 255.23, the last source twice.
        let (video, _) = TorchBilinear.axes(inRows: 256, inCols: 256, outRows: 480, outCols: 640)
        #expect(taps(video, 479) == [255, 255])
    }
}

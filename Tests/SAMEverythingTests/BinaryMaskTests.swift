import Testing
@testable import SAMEverything

@Suite("Binary masks")
struct BinaryMaskTests {
    @Test("non-zero bytes become 1; sizes are checked")
    func construction() throws {
        let mask = try BinaryMask(width: 3, height: 2, pixels: [0, 255, 2, 1, 0, 0])
        #expect(mask.pixels == [0, 1, 1, 1, 0, 0])
        #expect(mask.area == 3 && !mask.isEmpty)
        #expect(mask[x: 1, y: 0] && mask[x: 0, y: 1] && !mask[x: 0, y: 0] && !mask[x: 5, y: 5])
        #expect(throws: SAMEverythingError.self) { try BinaryMask(width: 3, height: 2, pixels: [0, 1]) }
        #expect(throws: SAMEverythingError.self) { try BinaryMask(width: -1, height: 2) }
        #expect(throws: SAMEverythingError.self) { try BinaryMask(width: Int.max, height: 2) }
        #expect(try BinaryMask(width: 4, height: 0).isEmpty)
    }

    @Test("thresholding is strict, in float32, NaN unset, at every tail length")
    func thresholding() throws {
        // 0.1 as float32 is above 0.1 as float64, but torch compares in float32: not greater.
        let cut = Float(0.1)
        for count in 1...40 {
            let logits = (0..<count).map { i -> Float in [cut, cut.nextUp, cut.nextDown, .nan, .infinity, -.infinity][i % 6] }
            let mask = try BinaryMask(thresholding: logits, width: count, height: 1, threshold: 0.1)
            #expect(mask.pixels == logits.map { $0 > cut ? 1 : 0 }, "\(count) values")
        }
    }
}

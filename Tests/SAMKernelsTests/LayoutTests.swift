import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Layout and parallelFor")
struct LayoutTests {
    @Test("nchwToTokens and tokensToNCHW transpose per batch and round-trip")
    func tokens() {
        var rng = SplitMix64(seed: 10)
        // Sizes that are not multiples of the 32-element tile.
        let (batch, channels, height, width) = (2, 37, 5, 9)
        let x = randomTensor([batch, channels, height, width], using: &rng)
        let tokens = Kernels.nchwToTokens(x)
        #expect(tokens.shape == [batch, height * width, channels])
        var mismatches = 0
        for n in 0..<batch {
            for c in 0..<channels {
                for p in 0..<(height * width) where tokens.data[(n * height * width + p) * channels + c] != x.data[(n * channels + c) * height * width + p] {
                    mismatches += 1
                }
            }
        }
        #expect(mismatches == 0)
        let back = Kernels.tokensToNCHW(tokens, height: height, width: width)
        #expect(back == x)
    }

    @Test("parallelFor visits every index exactly once", arguments: [0, 1, 2, 7, 1000])
    func parallelForCoverage(count: Int) {
        var visits = [Int](repeating: 0, count: count)
        visits.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress
            Kernels.parallelFor(count) { i in base![i] += 1 }
        }
        #expect(visits.allSatisfy { $0 == 1 })
    }
}

import Foundation
import SAMKernels
@testable import SAMParallel
import Synchronization
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Layout and parallelFor")
struct LayoutTests {
    /// (batch, channels, height, width): sizes off the 8x8 blocks and the 64-column strips on
    /// either side, several strips, whole blocks only, and few strips of many rows.
    static let layoutShapes = [(2, 37, 5, 9), (1, 19, 9, 15), (2, 11, 3, 5), (1, 24, 16, 16), (1, 320, 20, 23), (2, 70, 30, 31)]

    @Test("nchwToTokens and tokensToNCHW transpose per batch and round-trip", arguments: layoutShapes)
    func tokens(batch: Int, channels: Int, height: Int, width: Int) {
        var rng = SplitMix64(seed: 10)
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

    @Test("nchwToTokens(x, plus: y) equals the tokens of x + y, bit for bit", arguments: layoutShapes)
    func tokensOfSum(batch: Int, channels: Int, height: Int, width: Int) {
        var rng = SplitMix64(seed: 11)
        let x = randomTensor([batch, channels, height, width], using: &rng)
        let y = randomTensor([batch, channels, height, width], using: &rng)
        #expect(Kernels.nchwToTokens(x, plus: y) == Kernels.nchwToTokens(Kernels.sum(x, y)))
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

    @Test("parallel loops never run more chunks at once than Workers.count")
    func boundedConcurrency() {
        final class Gauge: Sendable {
            let running = Atomic<Int>(0), peak = Atomic<Int>(0)
        }
        let gauge = Gauge()
        Workers.forEachChunk(64) { _ in
            let now = gauge.running.wrappingAdd(1, ordering: .relaxed).newValue
            gauge.peak.max(now, ordering: .relaxed)
            usleep(2_000)  // long enough for every thread the loop has to be inside at once
            gauge.running.wrappingSubtract(1, ordering: .relaxed)
        }
        let peak = gauge.peak.load(ordering: .relaxed)
        #expect(peak >= 1 && peak <= Workers.count, "peak \(peak), Workers.count \(Workers.count)")
    }

    @Test("guided ranges tile the indices in shrinking contiguous ranges, ending in single indices",
          arguments: [(1, 2), (7, 2), (100, 2), (171, 2), (5_000, 4)])
    func guidedRanges(count: Int, workers: Int) {
        let ranges = GuidedRanges(count: count, workers: workers)
        var taken: [Range<Int>] = []
        while let range = ranges.take() { taken.append(range) }
        #expect(taken.first?.lowerBound == 0 && taken.last?.upperBound == count)
        #expect(zip(taken, taken.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound && $0.count >= $1.count })
        #expect(taken.allSatisfy { !$0.isEmpty })
        // The first range is a 1/(2 x workers) share, the last a single index.
        #expect(taken.first?.count == max(1, count / (2 * workers)))
        #expect(taken.last?.count == 1)
        #expect(ranges.take() == nil)
    }
}

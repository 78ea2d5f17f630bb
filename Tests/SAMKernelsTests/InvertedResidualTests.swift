import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Inverted residual, by rows and by channel blocks")
struct InvertedResidualTests {
    /// (batch, in channels, expanded, out channels, height, width, stride, residual): MBConv's
    /// shape (stride 1, residual) and PatchMerging's (stride 2, none), odd sizes where a stride-2
    /// window hangs over the bottom/right padding, maps of one or two rows, rows of 40 pixels, and
    /// expansions of several channel blocks with a short last one (30 = 12 + 12 + 6, 75), and a 1x1 map
    /// at stride 2.
    static let cases = [(2, 3, 12, 3, 9, 10, 1, true), (1, 4, 8, 6, 9, 7, 2, false), (1, 5, 10, 5, 1, 6, 1, true),
                        (1, 2, 6, 4, 2, 2, 2, false), (1, 3, 7, 3, 16, 5, 1, true),
                        (1, 3, 13, 3, 6, 40, 1, true), (2, 4, 30, 5, 7, 6, 2, false), (1, 6, 75, 6, 5, 9, 1, true),
                        (1, 3, 20, 4, 1, 1, 2, false)]
    /// Each schedule on each float32 product the CPU runs (channel blocks expand with the panel product
    /// or the BLAS).
    static let runs: [(Kernels.InvertedResidualSchedule, Kernels.Float32LinearKernel)] =
        [(.rows, .blas), (.channelBlocks, .blas)] + (Kernels.panelKernelAvailable ? [(.rows, .panels), (.channelBlocks, .panels)] : [])

    /// The same block as three layers of float64 references: conv2d 1x1 + GELU, depthwise conv2d
    /// 3x3 (pad 1, stride) + GELU, conv2d 1x1 + epilogue.
    @Test("equals the three convolutions run one after another", arguments: cases, runs)
    func equalsSeparateLayers(_ c: (Int, Int, Int, Int, Int, Int, Int, Bool),
                              run: (Kernels.InvertedResidualSchedule, Kernels.Float32LinearKernel)) throws {
        let (schedule, kernel) = run
        let (batch, inChannels, expanded, outChannels, height, width, stride, hasResidual) = c
        var rng = SplitMix64(seed: UInt64(height * 31 + width * 7 + stride))
        let x = randomTensor([batch, inChannels, height, width], in: -2...2, using: &rng)
        let w = Kernels.InvertedResidualWeights(
            expandWeight: randomTensor([expanded, inChannels, 1, 1], using: &rng), expandBias: randomTensor([expanded], using: &rng),
            depthwiseWeight: randomTensor([expanded, 1, 3, 3], using: &rng), depthwiseBias: randomTensor([expanded], using: &rng),
            projectWeight: randomTensor([outChannels, expanded, 1, 1], using: &rng), projectBias: randomTensor([outChannels], using: &rng))

        let hidden = ConvTests.reference(x, w.expandWeight, w.expandBias, stride: 1, padding: 0, groups: 1)
        let depthwise = ConvTests.reference(hidden.values.map { $0.gelu() }, shape: hidden.shape, w.depthwiseWeight,
                                            w.depthwiseBias, stride: stride, padding: 1, groups: expanded)
        let projected = ConvTests.reference(depthwise.values.map { $0.gelu() }, shape: depthwise.shape, w.projectWeight,
                                            w.projectBias, stride: 1, padding: 0, groups: 1)
        let residual: FloatTensor? = hasResidual ? x : nil
        let expected = EpilogueTests.finish(projected.values, residual: residual, hasResidual ? .gelu : .none)

        let epilogue = Kernels.Epilogue(residual: residual, activation: hasResidual ? .gelu : .none)
        let fused = try Kernels.withFloat32LinearKernel(kernel) {
            Kernels.invertedResidual(x, weights: w, stride: stride, activation: .gelu, epilogue: epilogue, schedule: schedule)
        }
        expectClose(fused, expected, shape: projected.shape, "inverted residual \(c) \(schedule) \(kernel)")
    }
}

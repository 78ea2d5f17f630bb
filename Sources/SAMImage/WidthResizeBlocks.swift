import CVectorMath

extension TorchBilinear {
    /// A width resize's first outputs in blocks of sixteen for `sam_resize_width_runs_avx512`, on CPUs
    /// with AVX-512: where the resize enlarges, sixteen neighbouring outputs read at most sixteen
    /// neighbouring inputs, so each block is one load and two lane permutes rather than sixteen
    /// pairs of scalar loads (the gathers were about half of SAM's mask upscale, 256 -> 1024 ->
    /// 2048 wide, on Zen 4). The same operations per output, so the same bits as the scalar path.
    ///
    /// Where the scale is a whole number or a simple fraction (SAM's 4x and 2x widths), the blocks
    /// between the edges repeat one block's lane offsets and weights with bases a fixed step apart:
    /// such a run keeps one block's tables, held in registers, instead of 256 bytes of tables per
    /// sixteen outputs (SAM's 2048-wide row read 32 KB of them, all of L1, for 8 KB of output).
    struct WidthBlocks: Sendable {
        /// Per run: its first block's base, the step between its blocks' bases, its block count.
        private let runBases: [Int32], runSteps: [Int32], runCounts: [Int32]
        /// Per run, sixteen lanes: each output's two taps as offsets from its block's base (0...15)
        /// and its two weights, the same for every block of the run.
        private let lanes0: [Int32], lanes1: [Int32]
        private let weights0: [Float], weights1: [Float]

        /// The outputs the blocks cover, from the first: a multiple of sixteen.
        let outputs: Int
        /// How many runs of repeating blocks the outputs take.
        var runs: Int { runCounts.count }

        /// nil where the CPU lacks AVX-512, or any block's taps span more than sixteen inputs
        /// (a resize that shrinks), or there is no whole block.
        init?(_ axis: Axis, inSize: Int, keepCols: Int) {
            let blocks = keepCols / 16
            guard TorchBilinear.wideVectors, inSize >= 16, blocks > 0 else { return nil }
            var runBases = [Int32](), runSteps = [Int32](), runCounts = [Int32]()
            var lanes0 = [Int32](), lanes1 = [Int32](), weights0 = [Float](), weights1 = [Float]()
            var previousBase = 0
            for block in 0..<blocks {
                // Clamped so that the sixteen floats read stay inside the input row.
                let base = min(axis.index0[16 * block], inSize - 16)
                let outputs = (16 * block)..<(16 * block + 16)
                let offsets0 = outputs.map { axis.index0[$0] - base }, offsets1 = outputs.map { axis.index1[$0] - base }
                guard offsets0.allSatisfy({ (0..<16).contains($0) }), offsets1.allSatisfy({ (0..<16).contains($0) }) else {
                    return nil
                }
                let blockLanes0 = offsets0.map(Int32.init), blockLanes1 = offsets1.map(Int32.init)
                let blockWeights0 = Array(axis.weight0[outputs]), blockWeights1 = Array(axis.weight1[outputs])
                defer { previousBase = base }
                // The block continues the last run if it repeats the run's tables (weights bit for
                // bit) with its base one step on; a run's second block sets the step.
                if let last = runCounts.indices.last,
                   lanes0.suffix(16).elementsEqual(blockLanes0), lanes1.suffix(16).elementsEqual(blockLanes1),
                   weights0.suffix(16).elementsEqual(blockWeights0, by: { $0.bitPattern == $1.bitPattern }),
                   weights1.suffix(16).elementsEqual(blockWeights1, by: { $0.bitPattern == $1.bitPattern }),
                   runCounts[last] == 1 || base - previousBase == Int(runSteps[last]) {
                    if runCounts[last] == 1 { runSteps[last] = Int32(base - previousBase) }
                    runCounts[last] += 1
                    continue
                }
                runBases.append(Int32(base))
                runSteps.append(0)
                runCounts.append(1)
                lanes0 += blockLanes0
                lanes1 += blockLanes1
                weights0 += blockWeights0
                weights1 += blockWeights1
            }
            (self.runBases, self.runSteps, self.runCounts) = (runBases, runSteps, runCounts)
            (self.lanes0, self.lanes1, self.weights0, self.weights1) = (lanes0, lanes1, weights0, weights1)
            outputs = 16 * blocks
        }

        /// Outputs 0..<outputs of the row at `source` into `target`.
        func run(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>) {
            sam_resize_width_runs_avx512(source, runBases, runSteps, runCounts, Int64(runCounts.count),
                                         lanes0, lanes1, weights0, weights1, target)
        }
    }

    /// Whether this CPU runs CVectorMath's sixteen-lane resize functions (AVX-512F).
    static let wideVectors = sam_vector_math_has_avx512() != 0
}

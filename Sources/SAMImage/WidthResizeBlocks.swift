import CVectorMath

extension TorchBilinear {
    /// A width resize's first outputs in blocks of sixteen for `sam_resize_width_avx512`, on CPUs
    /// with AVX-512: where the resize enlarges, sixteen neighbouring outputs read at most sixteen
    /// neighbouring inputs, so each block is one load and two lane permutes rather than sixteen
    /// pairs of scalar loads (the gathers were about half of SAM's mask upscale, 256 -> 1024 ->
    /// 2048 wide, on Zen 4). The same operations per output, so the same bits as the scalar path.
    struct WidthBlocks: Sendable {
        /// Per block, the first of the sixteen inputs it reads.
        private let bases: [Int32]
        /// Per output, its two taps as offsets from its block's base (0...15).
        private let lanes0: [Int32], lanes1: [Int32]
        private let weights0: [Float], weights1: [Float]

        /// The outputs the blocks cover, from the first: a multiple of sixteen.
        var outputs: Int { 16 * bases.count }

        /// nil where the CPU lacks AVX-512, or any block's taps span more than sixteen inputs
        /// (a resize that shrinks), or there is no whole block.
        init?(_ axis: Axis, inSize: Int, keepCols: Int) {
            let blocks = keepCols / 16
            guard TorchBilinear.wideVectors, inSize >= 16, blocks > 0 else { return nil }
            var bases = [Int32](), lanes0 = [Int32](), lanes1 = [Int32]()
            bases.reserveCapacity(blocks)
            for block in 0..<blocks {
                // Clamped so that the sixteen floats read stay inside the input row.
                let base = min(axis.index0[16 * block], inSize - 16)
                for x in (16 * block)..<(16 * block + 16) {
                    let lane0 = axis.index0[x] - base, lane1 = axis.index1[x] - base
                    guard (0..<16).contains(lane0), (0..<16).contains(lane1) else { return nil }
                    lanes0.append(Int32(lane0))
                    lanes1.append(Int32(lane1))
                }
                bases.append(Int32(base))
            }
            (self.bases, self.lanes0, self.lanes1) = (bases, lanes0, lanes1)
            weights0 = Array(axis.weight0.prefix(16 * blocks))
            weights1 = Array(axis.weight1.prefix(16 * blocks))
        }

        /// Outputs 0..<outputs of the row at `source` into `target`.
        func run(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>) {
            sam_resize_width_avx512(source, bases, lanes0, lanes1, weights0, weights1, Int64(bases.count), target)
        }
    }

    /// Whether this CPU runs CVectorMath's sixteen-lane resize functions (AVX-512F).
    static let wideVectors = sam_vector_math_has_avx512() != 0
}

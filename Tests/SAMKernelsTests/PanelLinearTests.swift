import CVectorMath
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// `linear` on each float32 product (the panel product where the CPU has AVX2 or AVX-512, OpenBLAS
/// on every CPU) against the float64 reference, on shapes that reach every branch of the panel
/// path: row counts off the twelve-row block, output features off the 32-wide panel (one, a
/// partial low half, a partial high half), the tiled path and the few-rows panel split.
@Suite("Panel linear")
struct PanelLinearTests {
    /// The kernels this CPU runs: the BLAS everywhere, the panel product with AVX2 or AVX-512.
    static let kernels: [Kernels.Float32LinearKernel] = Kernels.panelKernelAvailable ? [.panels, .blas] : [.blas]

    /// (rows, in, out): 97, 103, 119 and 130 rows end mid-block; out 1, 9 (low half partial), 33
    /// (second panel of one), 47 (high half partial), 96 (whole panels); 6000 x 40 takes the tiled
    /// path (tiles of 1644 rows, the last partial), the others the panel split; 1 and 22 rows are
    /// a click's and a 16-point prompt's tokens; 1024 and 3072 inputs put rows a multiple of 4 KB apart,
    /// which the panel product copies to a padded stride for each pass of 512 inputs.
    static let shapes = [(96, 5, 1), (97, 7, 9), (103, 33, 33), (119, 96, 47), (130, 96, 96), (6_000, 70, 40), (100, 300, 130),
                         (1, 9, 33), (22, 70, 100), (61, 1024, 40), (25, 3072, 33)]

    @Test("few rows: the panels kept with a weight serve every later call on it", arguments: kernels)
    func keptPanels(kernel: Kernels.Float32LinearKernel) throws {
        var rng = SplitMix64(seed: 450)
        let weightValues = randomTensor([100, 70], using: &rng), bias = randomTensor([100], using: &rng)
        let weight = WeightTensor(weightValues)
        // Below and at the edge of `keptPanelRowLimit`, then past it (packed per call), below again,
        // and one row (the BLAS).
        for rows in [2, 22, 511, 512, 7, 1] {
            let x = randomTensor([rows, 70], using: &rng)
            let out = try Kernels.withFloat32LinearKernel(kernel) { Kernels.linear(x, weight: weight, bias: bias) }
            expectClose(out, LinearTests.reference(x, weightValues, bias), shape: [rows, 100], "\(kernel) \(rows) rows")
        }
    }

    @Test("matches the float64 reference, with and without a bias", arguments: kernels, [true, false])
    func reference(kernel: Kernels.Float32LinearKernel, withBias: Bool) throws {
        for (index, (rows, inFeatures, outFeatures)) in Self.shapes.enumerated() {
            var rng = SplitMix64(seed: UInt64(400 + index))
            let x = randomTensor([rows, inFeatures], using: &rng)
            let weight = randomTensor([outFeatures, inFeatures], using: &rng)
            let bias = withBias ? randomTensor([outFeatures], using: &rng) : nil
            let out = try Kernels.withFloat32LinearKernel(kernel) { Kernels.linear(x, weight: weight, bias: bias) }
            expectClose(out, LinearTests.reference(x, weight, bias), shape: [rows, outFeatures],
                        "\(kernel) \(rows)x\(inFeatures)->\(outFeatures) bias \(withBias)")
        }
    }

    @Test("fused GELU and residual on both of the panel path's branches", arguments: kernels)
    func epilogue(kernel: Kernels.Float32LinearKernel) throws {
        // 400 x 200: two tiles of 336 rows, too few, so the panels split and the epilogue runs over
        // 80,000 outputs in several ranges.
        for (index, (rows, inFeatures, outFeatures)) in [(6_000, 70, 40), (400, 64, 200)].enumerated() {
            var rng = SplitMix64(seed: UInt64(500 + index))
            let x = randomTensor([rows, inFeatures], using: &rng)
            let weight = randomTensor([outFeatures, inFeatures], using: &rng)
            let bias = randomTensor([outFeatures], using: &rng)
            let residual = randomTensor([rows, outFeatures], in: -2...2, using: &rng)
            let out = try Kernels.withFloat32LinearKernel(kernel) {
                Kernels.linear(x, weight: weight, bias: bias, epilogue: Kernels.Epilogue(residual: residual, activation: .gelu))
            }
            let expected = EpilogueTests.finish(LinearTests.reference(x, weight, bias), residual: residual, .gelu)
            expectClose(out, expected, shape: [rows, outFeatures], "\(kernel) \(rows)x\(inFeatures)->\(outFeatures) gelu residual")
        }
    }

    /// (features, inputs, feature stride, first panel, panels): a partial panel; whole panels with
    /// inputs off and on the eight-by-eight blocks; rows wider than the inputs (keys in packed qkv
    /// rows); a range of panels that does not start at the first.
    static let packings = [(35, 3, 3, 0, 2), (64, 21, 21, 0, 2), (96, 16, 16, 0, 3), (70, 24, 61, 0, 3), (96, 19, 19, 1, 2)]

    @Test("panels hold the weight's columns 32 at a time, zero past the last feature", arguments: packings)
    func packing(_ shape: (Int, Int, Int, Int, Int)) {
        let (n, k, featureStride, firstPanel, panelCount) = shape
        let weight = (0..<(n * featureStride)).map { Float($0) }
        let count = Int(sam_panel_floats(Int64(n), Int64(k)))
        #expect(count == (n + 31) / 32 * 32 * k)
        var panels = [Float](repeating: .nan, count: count)
        sam_pack_panels(weight, Int64(n), Int64(k), Int64(featureStride), 1, Int64(firstPanel), Int64(panelCount), &panels)
        for p in 0..<((n + 31) / 32) {
            let packed = p >= firstPanel && p < firstPanel + panelCount
            for t in 0..<k {
                for j in 0..<32 {
                    let feature = p * 32 + j, value = panels[p * k * 32 + t * 32 + j]
                    if packed {
                        let expected = feature < n ? weight[feature * featureStride + t] : 0
                        #expect(value == expected, "panel \(p) input \(t) lane \(j)")
                    } else {
                        #expect(value.isNaN, "panel \(p) was not asked for")
                    }
                }
            }
        }
    }

    /// (rows, inputs, outputs, scale): products over more than 512 inputs, summed in passes of 512
    /// (the last partial: 9000, 4097 and 700; whole: 8192 and 2560), with a scale and without, rows
    /// and outputs off their blocks; and shorter ones in one pass whose panels pair off with one left
    /// (97 and 65 outputs: three panels; 200: seven) or not (64: two), on 6, 7 and 19 rows.
    static let products = [(13, 9_000, 47, Float(0.125)), (25, 8_192, 32, Float(1)), (1, 4_097, 9, Float(-0.5)),
                           (3, 2_560, 33, Float(1)), (14, 700, 40, Float(1)), (7, 300, 97, Float(0.5)),
                           (6, 64, 65, Float(1)), (19, 130, 200, Float(1)), (19, 40, 64, Float(2))]

    /// The panel product's register blocks: AVX-512's twelve rows by one panel and six rows by two (each
    /// runs on every AVX-512 CPU here, whichever it picks), and AVX2's six rows by half a panel.
    enum Block: CaseIterable, CustomStringConvertible {
        case twelveRowsAVX512, sixRowsAVX512, sixRowsAVX2
        var available: Bool { self == .sixRowsAVX2 ? sam_vector_math_has_avx2_fma() != 0 : sam_vector_math_has_avx512() != 0 }
        var description: String { "\(self == .twelveRowsAVX512 ? "12 x 32" : self == .sixRowsAVX512 ? "6 x 64" : "6 x 16") block" }

        /// The product on this block: `rows` of x (`xStride` apart) by `panels` (n outputs over k inputs),
        /// into out (`outStride` apart).
        func product(_ x: [Float], xStride: Int, rows: Int, k: Int, panels: PackedPanels, scale: Float, bias: [Float]?,
                     into out: inout [Float], outStride: Int) {
            let (n, count) = (Int64(panels.n), Int64((panels.n + 31) / 32))
            switch self {
            case .twelveRowsAVX512, .sixRowsAVX512:
                sam_panel_product_blocks_avx512(x, Int64(xStride), Int64(rows), Int64(k), panels.floats, n, 0, count, scale, bias,
                                                &out, Int64(outStride), self == .sixRowsAVX512 ? 1 : 0)
            case .sixRowsAVX2:
                sam_panel_product_avx2(x, Int64(xStride), Int64(rows), Int64(k), panels.floats, n, 0, count, scale, bias, &out,
                                       Int64(outStride))
            }
        }
    }

    /// A weight w [n, k] packed whole by `sam_pack_panels`, 64-byte aligned as `ProductPanels` allocates
    /// it (the product reads panels with aligned loads).
    final class PackedPanels {
        let n: Int
        let floats: UnsafeMutablePointer<Float>

        init(_ w: [Float], n: Int, k: Int) {
            self.n = n
            let count = Int(sam_panel_floats(Int64(n), Int64(k)))
            floats = UnsafeMutableRawPointer.allocate(byteCount: count * 4, alignment: 64).bindMemory(to: Float.self, capacity: count)
            sam_pack_panels(w, Int64(n), Int64(k), Int64(k), 1, 0, Int64((n + 31) / 32), floats)
        }

        deinit { floats.deallocate() }
    }

    // Each block on the CPUs that have its vectors; the others' cases pass with nothing to check.
    @Test("each output one chain per block of 512 inputs, later blocks summed from zero and added, bit for bit, on every block",
          .enabled(if: Kernels.panelKernelAvailable, "the panel product needs AVX2 or AVX-512"), arguments: products, Block.allCases)
    func passes(_ shape: (Int, Int, Int, Float), block: Block) throws {
        guard block.available else { return }
        let (rows, k, n, scale) = shape
        var rng = SplitMix64(seed: UInt64(k))
        let a = randomTensor([rows, k], using: &rng).data, w = randomTensor([n, k], using: &rng).data
        let bias = randomTensor([n], using: &rng).data
        var out = [Float](repeating: .nan, count: rows * n)
        block.product(a, xStride: k, rows: rows, k: k, panels: PackedPanels(w, n: n, k: k), scale: scale, bias: bias, into: &out,
                      outStride: n)
        for r in 0..<rows {
            for c in 0..<n {
                // The first block's chain starts from the bias; each later one from zero, then added.
                var sum = bias[c]
                for t in 0..<min(k, 512) { sum.addProduct(a[r * k + t], w[c * k + t]) }
                for t0 in Swift.stride(from: 512, to: k, by: 512) {
                    var block: Float = 0
                    for t in t0..<min(k, t0 + 512) { block.addProduct(a[r * k + t], w[c * k + t]) }
                    sum = sum + block
                }
                let expected = scale == 1 ? sum : scale * sum
                #expect(out[r * n + c].bitPattern == expected.bitPattern, "row \(r) output \(c): \(out[r * n + c]) vs \(expected)")
            }
        }
    }

    @Test("the panel product writes its rows' outputs and nothing past them, with and without a bias")
    func boundaries() throws {
        // Rows 5 and 7 (off AVX2's six-row block and AVX-512's twelve), outputs 17 and 40 (partial half
        // panels), rows of x and out wider than the product: every float outside [rows, n] stays NaN.
        for (rows, k, n) in [(5, 20, 17), (7, 33, 40), (13, 600, 9)] where Kernels.panelKernelAvailable {
            var rng = SplitMix64(seed: UInt64(rows * 100 + n))
            let (xStride, outStride) = (k + 3, n + 5)
            let x = randomTensor([rows, xStride], using: &rng).data, w = randomTensor([n, k], using: &rng).data
            let bias = randomTensor([n], using: &rng).data
            let panels = PackedPanels(w, n: n, k: k)
            for withBias in [true, false] {
                for block in Block.allCases where block.available {
                    var out = [Float](repeating: .nan, count: (rows + 1) * outStride)
                    block.product(x, xStride: xStride, rows: rows, k: k, panels: panels, scale: 1, bias: withBias ? bias : nil,
                                  into: &out, outStride: outStride)
                    for r in 0...rows {
                        for c in 0..<outStride {
                            let inside = r < rows && c < n
                            #expect(out[r * outStride + c].isNaN != inside, "\(block) \(rows)x\(k)->\(n) row \(r) column \(c)")
                            if inside {
                                var expected: Double = withBias ? Double(bias[c]) : 0
                                for t in 0..<k { expected += Double(x[r * xStride + t]) * Double(w[c * k + t]) }
                                #expect(abs(Double(out[r * outStride + c]) - expected) <= 1e-4 * max(1, abs(expected)))
                            }
                        }
                    }
                }
            }
        }
    }

    @Test("the panel product is the default exactly where the CPU has it; elsewhere it is refused")
    func routing() throws {
        #expect(Kernels.float32LinearKernel == (Kernels.panelKernelAvailable ? .panels : .blas))
        #expect(try Kernels.withFloat32LinearKernel(.blas) { Kernels.float32LinearKernel } == .blas)
        if !Kernels.panelKernelAvailable {
            #expect(throws: Kernels.UnsupportedLinearKernel.self) { try Kernels.setFloat32LinearKernel(.panels) }
        }
    }
}

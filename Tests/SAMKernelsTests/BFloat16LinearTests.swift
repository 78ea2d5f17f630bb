import CBFloat16
import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// The opt-in bfloat16 linear path, on CPUs with AVX512_BF16 (elsewhere it is refused, which the
/// last suite checks). Products of two bfloat16 values are exact in float32, so the only error
/// against a float64 sum of the bfloat16-rounded operands is float32 summation: at most
/// k · 2⁻²⁴ · Σ|x·w| for k terms. Any misplaced weight or input gives errors of the size of the values.
@Suite("bfloat16 linear layers", .serialized, .enabled(if: Kernels.bfloat16Available, "this CPU has no AVX512_BF16"))
struct BFloat16LinearTests {
    /// Round to nearest even, as vcvtneps2bf16 does for normal finite values.
    static func bfloat16(_ value: Float) -> Float {
        let bits = value.bitPattern
        let rounded = bits &+ 0x7FFF &+ ((bits >> 16) & 1)
        return Float(bitPattern: rounded & 0xFFFF_0000)
    }

    static func values(_ count: Int, seed: UInt64) -> [Float] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in Float(Double(rng.next() % 2_000_001) / 1e6 - 1) }
    }

    /// Checks `out` [rows, n] = seed + x [rows, k] · w [n, k]ᵀ within the summation bound.
    static func expectProduct(_ out: [Float], x: [Float], w: [Float], seed: [Float], rows: Int, n: Int, k: Int,
                              implementation: Int32? = nil) {
        var worstExcess = -Double.infinity
        for r in 0..<rows {
            for j in 0..<n {
                var sum = Double(seed[r * n + j]), magnitude = abs(sum)
                for i in 0..<k {
                    let term = Double(bfloat16(x[r * k + i])) * Double(bfloat16(w[j * k + i]))
                    sum += term
                    magnitude += abs(term)
                }
                let bound = Double(k + 1) * 0x1p-24 * magnitude + 1e-30
                worstExcess = max(worstExcess, abs(Double(out[r * n + j]) - sum) / bound)
            }
        }
        let path = implementation.map { ", implementation \($0)" } ?? ""
        #expect(worstExcess <= 1, "worst error \(worstExcess) times the float32 summation bound\(path)")
    }

    @Test("packed panels times rounded rows accumulate onto the output, on every implementation", arguments: [
        (rows: 1, n: 1, k: 1), (rows: 5, n: 7, k: 3), (rows: 13, n: 45, k: 37), (rows: 7, n: 50, k: 20), (rows: 6, n: 32, k: 64),
        (rows: 70, n: 45, k: 37),  // two blocks of 32 rows on AMX tiles and six rows beside them
        (rows: 250, n: 70, k: 1100),  // past one block of rows (128) and of input pairs (256)
    ])
    func accumulate(rows: Int, n: Int, k: Int) {
        let x = Self.values(rows * k, seed: 1), w = Self.values(n * k, seed: 2), seed = Self.values(rows * n, seed: 3)
        var panels = [UInt32](repeating: 0xFFFF_FFFF, count: Int(sam_bf16_panel_count(Int64(n), Int64(k))))
        sam_bf16_pack_weights(w, Int64(n), Int64(k), &panels)
        KernelImplementations.each(from: sam_bf16_implementation(), through: 1, limit: sam_bf16_limit_implementation) { level in
            var scratch = [UInt32](repeating: 0xFFFF_FFFF, count: Int(sam_bf16_scratch_count(Int64(k))))
            // One float past each row of the output: the kernel must leave it alone.
            let stride = n + 1
            var out = [Float](repeating: 42, count: rows * stride)
            for r in 0..<rows { for j in 0..<n { out[r * stride + j] = seed[r * n + j] } }
            sam_bf16_linear_accumulate(x, Int64(rows), Int64(k), Int64(k), panels, Int64(n), &out, Int64(stride), &scratch)
            let product = (0..<rows).flatMap { r in out[(r * stride)..<(r * stride + n)] }
            Self.expectProduct(Array(product), x: x, w: w, seed: seed, rows: rows, n: n, k: k, implementation: level)
            #expect((0..<rows).allSatisfy { out[$0 * stride + n] == 42 }, "implementation \(level)")
        }
    }

    /// A strided pack (attention's keys inside wider rows, its values packed by channel) equals the
    /// plain pack of the same matrix laid out densely, padding included.
    @Test("strided packing equals packing the dense matrix", arguments: [(n: 5, k: 7), (n: 64, k: 1030), (n: 33, k: 40)])
    func stridedPacking(n: Int, k: Int) {
        let dense = Self.values(n * k, seed: 9)
        var expected = [UInt32](repeating: 0xFFFF_FFFF, count: Int(sam_bf16_panel_count(Int64(n), Int64(k))))
        sam_bf16_pack_weights(dense, Int64(n), Int64(k), &expected)
        // Element (j, i) as a transposed matrix [k, n + 3] (three floats of padding per row) ...
        var transposed = [Float](repeating: .nan, count: k * (n + 3))
        for j in 0..<n { for i in 0..<k { transposed[i * (n + 3) + j] = dense[j * k + i] } }
        var packed = [UInt32](repeating: 0xFFFF_FFFF, count: expected.count)
        sam_bf16_pack_strided(transposed, Int64(n), Int64(k), 1, Int64(n + 3), &packed)
        #expect(packed == expected, "transposed, n \(n) k \(k)")
        // ... and as rows of a wider matrix [n, k + 5].
        var wide = [Float](repeating: .nan, count: n * (k + 5))
        for j in 0..<n { for i in 0..<k { wide[j * (k + 5) + i] = dense[j * k + i] } }
        packed = [UInt32](repeating: 0xFFFF_FFFF, count: expected.count)
        sam_bf16_pack_strided(wide, Int64(n), Int64(k), Int64(k + 5), 1, &packed)
        #expect(packed == expected, "wide rows, n \(n) k \(k)")
    }

    /// Level 2 needs the CPU's AMX-BF16 and the kernel's grant of the tile state; without the grant
    /// the path would silently stay on vdpbf16ps.
    @Test("AMX-BF16 runs where the CPU lists it")
    func amxWhereListed() throws {
        guard let listed = KernelImplementations.cpuinfoLists("amx_bf16") else { return }
        #expect((sam_bf16_implementation() == 2) == listed, "implementation \(sam_bf16_implementation()), amx_bf16 listed: \(listed)")
    }

    @Test("Kernels.linear in bfloat16: bias, epilogue, the tiled and the whole-output paths", arguments: [3, 700])
    func linear(rows: Int) throws {
        let (n, k) = (96, 80)
        let x = Self.values(rows * k, seed: 4), w = Self.values(n * k, seed: 5), bias = Self.values(n, seed: 6)
        let input = FloatTensor(shape: [rows, k], data: x)
        let weight = WeightTensor(FloatTensor(shape: [n, k], data: w))
        let biasTensor = FloatTensor(shape: [n], data: bias)
        let reduced = try Kernels.withLinearPrecision(.bfloat16) {
            #expect(Kernels.linearPrecision == .bfloat16)
            return Kernels.linear(input, weight: weight, bias: biasTensor)
        }
        let seeds = (0..<rows).flatMap { _ in bias }
        Self.expectProduct(reduced.data, x: x, w: w, seed: seeds, rows: rows, n: n, k: k)
        // The same call outside the scope is the float32 path, and differs by bfloat16's rounding.
        #expect(Kernels.linearPrecision == .float32)
        let full = Kernels.linear(input, weight: weight, bias: biasTensor)
        let largest = zip(full.data, reduced.data).map { abs($0 - $1) }.max() ?? 0
        #expect(largest > 1e-4 && largest < 0.1, "bfloat16 vs float32: \(largest)")
        // A GELU epilogue applies to the bfloat16 product as to the float32 one.
        let activated = try Kernels.withLinearPrecision(.bfloat16) {
            Kernels.linear(input, weight: weight, bias: biasTensor, epilogue: .gelu)
        }
        var expected = reduced
        Kernels.applyEpilogue(.gelu, to: &expected)
        #expect(activated.data == expected.data)
    }
}

@Suite("bfloat16 precision switch")
struct BFloat16SwitchTests {
    @Test("refused with a clear error where the CPU lacks AVX512_BF16; float32 by default")
    func availability() throws {
        #expect(Kernels.linearPrecision == .float32)
        if Kernels.bfloat16Available {
            #expect(try Kernels.withLinearPrecision(.bfloat16) { Kernels.linearPrecision } == .bfloat16)
        } else {
            let error = try #require(throws: Kernels.UnsupportedPrecision.self) {
                try Kernels.withLinearPrecision(.bfloat16) { Kernels.linearPrecision }
            }
            #expect(error.description.contains("AVX512_BF16"))
        }
    }
}

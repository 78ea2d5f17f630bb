import CInt8
import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// Linear layers over int8 weights (`samconvert --dtype int8`). The integer sums are exact, so the
/// result is fixed bit for bit by the documented rule (CInt8's header): each row quantized with
/// code = round(x · 127 / max|row|), out = fma(Float(Σ code · w), rowScale · weightScale, bias).
/// The reference below computes that rule in Swift, independently of the C kernels, and every
/// implementation (AVX512_VNNI, AVX2, portable C) must give exactly its bits.
@Suite("int8 linear layers", .serialized)
struct Int8LinearTests {
    static func values(_ count: Int, seed: UInt64, scale: Float = 1) -> [Float] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in scale * Float(Double(rng.next() % 2_000_001) / 1e6 - 1) }
    }

    static func int8Weight(_ w: [Float], n: Int, k: Int) throws -> QuantizedWeight {
        try w.withUnsafeBufferPointer { try QuantizedWeight(quantizing: $0, shape: [n, k], scheme: .int8) }
    }

    /// The documented rule, in Swift.
    static func reference(x: [Float], weight: QuantizedWeight, bias: [Float]?, rows: Int) -> [Float] {
        let (n, k) = (weight.shape[0], weight.shape[1])
        let codes = weight.codeBytes
        var out = [Float](repeating: 0, count: rows * n)
        for r in 0..<rows {
            let row = x[(r * k)..<((r + 1) * k)]
            let largest = row.reduce(Float(0)) { max($0, abs($1)) }
            let scale = largest / 127, inverse = largest == 0 ? 0 : 127 / largest
            let xq = row.map { Int(min(127, max(-127, ($0 * inverse).rounded(.toNearestOrEven)))) }
            for j in 0..<n {
                var sum = 0
                for i in 0..<k { sum += xq[i] * Int(Int8(bitPattern: codes[j * k + i])) }
                out[r * n + j] = (bias?[j] ?? 0).addingProduct(Float(sum), scale * weight.rowScale(j))
            }
        }
        return out
    }

    static func run(x: [Float], rows: Int, weight: QuantizedWeight, bias: [Float]?, epilogue: Kernels.Epilogue = .none) -> [Float] {
        Kernels.withInt8Products(true) { product(x: x, rows: rows, weight: weight, bias: bias, epilogue: epilogue) }
    }

    static func product(x: [Float], rows: Int, weight: QuantizedWeight, bias: [Float]?, epilogue: Kernels.Epilogue = .none) -> [Float] {
        Kernels.linear(FloatTensor(shape: [rows, weight.shape[1]], data: x), weight: WeightTensor(weight),
                       bias: bias.map { FloatTensor(shape: [$0.count], data: $0) }, epilogue: epilogue).data
    }

    /// Every implementation this CPU has, best first, then back to the CPU's own.
    static func eachImplementation(_ body: (Int32) throws -> Void) throws {
        try KernelImplementations.each(from: sam_q8_implementation(), through: 0, limit: sam_q8_limit_implementation, body)
    }

    @Test("the documented rule bit for bit, on every implementation and shape edge",
          arguments: [(1, 5, 3), (7, 70, 130), (13, 64, 256), (600, 96, 68), (37, 129, 1027), (64, 130, 192), (96, 64, 64)])
    func matchesRule(rows: Int, n: Int, k: Int) throws {
        let weight = try Self.int8Weight(Self.values(n * k, seed: 11), n: n, k: k)
        let x = Self.values(rows * k, seed: 12, scale: 3)
        let bias = Self.values(n, seed: 13)
        let expected = Self.reference(x: x, weight: weight, bias: bias, rows: rows)
        let noBias = Self.reference(x: x, weight: weight, bias: nil, rows: rows)
        try Self.eachImplementation { level in
            #expect(Self.run(x: x, rows: rows, weight: weight, bias: bias) == expected, "implementation \(level)")
            #expect(Self.run(x: x, rows: rows, weight: weight, bias: nil) == noBias, "implementation \(level), no bias")
        }
    }

    /// Level 3 needs the CPU's AMX-INT8 and the kernel's grant of the tile state; a CPU that lists
    /// the feature and a process that did not get the grant would silently fall back to VNNI.
    @Test("AMX-INT8 runs where the CPU lists it")
    func amxWhereListed() throws {
        guard let listed = KernelImplementations.cpuinfoLists("amx_int8") else { return }
        #expect((sam_q8_implementation() == 3) == listed, "implementation \(sam_q8_implementation()), amx_int8 listed: \(listed)")
    }

    @Test("within the rounding bound of float32 on the dequantized weight")
    func closeToFloat() throws {
        let (rows, n, k) = (40, 48, 300)
        let weight = try Self.int8Weight(Self.values(n * k, seed: 21), n: n, k: k)
        let x = Self.values(rows * k, seed: 22)
        let got = Self.run(x: x, rows: rows, weight: weight, bias: nil)
        let w = weight.floats()
        for r in 0..<rows {
            let row = x[(r * k)..<((r + 1) * k)]
            let step = Double(row.reduce(Float(0)) { max($0, abs($1)) }) / 127
            for j in 0..<n {
                var exact = 0.0, magnitude = 0.0
                for i in 0..<k {
                    exact += Double(row[r * k + i]) * Double(w[j * k + i])
                    magnitude += abs(Double(w[j * k + i]))
                }
                // Each input moves by at most half a step; float32 adds a few ulps.
                let bound = magnitude * step / 2 * 1.0001 + 1e-6 * abs(exact) + 1e-30
                #expect(abs(Double(got[r * n + j]) - exact) <= bound, "row \(r), feature \(j)")
            }
        }
    }

    @Test("epilogue after the product: residual and GELU as on the float path")
    func epilogue() throws {
        let (rows, n, k) = (30, 20, 40)
        let weight = try Self.int8Weight(Self.values(n * k, seed: 31), n: n, k: k)
        let x = Self.values(rows * k, seed: 32)
        let residual = FloatTensor(shape: [rows, n], data: Self.values(rows * n, seed: 33))
        let plain = Self.run(x: x, rows: rows, weight: weight, bias: nil)
        var expected = FloatTensor(shape: [rows, n], data: plain)
        Kernels.applyEpilogue(.init(residual: residual, activation: .gelu), to: &expected)
        let fused = Self.run(x: x, rows: rows, weight: weight, bias: nil, epilogue: .init(residual: residual, activation: .gelu))
        #expect(fused == expected.data)
    }

    @Test("a row holding NaN or infinity gives NaN, as float32 would not hide it")
    func nonFiniteRows() throws {
        let (n, k) = (8, 16)
        let weight = try Self.int8Weight(Self.values(n * k, seed: 41), n: n, k: k)
        var x = Self.values(2 * k, seed: 42)
        x[3] = .infinity
        try Self.eachImplementation { level in
            let out = Self.run(x: x, rows: 2, weight: weight, bias: nil)
            #expect(out[0..<n].allSatisfy { $0.isNaN }, "implementation \(level)")
            #expect(out[n...].allSatisfy { $0.isFinite }, "implementation \(level)")
        }
    }

    @Test("int8 products are opt-in: by default an int8 weight is widened and multiplied in float32")
    func optIn() throws {
        let (rows, n, k) = (20, 12, 40)
        let weight = try Self.int8Weight(Self.values(n * k, seed: 61), n: n, k: k)
        let x = Self.values(rows * k, seed: 62)
        let widened = Kernels.linear(FloatTensor(shape: [rows, k], data: x), weight: FloatTensor(shape: [n, k], data: weight.floats()),
                                     bias: nil).data
        #expect(Self.product(x: x, rows: rows, weight: weight, bias: nil) == widened)
        #expect(Self.run(x: x, rows: rows, weight: weight, bias: nil) == Self.reference(x: x, weight: weight, bias: nil, rows: rows))
        #expect(widened != Self.reference(x: x, weight: weight, bias: nil, rows: rows))
    }

    @Test("an all-zero row is the bias exactly")
    func zeroRow() throws {
        let weight = try Self.int8Weight(Self.values(6 * 12, seed: 51), n: 6, k: 12)
        let bias = Self.values(6, seed: 52)
        #expect(Self.run(x: [Float](repeating: 0, count: 12), rows: 1, weight: weight, bias: bias) == bias)
    }
}

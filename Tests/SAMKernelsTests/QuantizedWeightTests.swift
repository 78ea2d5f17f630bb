import Foundation
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// `QuantizedWeight`: the stored layout, the quantization rules and what dequantizing gives back.
@Suite("quantized weights")
struct QuantizedWeightTests {
    static func values(_ count: Int, seed: UInt64) -> [Float] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in Float(Double(rng.next() % 2_000_001) / 1e6 - 1) }
    }

    static func quantize(_ w: [Float], _ shape: [Int], _ scheme: QuantizedWeight.Scheme) throws -> QuantizedWeight {
        try w.withUnsafeBufferPointer { try QuantizedWeight(quantizing: $0, shape: shape, scheme: scheme) }
    }

    @Test("layouts: scales, then codes from the next 64 bytes")
    func layouts() throws {
        let int8 = try QuantizedWeight.layout(.int8, shape: [3, 5])
        #expect(int8.rows == 3 && int8.inner == 5 && int8.scaleBytes == 12 && int8.codesOffset == 64 && int8.codeBytes == 15)
        let conv = try QuantizedWeight.layout(.int8, shape: [40, 2, 3, 3])
        #expect(conv.inner == 18 && conv.scaleBytes == 160 && conv.codesOffset == 192 && conv.codeBytes == 720)
        let int4 = try QuantizedWeight.layout(.int4, shape: [2, 64])
        #expect(int4.rows == 2 && int4.inner == 64 && int4.scaleBytes == 8 && int4.codesOffset == 64 && int4.codeBytes == 64)
        #expect(throws: QuantizedWeight.ShapeRefused.self) { try QuantizedWeight.layout(.int4, shape: [2, 48]) }
        #expect(throws: QuantizedWeight.ShapeRefused.self) { try QuantizedWeight.layout(.int8, shape: [16]) }
        #expect(throws: QuantizedWeight.ShapeRefused.self) { try QuantizedWeight.layout(.int8, shape: [0, 16]) }
        #expect(throws: QuantizedWeight.ShapeRefused.self) { try QuantizedWeight.layout(.int8, shape: [1 << 40, 1 << 40]) }
    }

    @Test("int8: each element within half a step of its row's scale; the largest exact")
    func int8RoundTrip() throws {
        let (n, k) = (9, 37)
        var w = Self.values(n * k, seed: 1)
        w[5 * k ..< 6 * k].indices.forEach { w[$0] = 0 }  // an all-zero row
        let q = try Self.quantize(w, [n, k], .int8)
        let back = q.floats()
        for j in 0..<n {
            let row = w[(j * k)..<((j + 1) * k)]
            let largest = row.reduce(Float(0)) { max($0, abs($1)) }
            #expect(q.rowScale(j) == largest / 127)
            for i in row.indices {
                #expect(abs(back[i] - w[i]) <= q.rowScale(j) / 2 * 1.0001, "element \(i)")
                if abs(w[i]) == largest { #expect(abs(back[i] - w[i]) <= largest * 1e-6) }
            }
        }
        #expect(back[(5 * k)..<(6 * k)].allSatisfy { $0 == 0 })
    }

    @Test("q4: each group's largest magnitude exact, the rest within half a step (clamped at +7 steps)")
    func int4RoundTrip() throws {
        let (n, k) = (3, 96)
        let w = Self.values(n * k, seed: 2)
        let q = try Self.quantize(w, [n, k], .int4)
        let back = q.floats()
        for group in 0..<(n * k / 32) {
            let values = w[(group * 32)..<((group + 1) * 32)]
            let extreme = values.max { abs($0) < abs($1) }!
            let d = Half.toFloat(Half.fromFloat(extreme / -8))
            for i in values.indices {
                let steps = w[i] / d
                // Nibbles reach -8 steps (the extreme) and +7: beyond +7.5 the value is clamped.
                let allowed = steps > 7.5 ? abs(w[i] - 7 * d) : abs(d) / 2 * 1.001
                #expect(abs(back[i] - w[i]) <= allowed + 1e-7, "element \(i)")
            }
            let at = values.firstIndex(of: extreme)!
            #expect(abs(back[at] - extreme) <= abs(extreme) * 1e-3)  // d rounded to float16
        }
    }

    @Test("non-finite weights and float16-overflowing q4 scales are refused")
    func refusals() throws {
        var w = Self.values(64, seed: 3)
        w[10] = .nan
        #expect(throws: QuantizedWeight.QuantizationRefused.self) { try Self.quantize(w, [2, 32], .int8) }
        w[10] = 1e9
        #expect(throws: QuantizedWeight.QuantizationRefused.self) { try Self.quantize(w, [2, 32], .int4) }
        #expect(throws: QuantizedWeight.QuantizationRefused.self) { try Self.quantize(w, [2, 33], .int8) }
    }

    @Test("a WeightTensor over a quantized weight gives the dequantized floats to every other kernel")
    func weightTensorWidens() throws {
        let w = Self.values(4 * 64, seed: 4)
        for scheme in QuantizedWeight.Scheme.allCases {
            let q = try Self.quantize(w, [4, 64], scheme)
            let tensor = WeightTensor(q)
            #expect(tensor.quantized != nil && tensor.shape == [4, 64])
            #expect(tensor.withFloats { Array($0) } == q.floats())
        }
    }
}

import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

/// `Kernels.int8MLP`: two int8 linear layers and the activation between them made tile by tile, the
/// same bits as the two `linear` calls with int8 products on.
@Suite("int8 MLP in tiles", .serialized)
struct Int8MLPTests {
    static func weight(_ n: Int, _ k: Int, seed: UInt64) throws -> WeightTensor {
        WeightTensor(try Int8LinearTests.int8Weight(Int8LinearTests.values(n * k, seed: seed), n: n, k: k))
    }

    /// (rows, in, hidden, out, residual): one row; several tiles with a short last one; rows past the
    /// kept-panels limit (weights packed per call); widths off the panels' 64 and the codes' 4.
    @Test("the bits of the two layers apart", arguments: [(1, 64, 256, 64, true), (200, 70, 130, 33, false),
                                                           (700, 64, 256, 64, true), (45, 128, 512, 128, true)])
    func matchesTwoLayers(_ c: (Int, Int, Int, Int, Bool)) throws {
        let (rows, inFeatures, hidden, outFeatures, hasResidual) = c
        let first = try Self.weight(hidden, inFeatures, seed: 21), second = try Self.weight(outFeatures, hidden, seed: 22)
        let firstBias = FloatTensor(shape: [hidden], data: Int8LinearTests.values(hidden, seed: 23))
        let secondBias = FloatTensor(shape: [outFeatures], data: Int8LinearTests.values(outFeatures, seed: 24))
        let x = FloatTensor(shape: [1, rows, inFeatures], data: Int8LinearTests.values(rows * inFeatures, seed: 25, scale: 3))
        let residual = hasResidual ? FloatTensor(shape: [1, rows, outFeatures], data: Int8LinearTests.values(rows * outFeatures, seed: 26)) : nil
        let epilogue = Kernels.Epilogue(residual: residual)
        try Int8LinearTests.eachImplementation { level in
            let (fused, apart) = Kernels.withInt8Products(true) {
                (Kernels.int8MLP(x, first: first, firstBias: firstBias, activation: .gelu, second: second, secondBias: secondBias,
                                 epilogue: epilogue),
                 Kernels.linear(Kernels.linear(x, weight: first, bias: firstBias, epilogue: .gelu), weight: second, bias: secondBias,
                                epilogue: epilogue))
            }
            let output = try #require(fused)
            #expect(output.shape == [1, rows, outFeatures])
            #expect(output.data.map(\.bitPattern) == apart.data.map(\.bitPattern), "\(c), implementation \(level)")
        }
    }

    @Test("nil with int8 products off or a float32 weight")
    func declines() throws {
        let first = try Self.weight(32, 16, seed: 31), second = try Self.weight(16, 32, seed: 32)
        let x = FloatTensor(shape: [4, 16], data: Int8LinearTests.values(64, seed: 33))
        #expect(Kernels.withInt8Products(false) {
            Kernels.int8MLP(x, first: first, firstBias: nil, activation: .gelu, second: second, secondBias: nil, epilogue: .none)
        } == nil)
        let float32 = WeightTensor(FloatTensor(shape: [16, 32], data: Int8LinearTests.values(512, seed: 34)))
        #expect(Kernels.withInt8Products(true) {
            Kernels.int8MLP(x, first: first, firstBias: nil, activation: .gelu, second: float32, secondBias: nil, epilogue: .none)
        } == nil)
    }
}

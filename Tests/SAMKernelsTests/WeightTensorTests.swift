import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing

@Suite("Weights used in place")
struct WeightTensorTests {
    /// A float32 tensor whose bytes start `offset` bytes into a larger buffer, as a reader would hand it out.
    static func borrowed(_ values: [Float], shape: [Int], offset: Int, owner: TensorStorage) -> Tensor {
        let bytes = UnsafeRawBufferPointer(rebasing: owner.bytes[offset ..< offset + values.count * 4])
        values.withUnsafeBytes { UnsafeMutableRawPointer(mutating: bytes.baseAddress!).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        return Tensor(dtype: .float32, shape: shape, checkedStorage: TensorStorage(borrowing: bytes, owner: owner))
    }

    @Test("aligned float32 is read where it is stored, not copied")
    func float32InPlace() {
        let owner = TensorStorage(zeroedByteCount: 64 + 24)
        let tensor = Self.borrowed([1, 2, 3, 4, 5, 6], shape: [2, 3], offset: 64, owner: owner)
        let weight = WeightTensor(tensor)
        #expect(!weight.isStoredAsHalf)
        weight.withFloats { floats in
            #expect(UnsafeRawPointer(floats.baseAddress!) == tensor.storage.bytes.baseAddress!)
            #expect(Array(floats) == [1, 2, 3, 4, 5, 6])
        }
    }

    @Test("misaligned float32 is copied into aligned memory with the same values")
    func misalignedFloat32() {
        let owner = TensorStorage(zeroedByteCount: 2 + 16)
        let tensor = Self.borrowed([1.5, -2, 3.25, 1e-30], shape: [4], offset: 2, owner: owner)
        let weight = WeightTensor(tensor)
        weight.withFloats { floats in
            #expect(Int(bitPattern: floats.baseAddress!) % 4 == 0)
            #expect(UnsafeRawPointer(floats.baseAddress!) != tensor.storage.bytes.baseAddress!)
            #expect(Array(floats) == [1.5, -2, 3.25, 1e-30])
        }
    }

    @Test("float16 storage widens exactly, normals, subnormals, zeros and infinities alike")
    func float16Widening() throws {
        // 1.0, -2.0, 65504 (largest), 2^-24 (smallest subnormal), -0, +inf, 0.333 (0x3555)
        let bits: [UInt16] = [0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x7C00, 0x3555]
        let storage = bits.withUnsafeBytes { TensorStorage(copying: $0) }
        let weight = WeightTensor(try Tensor(dtype: .float16, shape: [7], storage: storage))
        #expect(weight.isStoredAsHalf)
        let expected: [Float] = [1, -2, 65504, 0x1p-24, -0.0, .infinity, Float(Float16(bitPattern: 0x3555))]
        weight.withFloats { floats in
            #expect(floats.map(\.bitPattern) == expected.map(\.bitPattern))
        }
    }

    @Test("linear gives bit-identical results from float16 storage and from its widened copy")
    func linearFromHalf() throws {
        var rng = SplitMix64(seed: 9)
        let x = randomTensor([40, 33], using: &rng)
        let bias = randomTensor([70], using: &rng)
        let halves = randomTensor([70, 33], using: &rng).data.map { Half.fromFloat($0) }
        let stored = try Tensor(dtype: .float16, shape: [70, 33], storage: halves.withUnsafeBytes { TensorStorage(copying: $0) })
        let widened = FloatTensor(shape: [70, 33], data: halves.map(Half.toFloat))
        let fromHalf = Kernels.linear(x, weight: WeightTensor(stored), bias: bias, epilogue: .gelu)
        let fromFloats = Kernels.linear(x, weight: widened, bias: bias, epilogue: .gelu)
        #expect(fromHalf.data.map(\.bitPattern) == fromFloats.data.map(\.bitPattern))
    }
}

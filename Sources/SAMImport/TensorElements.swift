import SAMTensor

/// Element-level helpers the layout rules share. Moves work on raw element bytes, so they
/// are exact for every dtype (float16 stays float16); arithmetic goes through Double.
extension Tensor {
    /// A tensor of `dtype` (float32 or float16) holding `values` rounded once.
    static func floating(_ dtype: DType, shape: [Int], values: [Double]) -> Tensor {
        if dtype == .float16 {
            let bits = values.map { Half.fromFloat(Float($0)) }
            return Tensor(dtype: .float16, shape: shape, checkedStorage: bits.withUnsafeBytes { TensorStorage(copying: $0) })
        }
        return Tensor(shape: shape, floats: values.map { Float($0) })
    }

    /// Builds a tensor of this dtype whose element `i` is this tensor's element `source(i)`.
    func gathered(shape: [Int], count: Int, _ source: (Int) -> Int) -> Tensor {
        let size = dtype.byteSize
        let storage = TensorStorage(zeroedByteCount: count * size)
        let destination = UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!)
        let origin = self.storage.bytes.baseAddress!
        for index in 0..<count {
            destination.advanced(by: index * size).copyMemory(from: origin.advanced(by: source(index) * size), byteCount: size)
        }
        return Tensor(dtype: dtype, shape: shape, checkedStorage: storage)
    }

    /// The bytes of element `index` equal those of `other`'s element `otherIndex` (bit-exact).
    func elementBitsEqual(_ index: Int, _ otherIndex: Int) -> Bool {
        let size = dtype.byteSize
        let bytes = storage.bytes
        for offset in 0..<size where bytes[index * size + offset] != bytes[otherIndex * size + offset] { return false }
        return true
    }

    /// float64 tensors narrowed to float32; every other dtype unchanged. Returns whether it narrowed.
    func narrowedToFloat32() -> (tensor: Tensor, narrowed: Bool) {
        guard dtype == .float64 else { return (self, false) }
        return (Tensor(shape: shape, floats: floats()), true)
    }

    /// Whether this is a float tensor that can hold weights (at least two elements).
    var isWeightLike: Bool { dtype.isFloatingPoint && elementCount >= 2 }
}

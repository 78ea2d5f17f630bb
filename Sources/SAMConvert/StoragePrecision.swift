import SAMTensor

/// How weights are stored in the .samw: as they are (f32), or narrowed to half precision.
public enum StoragePrecision: String, Sendable {
    case single = "f32", half = "f16"

    /// f32 tensors narrowed to f16 (round to nearest even) for `.half`; everything else unchanged.
    public func convert(_ tensor: Tensor) -> Tensor {
        guard self == .half, tensor.dtype == .float32 else { return tensor }
        let values = tensor.floats()
        let storage = TensorStorage(zeroedByteCount: values.count * 2)
        let out = UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!)
        for (index, value) in values.enumerated() {
            out.storeBytes(of: Half.fromFloat(value), toByteOffset: index * 2, as: UInt16.self)
        }
        return Tensor(dtype: .float16, shape: tensor.shape, checkedStorage: storage)  // byte count matches by construction
    }
}

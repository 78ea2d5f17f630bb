import SAMTensor

/// How weights are stored in the .samw: as they are (f32), narrowed to half precision, or with the
/// image encoder's matrices (its linear layers' weights) quantized: int8 per output channel, or
/// 4-bit in groups of 32 (`QuantizedWeight`), the other matrices f16 and every other tensor f32
/// (`WeightQuantization`).
public enum StoragePrecision: String, Sendable, CaseIterable {
    case single = "f32", half = "f16", int8, q4

    /// The scheme the model's matrices are quantized to, nil for f32 and f16.
    public var quantization: QuantizedWeight.Scheme? {
        switch self {
        case .single, .half: nil
        case .int8: .int8
        case .q4: .int4
        }
    }

    /// f32 tensors narrowed to f16 (round to nearest even) for `.half`; everything else unchanged.
    public func convert(_ tensor: Tensor) -> Tensor { narrow(tensor).tensor }

    /// `convert`, also counting the finite values that became infinity (beyond f16's 65504, from
    /// 65520 up) and the largest magnitude among them.
    public func narrow(_ tensor: Tensor) -> (tensor: Tensor, overflowed: Int, largest: Float) {
        guard self == .half, tensor.dtype == .float32 else { return (tensor, 0, 0) }
        let bytes = tensor.storage.bytes
        let count = bytes.count / 4
        let storage = TensorStorage(zeroedByteCount: count * 2)
        let out = UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!)
        var overflowed = 0
        var largest: Float = 0
        for index in 0..<count {
            let value = bytes.loadUnaligned(fromByteOffset: index * 4, as: Float.self)
            let half = Half.fromFloat(value)
            if half & 0x7FFF == 0x7C00 && value.isFinite {
                overflowed += 1
                largest = max(largest, abs(value))
            }
            out.storeBytes(of: half, toByteOffset: index * 2, as: UInt16.self)
        }
        // Byte count matches by construction.
        return (Tensor(dtype: .float16, shape: tensor.shape, checkedStorage: storage), overflowed, largest)
    }
}

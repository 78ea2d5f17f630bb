import SAMTensor

/// An element type as a PyTorch or safetensors checkpoint stores it: one of the runtime's dtypes, or
/// bfloat16, which the runtime has no dtype for. The readers widen bfloat16 to float32, which is exact:
/// a bfloat16 is the upper half of the float32 with the same value.
public enum CheckpointElementType: Sendable, Equatable, CustomStringConvertible {
    case plain(DType)
    case bfloat16

    /// Bytes per stored element.
    public var byteSize: Int {
        switch self {
        case .plain(let dtype): dtype.byteSize
        case .bfloat16: 2
        }
    }

    /// The dtype of the tensors the readers return.
    public var dtype: DType {
        switch self {
        case .plain(let dtype): dtype
        case .bfloat16: .float32
        }
    }

    public var description: String {
        switch self {
        case .plain(let dtype): dtype.shortName
        case .bfloat16: "bf16"
        }
    }

    /// float32 storage holding `source`'s bfloat16 elements, each shifted into the upper half; nil
    /// when the memory cannot be had.
    static func widenBFloat16(_ source: UnsafeRawBufferPointer) -> TensorStorage? {
        let count = source.count / 2
        guard let storage = TensorStorage(zeroedByteCountIfAvailable: count * 4) else { return nil }
        let target = UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!)
        for index in 0..<count {
            let half = source.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self).littleEndian
            target.storeBytes(of: (UInt32(half) << 16).littleEndian, toByteOffset: index * 4, as: UInt32.self)
        }
        return storage
    }
}

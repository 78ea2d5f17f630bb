import SAMTensor

/// NaN and infinite elements of a float tensor (zero for other dtypes).
public struct NonFiniteCount: Sendable, Equatable {
    public let nan: Int
    public let infinite: Int

    public var isZero: Bool { nan == 0 && infinite == 0 }

    public init(_ tensor: Tensor) {
        // Bit tests on the exponent (all ones: NaN or infinity); loads unaligned, as borrowed bytes may be.
        let bytes = tensor.storage.bytes
        var nan = 0, infinite = 0
        func tally<Bits: FixedWidthInteger>(_: Bits.Type, exponent: Bits, mantissa: Bits) {
            let size = MemoryLayout<Bits>.size
            for index in 0..<(bytes.count / size) {
                let bits = bytes.loadUnaligned(fromByteOffset: index * size, as: Bits.self)
                guard bits & exponent == exponent else { continue }
                if bits & mantissa != 0 { nan += 1 } else { infinite += 1 }
            }
        }
        switch tensor.dtype {
        case .float32: tally(UInt32.self, exponent: 0x7F80_0000, mantissa: 0x007F_FFFF)
        case .float64: tally(UInt64.self, exponent: 0x7FF0_0000_0000_0000, mantissa: 0x000F_FFFF_FFFF_FFFF)
        case .float16: tally(UInt16.self, exponent: 0x7C00, mantissa: 0x03FF)
        default: break
        }
        self.nan = nan
        self.infinite = infinite
    }
}

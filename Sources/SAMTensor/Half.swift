/// IEEE 754 binary16 <-> binary32 by bit manipulation, so the same code runs where
/// Swift's `Float16` is unavailable (macOS on x86_64) and gives identical results everywhere.
package enum Half {
    /// Widens a half-precision bit pattern to Float exactly (every f16 value is an f32 value).
    @inline(__always)
    package static func toFloat(_ bits: UInt16) -> Float {
        let sign = UInt32(bits & 0x8000) << 16
        let exponent = UInt32(bits >> 10) & 0x1F
        let mantissa = UInt32(bits & 0x3FF)
        if exponent == 0x1F {  // Inf or NaN: keep the payload
            return Float(bitPattern: sign | 0x7F80_0000 | (mantissa << 13))
        }
        if exponent == 0 {
            if mantissa == 0 { return Float(bitPattern: sign) }
            // Subnormal half: value = mantissa * 2^-24, exact in f32.
            let magnitude = Float(mantissa) * Float(bitPattern: 0x3380_0000)  // 2^-24
            return sign == 0 ? magnitude : -magnitude
        }
        return Float(bitPattern: sign | ((exponent + 112) << 23) | (mantissa << 13))
    }

    /// Narrows a Float to half precision, rounding to nearest even; overflow gives ±Inf.
    @inline(__always)
    package static func fromFloat(_ value: Float) -> UInt16 {
        let bits = value.bitPattern
        let sign = UInt16((bits >> 16) & 0x8000)
        let exponent = Int((bits >> 23) & 0xFF)
        var mantissa = bits & 0x7F_FFFF
        if exponent == 0xFF {  // Inf or NaN (keep NaN a NaN)
            return sign | 0x7C00 | (mantissa != 0 ? 0x200 | UInt16(mantissa >> 13) : 0)
        }
        let halfExponent = exponent - 127 + 15
        if halfExponent >= 0x1F { return sign | 0x7C00 }
        if halfExponent <= 0 {
            if halfExponent < -10 { return sign }  // rounds to zero
            mantissa |= 0x80_0000  // implicit leading one
            let shift = UInt32(14 - halfExponent)
            let halfMantissa = mantissa >> shift
            let remainder = mantissa & ((1 << shift) - 1)
            let halfway = UInt32(1) << (shift - 1)
            var result = UInt16(halfMantissa)
            if remainder > halfway || (remainder == halfway && (halfMantissa & 1) == 1) { result += 1 }
            return sign | result
        }
        var result = UInt32(halfExponent) << 10 | (mantissa >> 13)
        let remainder = mantissa & 0x1FFF
        if remainder > 0x1000 || (remainder == 0x1000 && (result & 1) == 1) { result += 1 }  // may carry into the exponent: correct
        return sign | UInt16(result)
    }
}

extension Half {
    /// Widens every half in `halves` (little-endian bit patterns, any alignment) into `floats`,
    /// which must hold as many elements.
    package static func widen(_ halves: UnsafeRawBufferPointer, into floats: UnsafeMutableBufferPointer<Float>) {
        precondition(halves.count == floats.count * 2, "widen: \(halves.count) bytes for \(floats.count) floats")
        for index in 0..<floats.count {
            floats[index] = toFloat(UInt16(littleEndian: halves.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)))
        }
    }
}

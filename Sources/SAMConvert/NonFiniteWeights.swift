import SAMImport
import SAMParallel
import SAMTensor

/// A weight holding NaN or infinity: in its source file (HDF5, ONNX, `--image-pe` ...), or made by
/// narrowing to f16 (a finite value beyond f16's range, 65504, becomes infinity). A model with such a
/// weight computes NaN: conversion refuses it unless `--allow-nonfinite`.
public struct NonFiniteWeight: Sendable, Equatable, CustomStringConvertible {
    public let tensor: String
    /// The input it came from.
    public let file: String
    public let nan: Int
    public let infinite: Int
    public let elements: Int
    /// When `--dtype f16` made the infinities: the largest magnitude that did not fit.
    public let beyondHalf: Float?

    public var description: String {
        if let beyondHalf {
            return "\(tensor) (\(file)): \(infinite) of \(elements) values beyond f16's range (largest magnitude \(beyondHalf); f16 holds at most 65504): infinity in f16"
        }
        return "\(tensor) (\(file)): \(nan) NaN and \(infinite) infinite of \(elements) values"
    }
}

enum NonFiniteScan {
    /// Every float weight (and the supplied dense positional encoding) with NaN or infinity, by name;
    /// tensors are scanned on every core.
    static func weights(of imported: ImportedWeights) -> [NonFiniteWeight] {
        var named = imported.tensors.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let densePE = imported.denseImagePE { named.append(("denseImagePE", densePE)) }
        let counts = [(nan: Int, infinite: Int)](unsafeUninitializedCapacity: named.count) { buffer, initialized in
            let out = buffer.baseAddress!
            Workers.forEach(named.count) { index in out[index] = count(named[index].1.tensor) }
            initialized = named.count
        }
        return zip(named, counts).compactMap { entry, count in
            guard count.nan + count.infinite > 0 else { return nil }
            return NonFiniteWeight(tensor: entry.0, file: entry.1.origin.file, nan: count.nan, infinite: count.infinite,
                                   elements: entry.1.tensor.elementCount, beyondHalf: nil)
        }
    }

    /// NaN and infinite elements of a float tensor (0, 0 for other dtypes).
    static func count(_ tensor: Tensor) -> (nan: Int, infinite: Int) {
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
        return (nan, infinite)
    }
}

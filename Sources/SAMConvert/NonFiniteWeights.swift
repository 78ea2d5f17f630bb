import SAMImport
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
    /// Every float weight (and the supplied dense positional encoding) with NaN or infinity, by name,
    /// from the counts the import took as it read each tensor.
    static func weights(of imported: ImportedWeights) -> [NonFiniteWeight] {
        var named = imported.tensors.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let densePE = imported.denseImagePE { named.append(("denseImagePE", densePE)) }
        return named.compactMap { name, tensor in
            let count = tensor.nonFinite
            guard !count.isZero else { return nil }
            return NonFiniteWeight(tensor: name, file: tensor.origin.file, nan: count.nan, infinite: count.infinite,
                                   elements: tensor.elementCount, beyondHalf: nil)
        }
    }
}

import Foundation
import SAMModel
import SAMTensor

/// `--dtype int8|q4`: the image encoder's matrices (the weights its linear layers and its pointwise
/// convolutions multiply by: TinyViT's Conv2d_BN and EfficientViT's ConvLayer 1x1, as the model built
/// from them reports: `WeightStore.matrixKeys`) quantized, the other components' matrices (prompt
/// encoder, mask decoder, video modules) stored float16; norms, biases, embeddings, other convolution
/// filters and tables stay float32. The image encoder is nearly all of a large model (ViT-H: 2.5 GB
/// of 2.56); the decoder runs a few rows per prompt, where int8 saves no time, and rounding its
/// weights to int8 moved SAM ViT-B's masks most (seeded random weights, decoder cases on PyTorch's
/// embeddings: min mask IoU 0.962; float16: 0.998; docs/quantization.md). A matrix
/// whose rows q4 cannot group by 32 is stored int8; one with values beyond float16's range, float32.
/// For int8, a matrix an export stored as int8 codes (`ImportedTensor.exporterInt8Scales`:
/// onnxruntime's QInt8) keeps the exporter's codes and scales. Encoder matrices named by
/// `--half-matrices` are stored as the other components' are (`keptHalf`).
enum WeightQuantization {
    /// How one tensor is stored under a quantizing precision.
    enum Plan {
        /// As every tensor of the precision (f32).
        case asPrecision
        case quantized(QuantizedWeight.Scheme)
        /// float16, or float32 where a value is beyond float16's range.
        case halfUnlessOverflowing
    }

    /// `keptHalf`: an image-encoder matrix the request keeps float16 (`ConversionRequest.halfMatrices`).
    static func plan(_ name: String, isMatrix: Bool, keptHalf: Bool = false, precision: StoragePrecision) -> Plan {
        guard isMatrix, let scheme = precision.quantization else { return .asPrecision }
        return Sam.component(ofTensor: name) == Sam.imageEncoderKey && !keptHalf ? .quantized(scheme) : .halfUnlessOverflowing
    }

    /// The image-encoder matrices `patterns` (shell globs, `fnmatch` without flags: `*` also crosses
    /// dots, `[0-5]` a class) keep float16, or why not: patterns need a quantizing precision, and each
    /// must match at least one of those matrices (a typo would otherwise quantize everything silently).
    static func keptHalf(_ patterns: [String], matrices: Set<String>, precision: StoragePrecision) throws(ConversionFailure) -> Set<String> {
        guard !patterns.isEmpty else { return [] }
        guard precision.quantization != nil else {
            throw ConversionFailure("--half-matrices keeps matrices float16 that --dtype int8 or q4 would quantize; with --dtype \(precision.rawValue) nothing is quantized")
        }
        let candidates = matrices.filter { Sam.component(ofTensor: $0) == Sam.imageEncoderKey }.sorted()
        var kept: Set<String> = []
        for pattern in patterns {
            let matched = candidates.filter { fnmatch(pattern, $0, 0) == 0 }
            guard !matched.isEmpty else {
                throw ConversionFailure("--half-matrices '\(pattern)' matches none of the image encoder's \(candidates.count) quantized matrices"
                                        + (candidates.first.map { " (such as \($0))" } ?? ""))
            }
            kept.formUnion(matched)
        }
        return kept
    }

    /// One matrix quantized to `scheme` (int8 where q4 cannot group its rows), with the exporter's
    /// int8 scales when it has them.
    static func quantize(_ name: String, _ tensor: Tensor, scheme: QuantizedWeight.Scheme,
                         exporterScales: [Float]?) throws(ConversionFailure) -> QuantizedWeight {
        let chosen = (try? QuantizedWeight.layout(scheme, shape: tensor.shape)) != nil ? scheme : .int8
        let floats = tensor.floats()
        do {
            return try floats.withUnsafeBufferPointer { (values) throws(QuantizedWeight.QuantizationRefused) in
                try QuantizedWeight(quantizing: values, shape: tensor.shape, scheme: chosen,
                                    int8RowScales: chosen == .int8 ? exporterScales : nil)
            }
        } catch {
            throw ConversionFailure("\(name): cannot store as \(chosen.rawValue): \(error.description)")
        }
    }
}

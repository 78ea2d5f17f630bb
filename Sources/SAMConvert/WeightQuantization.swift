import SAMModel
import SAMTensor

/// `--dtype int8|q4`: the image encoder's matrices (the weights its linear layers multiply by, as the
/// model built from them reports: `WeightStore.matrixKeys`) quantized, the other components'
/// matrices (prompt encoder, mask decoder, video modules) stored float16; norms, biases, embeddings,
/// convolution filters and tables stay float32. The image encoder is nearly all of a large model
/// (ViT-H: 2.5 GB of 2.56); the decoder runs a few rows per prompt, where int8 saves no time, and
/// rounding its weights to int8 moved SAM ViT-B's masks most (seeded random weights, decoder cases
/// on PyTorch's embeddings: min mask IoU 0.962; float16: 0.998; docs/quantization.md). A matrix
/// whose rows q4 cannot group by 32 is stored int8; one with values beyond float16's range, float32. For int8, a matrix an export stored as int8 codes (`exporterScales`: onnxruntime's
/// QInt8) keeps the exporter's codes and scales.
enum WeightQuantization {
    static func quantize(_ tensors: [String: Tensor], matrices: Set<String>, scheme: QuantizedWeight.Scheme,
                         exporterScales: [String: [Float]] = [:])
        throws(ConversionFailure) -> (plain: [String: Tensor], quantized: [String: QuantizedWeight]) {
        var plain = tensors
        var quantized: [String: QuantizedWeight] = [:]
        for name in matrices.sorted() {
            guard let tensor = tensors[name] else { continue }
            guard Sam.component(ofTensor: name) == Sam.imageEncoderKey else {
                let (half, overflowed, _) = StoragePrecision.half.narrow(tensor)
                if overflowed == 0 { plain[name] = half }
                continue
            }
            let chosen = (try? QuantizedWeight.layout(scheme, shape: tensor.shape)) != nil ? scheme : .int8
            let floats = tensor.floats()
            do {
                quantized[name] = try floats.withUnsafeBufferPointer { (values) throws(QuantizedWeight.QuantizationRefused) in
                    try QuantizedWeight(quantizing: values, shape: tensor.shape, scheme: chosen,
                                        int8RowScales: chosen == .int8 ? exporterScales[name] : nil)
                }
            } catch {
                throw ConversionFailure("\(name): cannot store as \(chosen.rawValue): \(error.description)")
            }
            plain[name] = nil
        }
        return (plain, quantized)
    }
}

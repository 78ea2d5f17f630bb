import SAMTensor

/// `--dtype int8|q4`: the model's matrices (the weights its linear layers multiply by, as the model
/// built from them reports: `WeightStore.matrixKeys`) quantized; norms, biases, embeddings,
/// convolution filters and tables stay float32. A matrix whose rows q4 cannot group by 32 is
/// stored int8.
enum WeightQuantization {
    /// One matrix quantized to `scheme` (int8 where q4 cannot group its rows).
    static func quantize(_ name: String, _ tensor: Tensor, scheme: QuantizedWeight.Scheme) throws(ConversionFailure) -> QuantizedWeight {
        let chosen = (try? QuantizedWeight.layout(scheme, shape: tensor.shape)) != nil ? scheme : .int8
        let floats = tensor.floats()
        do {
            return try floats.withUnsafeBufferPointer { (values) throws(QuantizedWeight.QuantizationRefused) in
                try QuantizedWeight(quantizing: values, shape: tensor.shape, scheme: chosen)
            }
        } catch {
            throw ConversionFailure("\(name): cannot store as \(chosen.rawValue): \(error.description)")
        }
    }
}

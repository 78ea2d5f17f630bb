import SAMTensor

/// TinyViT's eval-mode cache `X.ab` = `attention_biases[:, attention_bias_idxs]` [H, N, N]: what
/// exporters store instead of the parameter (dynamo keeps its name, TorchScript bakes it into a
/// Constant). Turned back into `X.attention_biases` [H, offsets] by `LayoutRules.attentionBiasesFromTable`.
enum AttentionBiasCaches {
    /// Replaces every canonical `*.ab` by the `*.attention_biases` it was gathered from; when the
    /// parameter is there too, both must agree bit for bit.
    static func recover(in result: inout ImportedWeights, file: String) throws(ImportError) {
        for name in result.tensors.keys.sorted() where name.hasSuffix(".ab") {
            let cache = result.tensors[name]!
            let target = String(name.dropLast(".ab".count)) + ".attention_biases"
            let table = try cache.read()
            let recovered: Tensor
            do { recovered = try LayoutRules.attentionBiasesFromTable(table) } catch {
                throw ImportError(.invalidLayout, file: file, tensor: cache.origin.sources.first ?? name, error.message)
            }
            result.tensors[name] = nil
            try result.insert(target, recovered, origin: TensorOrigin(file: file, sources: cache.origin.sources,
                                                                      rule: .attentionBiasTableInverted, derivation: .stored))
        }
    }
}

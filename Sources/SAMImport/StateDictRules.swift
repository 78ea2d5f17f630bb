import SAMTensor

/// Rules every import applies once a file's tensors carry canonical names: what a state dict
/// holds that the runtime's canonical form does not (unfused BatchNorm, step counters, the
/// TinyViT classifier). Applied to HDF5 state dicts and to ONNX exports that kept BatchNorm.
enum StateDictRules {
    /// `X.c` + `X.bn` is TinyViT's Conv2d_BN, the only BatchNorm this folds (EfficientViT's are folded at load).
    /// ref: mobile_sam/modeling/tiny_vit_sam.py Conv2d_BN (conv without bias, then BatchNorm2d).
    static let batchNormSuffixes = ["weight", "bias", "running_mean", "running_var"]

    /// Drops counters, index tables and the classifier head, then folds every BatchNorm.
    static func apply(to result: inout ImportedWeights, file: String, eps: Double) throws(ImportError) {
        for name in result.tensors.keys.sorted() {
            if let rule = dropRule(for: name) {
                result.tensors[name] = nil
                result.dropped.append(DroppedTensor(file: file, name: name, rule: rule))
            }
        }
        try foldBatchNorms(in: &result, file: file, eps: eps)
    }

    /// Canonical names no runtime module takes, and why.
    static func dropRule(for name: String) -> ImportRule? {
        if name.hasSuffix(".num_batches_tracked") { return .dropBatchNormCounter }
        if name.hasSuffix(".attention_bias_idxs") { return .dropDerivedIndexTable }
        // ref: tiny_vit_sam.py TinyViT.__init__ norm_head/head; Sam uses forward_features + neck only.
        if name.hasPrefix("image_encoder.head.") || name.hasPrefix("image_encoder.norm_head.") { return .dropClassifierHead }
        return nil
    }

    /// The layers `M` whose BatchNorm is left for the runtime to fold: EfficientViT's ConvLayer, `M.conv` +
    /// `M.norm` (its eps is the configuration's, 1e-6 there, not torch's 1e-5 the fold here would use).
    /// ref: efficientsam/models/nn/ops.py ConvLayer.__init__ (conv, norm)
    static func runtimeFoldedLayers(in names: some Collection<String>) -> [String] {
        let present = Set(names)
        return present.filter { $0.hasSuffix(".norm.running_var") }.map { String($0.dropLast(".norm.running_var".count)) }
            .filter { present.contains($0 + ".conv.weight") }.sorted()
    }

    static func foldBatchNorms(in result: inout ImportedWeights, file: String, eps: Double) throws(ImportError) {
        let runtimeFolded = Set(runtimeFoldedLayers(in: result.tensors.keys))
        let statistics = result.tensors.keys.filter { $0.hasSuffix(".running_var") }.sorted()
        for key in statistics {
            let bn = String(key.dropLast(".running_var".count))
            if bn.hasSuffix(".norm"), runtimeFolded.contains(String(bn.dropLast(".norm".count))) { continue }
            guard bn.hasSuffix(".bn") else {
                throw ImportError(.incompleteBatchNorm, file: file, tensor: key,
                                  "BatchNorm statistics outside a Conv2d_BN (`X.bn` after `X.c`): no rule folds them")
            }
            let module = String(bn.dropLast(".bn".count))
            let names = batchNormSuffixes.map { "\(bn).\($0)" }
            let weightName = "\(module).c.weight", biasName = "\(module).c.bias"
            guard let weight = result.tensors[weightName] else {
                throw ImportError(.incompleteBatchNorm, file: file, tensor: weightName, "BatchNorm \(bn) has no convolution weight to fold into")
            }
            var parts: [Tensor] = []
            for name in names {
                guard let part = result.tensors[name] else {
                    throw ImportError(.incompleteBatchNorm, file: file, tensor: name, "BatchNorm \(bn) is incomplete")
                }
                parts.append(try part.read())
            }
            let convBias = result.tensors[biasName]
            let (weightTensor, biasTensor) = (try weight.read(), try convBias?.read())
            let folded: (weight: Tensor, bias: Tensor)
            do {
                folded = try LayoutRules.foldBatchNorm(weight: weightTensor, convBias: biasTensor, gamma: parts[0], beta: parts[1],
                                                       mean: parts[2], variance: parts[3], eps: eps)
            } catch {
                throw ImportError(.invalidLayout, file: file, tensor: bn, error.message)
            }
            let sources = ([weight] + (convBias.map { [$0] } ?? []) + names.compactMap { result.tensors[$0] }).flatMap(\.origin.sources)
            for name in names { result.tensors[name] = nil }
            let origin = TensorOrigin(file: file, sources: sources, rule: .foldBatchNorm, derivation: .foldedByImporter)
            result.tensors[weightName] = ImportedTensor(tensor: folded.weight, origin: origin)
            result.tensors[biasName] = ImportedTensor(tensor: folded.bias, origin: origin)
        }
    }

    /// A Conv2d_BN's conv has no bias of its own, so an export that gives `X.c.bias` (and no
    /// `X.bn.*`) folded the BatchNorm itself, in float32: its pair may differ from ours by rounding.
    static func markExporterFoldedConvBN(in result: inout ImportedWeights) {
        for name in result.tensors.keys where name.hasSuffix(".c.bias") {
            let module = String(name.dropLast(".c.bias".count))
            guard result.tensors["\(module).bn.running_var"] == nil else { continue }
            for key in ["\(module).c.weight", name] {
                guard var entry = result.tensors[key], entry.origin.derivation == .stored else { continue }
                entry.origin = TensorOrigin(file: entry.origin.file, sources: entry.origin.sources, rule: entry.origin.rule,
                                            derivation: .computedByExporter)
                result.tensors[key] = entry
            }
        }
    }
}

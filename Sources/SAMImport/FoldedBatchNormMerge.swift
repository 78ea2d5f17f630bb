import SAMTensor

/// One convolution given two ways by two inputs: a state dict keeps its BatchNorm for the runtime to
/// fold (`M.conv.weight` + `M.norm.{weight,bias,running_mean,running_var}`, EfficientViT's ConvLayer,
/// see `StateDictRules.runtimeFoldedLayers`) and an export folded it into the conv (`M.conv.weight` +
/// `M.conv.bias`, no statistics: TorchScript's BatchNorm fusion). The two are the same layer when the
/// state dict's, folded here in double precision with the runtime's eps, agree with the export's
/// within the merge tolerance; the state dict's tensors are then kept (the runtime folds them at load,
/// in double precision) and the export's fold is recorded as an agreement. Otherwise the merge stops
/// naming both files and the tensor, as for any disagreement.
enum FoldedBatchNormMerge {
    static func reconcile(_ part: inout ImportedWeights, with merged: inout ImportedWeights, tolerance: AgreementTolerance,
                          eps: Double) throws(ImportError) {
        var agreements: [Agreement] = []
        for layer in StateDictRules.runtimeFoldedLayers(in: merged.tensors.keys) where isFoldedExport(layer, part) {
            try reconcile(layer, unfolded: merged, folded: &part, tolerance: tolerance, eps: eps, agreements: &agreements)
            merged.tensors["\(layer).conv.weight"]?.alsoIn.append(part.files.first ?? "?")
        }
        for layer in StateDictRules.runtimeFoldedLayers(in: part.tensors.keys) where isFoldedExport(layer, merged) {
            try reconcile(layer, unfolded: part, folded: &merged, tolerance: tolerance, eps: eps, agreements: &agreements)
            part.tensors["\(layer).conv.weight"]?.alsoIn.append(contentsOf: merged.files)
        }
        merged.agreements += agreements
    }

    /// `weights` give `layer`'s conv with a bias and without BatchNorm statistics.
    static func isFoldedExport(_ layer: String, _ weights: ImportedWeights) -> Bool {
        weights.tensors["\(layer).conv.weight"] != nil && weights.tensors["\(layer).conv.bias"] != nil
            && weights.tensors["\(layer).norm.running_var"] == nil
    }

    /// Checks the folded pair against the unfolded layer and removes it from `folded`.
    static func reconcile(_ layer: String, unfolded: ImportedWeights, folded: inout ImportedWeights, tolerance: AgreementTolerance,
                          eps: Double, agreements: inout [Agreement]) throws(ImportError) {
        let (weightName, biasName) = ("\(layer).conv.weight", "\(layer).conv.bias")
        let norm = StateDictRules.batchNormSuffixes.map { "\(layer).norm.\($0)" }
        let source = unfolded.tensors[weightName]!, export = folded.tensors[weightName]!, exportBias = folded.tensors[biasName]!
        var parts: [Tensor] = []
        for name in norm {
            guard let part = unfolded.tensors[name] else {
                throw ImportError(.incompleteBatchNorm, file: source.origin.file, tensor: name, "BatchNorm \(layer).norm is incomplete")
            }
            parts.append(try part.read())
        }
        let (weight, convBias) = (try source.read(), try unfolded.tensors[biasName]?.read())
        let refolded: (weight: Tensor, bias: Tensor)
        do {
            refolded = try LayoutRules.foldBatchNorm(weight: weight, convBias: convBias, gamma: parts[0], beta: parts[1],
                                                     mean: parts[2], variance: parts[3], eps: eps)
        } catch {
            throw ImportError(.invalidLayout, file: source.origin.file, tensor: layer, error.message)
        }
        let refoldedOrigin = TensorOrigin(file: source.origin.file, sources: [weightName] + norm, rule: .foldBatchNorm,
                                          derivation: .foldedByImporter)
        for (name, value, exported) in [(weightName, refolded.weight, export), (biasName, refolded.bias, exportBias)] {
            let mine = ImportedTensor(tensor: value, origin: refoldedOrigin)
            do {
                agreements.append(try ImportMerge.compare(name, mine, exported, tolerance: tolerance))
            } catch {
                throw ImportError(.conflictingTensors, file: source.origin.file, tensor: name, otherFile: exported.origin.file,
                                  "BatchNorm \(layer).norm folded at eps \(eps) does not give the other input's folded conv: \(error.message)")
            }
            folded.tensors[name] = nil
        }
    }
}

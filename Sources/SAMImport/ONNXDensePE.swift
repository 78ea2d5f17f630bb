import SAMFormats
import SAMTensor

/// Constant folding can bake `prompt_encoder.get_dense_pe()` into a decoder export. It is a
/// fact about the model (the runtime can recompute it from the Gaussian matrix), returned as
/// `ImportedWeights.denseImagePE`, not as a weight.
extension ONNXWeightMapper {
    /// Recognises the folded dense PE by where it flows: through data movement only
    /// (repeat_interleave, flatten, permute) into the mask decoder's transformer, as
    /// [1,C,g,g] (`get_dense_pe()`) or [1,g*g,C] (after TwoWayTransformer's flatten/permute).
    mutating func importDensePE(_ stored: ONNXInitializer) throws(ImportError) -> Bool {
        let shape = stored.shape
        let isMap = shape.count == 4 && shape[0] == 1 && shape[2] == shape[3] && shape[2] >= 2
        let isTokens = shape.count == 3 && shape[0] == 1 && LayoutRules.exactSquareRoot(shape[1]).map { $0 >= 2 } == true
        guard isMap || isTokens else { return false }
        let inTransformer = { (use: ONNXUse) in
            use.canonicalScope.map { $0.path == "mask_decoder.transformer" || $0.path.hasPrefix("mask_decoder.transformer.") } ?? false
        }
        // Where the exporter left the transformer's own adds unscoped (`q + query_pe` in a flat
        // graph), the projections those sums feed still are.
        let reach = index.dataMovementReach(from: stored.name)
        let feedsTransformer = reach.contains(where: inTransformer)
            || reach.contains { use in
                use.node.opType == "Add" && use.node.outputs.contains { index.dataMovementReach(from: $0, depth: 3).contains(where: inTransformer) }
            }
        guard feedsTransformer else { return false }
        let tensor = try read(stored.name)
        let dense: Tensor
        if isMap {
            dense = tensor
        } else {
            do { dense = try LayoutRules.densePEFromTokens(tensor) } catch {
                throw ImportError(.invalidLayout, file: file, tensor: stored.name, error.message)
            }
        }
        let rule: ImportRule = isMap ? .densePEConstant : .densePETokensUnflattened
        let imported = ImportedTensor(tensor: dense, origin: origin(stored, rule, .computedByExporter))
        if let existing = result.denseImagePE, !(try existing.read()).isBitwiseEqual(to: dense) {
            throw ImportError(.conflictingTensors, file: file, tensor: stored.name,
                              "a second constant-folded dense PE differs from \(existing.origin)")
        }
        result.denseImagePE = imported
        try learn(embeddingDim: dense.shape[1], imageEmbeddingSize: dense.shape[2], from: stored.name)
        return true
    }
}

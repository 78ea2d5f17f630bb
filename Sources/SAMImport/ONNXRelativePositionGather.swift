import SAMFormats
import SAMTensor

/// A ViT block attending globally, exported by dynamo at full size, keeps `get_rel_pos`'s table
/// [2s-1, head_dim] (under a generated name, `val_1051`) and gathers it at run time:
/// `GatherND(table, indices)` with constant indices [s, s, 1] = q - k + s - 1, read by the rel_h or
/// rel_w Einsum. (Windowed blocks' smaller gathers are folded into [s, s, head_dim] constants, see
/// `LayoutRules.relativePositionsFromGathered`.) The table is taken as stored once the indices are
/// checked to be that offset table and the Einsum says which axis it serves.
/// ref: segment_anything/modeling/image_encoder.py get_rel_pos, add_decomposed_rel_pos
extension ONNXWeightMapper {
    mutating func importRelativePositionsGatheredAtRunTime(_ stored: ONNXInitializer, uses: [ONNXUse],
                                                           derivation: Derivation) throws(ImportError) -> Bool {
        let shape = stored.shape
        guard shape.count == 2, shape[0] % 2 == 1, shape[1] >= 1, !uses.isEmpty else { return false }
        let side = (shape[0] + 1) / 2
        var names: Set<String> = []
        var evidence: ScopeEvidence?
        for use in uses {
            guard use.node.opType == "GatherND", use.input == 0, use.node.inputs.count == 2, use.node.outputs.count == 1,
                  let scope = use.canonicalScope?.path, CanonicalNames.leaf(scope) == "attn",
                  isRelativeOffsetTable(use.node.inputs[1], side: side) else { return false }
            if case .int(let batchDims)? = use.node.attribute("batch_dims"), batchDims != 0 { return false }
            let readers = index.uses(of: use.node.outputs[0])
            guard readers.count == 1, readers[0].node.opType == "Einsum", readers[0].input == 1,
                  let axis = ONNXConsumerRules.relativePositionAxis(readers[0].node) else { return false }
            names.insert(scope + (axis == 1 ? ".rel_pos_h" : ".rel_pos_w"))
            evidence = evidence ?? use.scopeEvidence
        }
        guard names.count == 1, let name = names.first else { return false }
        try apply(.tensor(name: name, layout: .asStored, rule: .relativePositionsGatheredAtRunTime), to: stored,
                  namedBy: evidence, derivation: derivation)
        return true
    }

    /// Whether `value` is a stored integer [s, s, 1] whose (i, j) entry is i - j + s - 1.
    private func isRelativeOffsetTable(_ value: String, side: Int) -> Bool {
        guard let table = try? model.tensor(named: value), !table.dtype.isFloatingPoint,
              table.shape == [side, side, 1] else { return false }
        for i in 0..<side {
            for j in 0..<side where table.value(at: i * side + j) != Double(i - j + side - 1) { return false }
        }
        return true
    }
}

import SAMFormats

/// Attention modules: softmax(q @ k^T (scaled, plus any bias)) @ v, then an output projection,
/// each product's operands walked back to their projections. Separate q/k/v projections are
/// SAM's decoder attention (self when q and k read one value, else cross); one projection for
/// all three is an encoder's fused `qkv`, with whatever the attention adds to its logits (a
/// TinyViT bias table, a ViT's decomposed relative positions).
/// ref: segment_anything/modeling/transformer.py Attention.forward; image_encoder.py Attention.forward,
/// add_decomposed_rel_pos; mobile_sam/modeling/tiny_vit_sam.py Attention.forward.
extension ONNXGraphModules {
    mutating func findAttention() {
        for softmax in flow.nodes.indices where flow.nodes[softmax].opType == "Softmax" {
            guard let (scores, logitNodes) = productBefore(softmax), let values = productAfter(softmax),
                  let q = flow.linearProducing(flow.nodes[scores].inputs[0]),
                  let k = flow.linearProducing(flow.nodes[scores].inputs[1]),
                  let v = flow.linearProducing(flow.nodes[values].inputs[1]),
                  let outputValue = flow.nodes[values].outputs.first, let out = flow.linearReading(outputValue),
                  !Set([q, k, v]).contains(out) else { continue }
            if q == k && k == v {
                add(.fusedAttention, .none, linearNodes(q, child: "qkv") + linearNodes(out, child: "proj")
                    + logitNodes.map { ($0, "") } + relativePositionNodes(reading: q))
            } else if Set([q, k, v]).count == 3 {
                let isSelf = flow.nodes[q].inputs[0] == flow.nodes[k].inputs[0]
                add(isSelf ? .selfAttention : .crossAttention, .none,
                    linearNodes(q, child: "q_proj") + linearNodes(k, child: "k_proj") + linearNodes(v, child: "v_proj")
                        + linearNodes(out, child: "out_proj"))
            }
        }
    }

    /// The `q @ k^T` product a softmax normalises, searched back through its scale, reshapes and
    /// the terms added to the logits; with the nodes on the way that add a stored tensor (a bias table).
    private func productBefore(_ softmax: Int) -> (Int, [Int])? {
        var pending = Array(flow.nodes[softmax].inputs.prefix(1)), seen: Set<String> = [], addsStored: [Int] = []
        while !pending.isEmpty, seen.count < 16 {
            let value = pending.removeFirst()
            guard seen.insert(value).inserted, let index = flow.producers[value] else { continue }
            if flow.isActivationProduct(index) { return (index, addsStored) }
            let node = flow.nodes[index]
            guard ["Mul", "Div", "Cast", "Add", "Reshape"].contains(node.opType) else { continue }
            if node.opType == "Add", node.inputs.contains(where: { flow.stored[$0]?.count == 3 }) { addsStored.append(index) }
            pending += node.opType == "Reshape" ? Array(node.inputs.prefix(1)) : node.inputs.filter { !flow.isStored($0) }
        }
        return nil
    }

    /// The `attn @ v` product that reads the softmax as its left operand.
    private func productAfter(_ softmax: Int) -> Int? {
        guard var current = flow.nodes[softmax].outputs.first else { return nil }
        for _ in 0..<3 {
            let uses = flow.readers[current] ?? []
            if let product = uses.first(where: { flow.isActivationProduct($0.node) && $0.input == 0 }) { return product.node }
            guard let cast = uses.first(where: { flow.nodes[$0.node].opType == "Cast" }),
                  let output = flow.nodes[cast.node].outputs.first else { return nil }
            current = output
        }
        return nil
    }

    /// A ViT attention's relative-position einsums (`rel_h`, `rel_w`: q against a stored table, or
    /// against a table gathered at run time) whose q comes from the `qkv` projection `linear`,
    /// with the gathers that read the stored tables.
    private func relativePositionNodes(reading linear: Int) -> [(node: Int, child: String)] {
        var found: [(node: Int, child: String)] = []
        for index in flow.nodes.indices where flow.nodes[index].opType == "Einsum" && flow.nodes[index].inputs.count == 2 {
            let node = flow.nodes[index]
            guard flow.linearProducing(node.inputs[0]) == linear else { continue }
            if flow.stored[node.inputs[1]]?.count == 3 {
                found.append((index, ""))
            } else if let gather = flow.producers[node.inputs[1]], ["Gather", "GatherND"].contains(flow.nodes[gather].opType),
                      let table = flow.nodes[gather].inputs.first, flow.stored[table]?.count == 2 {
                // GatherND by a constant offset table is checked by its own rule, under the attention;
                // a Gather by indices computed at run time takes the table the einsum's axis names.
                let axis = ONNXConsumerRules.relativePositionAxis(node)
                let child = flow.nodes[gather].opType == "GatherND" ? "" : axis == 1 ? "rel_pos_h" : axis == 2 ? "rel_pos_w" : nil
                if let child { found += [(index, ""), (gather, child)] }
            }
        }
        return found
    }
}

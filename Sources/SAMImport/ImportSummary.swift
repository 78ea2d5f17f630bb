import SAMTensor

extension ImportedWeights {
    /// A table for people: per input, how many tensors each rule produced, dropped or ignored;
    /// the facts; how overlapping inputs agreed.
    public var summary: String {
        var lines: [String] = []
        for file in files {
            let produced = tensors.values.filter { $0.origin.file == file }
            let agreeing = tensors.values.filter { $0.alsoIn.contains(file) }.count
            let dense = denseImagePE.map { $0.origin.file == file || $0.alsoIn.contains(file) } == true
            lines.append("\(file): \(produced.count) canonical tensors" + (agreeing > 0 ? " (+ \(agreeing) agreeing with earlier inputs)" : "")
                         + (dense ? " + dense image PE" : ""))
            var byRule: [ImportRule: Int] = [:]
            for tensor in produced { byRule[tensor.origin.rule, default: 0] += 1 }
            if let dense = denseImagePE, dense.origin.file == file { byRule[dense.origin.rule, default: 0] += 1 }
            for (rule, count) in Self.largestFirst(byRule) { lines.append("    \(count)  \(rule)") }
            var droppedByRule: [ImportRule: Int] = [:]
            for entry in (dropped + ignored) where entry.file == file { droppedByRule[entry.rule, default: 0] += 1 }
            for (rule, count) in Self.largestFirst(droppedByRule) { lines.append("    \(count)  left out: \(rule)") }
            for entry in unmapped where entry.file == file { lines.append("    UNMAPPED \(entry)") }
        }
        let perComponent = SAMComponent.allCases.map { component in
            "\(component.rawValue) \(tensors.keys.filter { SAMComponent.of($0) == component }.count)"
        }
        lines.append("canonical tensors: \(tensors.count) (" + perComponent.joined(separator: ", ") + ")")
        if let dense = denseImagePE { lines.append("dense image PE: \(Shape.text(dense.shape)) from \(dense.origin.file)") }
        if let size = facts.imageEmbeddingSize { lines.append("image embedding: \(facts.embeddingDim.map(String.init) ?? "?") x \(size) x \(size)") }
        for (file, opset) in facts.opsets.sorted(by: { $0.key < $1.key }) { lines.append("opset \(opset): \(file)") }
        if let normalization = facts.inGraphNormalization { lines.append("in-graph preprocessing: \(normalization)") }
        if !agreements.isEmpty {
            let exact = agreements.filter(\.bitExact).count
            lines.append("overlapping tensors: \(agreements.count), \(exact) bit-exact")
            if let worst = worstAgreement, !worst.bitExact { lines.append("largest difference: \(worst)") }
        }
        return lines.joined(separator: "\n")
    }

    /// Rules by how many tensors they decided, most first, then by description: a stable order.
    private static func largestFirst(_ counts: [ImportRule: Int]) -> [(rule: ImportRule, count: Int)] {
        counts.map { (rule: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.rule.description < $1.rule.description }
    }
}

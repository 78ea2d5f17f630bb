import SAMTensor

/// Several inputs into one `ImportedWeights`. A tensor two inputs both supply must agree:
/// bit for bit when both are stored bytes, within `ImportOptions.computedTolerance` when
/// either side was computed (a BatchNorm folded by a different code path, constant folding).
/// Every overlap is recorded in `agreements` with its largest difference.
public enum ImportMerge {
    /// `batchNormEps`: the eps of the BatchNorms a state dict keeps for the runtime to fold, for
    /// checking them against an export that folded them (`FoldedBatchNormMerge`).
    public static func merge(_ parts: [ImportedWeights], tolerance: AgreementTolerance,
                             batchNormEps: Double = ImportOptions().runtimeBatchNormEps) throws(ImportError) -> ImportedWeights {
        var merged = ImportedWeights()
        for part in parts {
            try merge(part, into: &merged, tolerance: tolerance, batchNormEps: batchNormEps)
        }
        return merged
    }

    static func merge(_ part: ImportedWeights, into merged: inout ImportedWeights, tolerance: AgreementTolerance,
                      batchNormEps: Double) throws(ImportError) {
        var part = part
        try FoldedBatchNormMerge.reconcile(&part, with: &merged, tolerance: tolerance, eps: batchNormEps)
        for name in part.tensors.keys.sorted() {
            let incoming = part.tensors[name]!
            guard let existing = merged.tensors[name] else {
                merged.tensors[name] = incoming
                continue
            }
            merged.agreements.append(try compare(name, existing, incoming, tolerance: tolerance))
            merged.tensors[name]?.alsoIn.append(incoming.origin.file)
        }
        if let incoming = part.denseImagePE {
            if let existing = merged.denseImagePE {
                merged.agreements.append(try compare("denseImagePE", existing, incoming, tolerance: tolerance))
                merged.denseImagePE?.alsoIn.append(incoming.origin.file)
            } else {
                merged.denseImagePE = incoming
            }
        }
        try mergeFacts(part.facts, into: &merged.facts, file: part.files.first ?? "?", otherFiles: merged.files)
        merged.files += part.files
        merged.referencedFiles += part.referencedFiles.filter { !merged.referencedFiles.contains($0) }
        merged.dropped += part.dropped
        merged.ignored += part.ignored
        merged.unmapped += part.unmapped
        merged.agreements += part.agreements
    }

    /// Compares two sources of one tensor; throws when they disagree beyond what their derivations allow.
    static func compare(_ name: String, _ existing: ImportedTensor, _ incoming: ImportedTensor,
                        tolerance: AgreementTolerance) throws(ImportError) -> Agreement {
        let (a, b) = (try existing.read(), try incoming.read())
        let files = [existing.origin.file, incoming.origin.file]
        let derivations = [existing.origin.derivation, incoming.origin.derivation]
        func conflict(_ message: String) -> ImportError {
            ImportError(.conflictingTensors, file: files[0], tensor: name, otherFile: files[1],
                        "\(message) (\(existing.origin) vs \(incoming.origin))")
        }
        guard a.shape == b.shape else { throw conflict("shapes differ: \(Shape.text(a.shape)) vs \(Shape.text(b.shape))") }
        guard a.dtype == b.dtype else { throw conflict("dtypes differ: \(a.dtype) vs \(b.dtype)") }
        if a.isBitwiseEqual(to: b) {
            return Agreement(tensor: name, files: files, bitExact: true, maxAbsDifference: 0, maxRelDifference: 0, derivations: derivations)
        }
        var maxAbs = 0.0, maxRel = 0.0, worst = 0, withinTolerance = true
        for index in 0..<a.elementCount {
            let (x, y) = (a.value(at: index), b.value(at: index))
            let difference = abs(x - y)
            if !(difference <= maxAbs) || difference.isNaN { maxAbs = difference; worst = index }
            if difference > 0 { maxRel = max(maxRel, difference / max(abs(x), abs(y))) }
            if !tolerance.accepts(x, y) { withinTolerance = false }
        }
        let computed = derivations.contains { $0 != .stored }
        let where_ = "element \(worst): \(a.value(at: worst)) vs \(b.value(at: worst))"
        guard computed else {
            throw conflict("values differ (max abs \(maxAbs) at \(where_)); both are stored bytes, so they must be bit-exact")
        }
        guard withinTolerance else {
            throw conflict("values differ beyond \(tolerance) (max abs \(maxAbs), max rel \(maxRel), at \(where_))")
        }
        return Agreement(tensor: name, files: files, bitExact: false, maxAbsDifference: maxAbs, maxRelDifference: maxRel, derivations: derivations)
    }

    static func mergeFacts(_ facts: ImportFacts, into merged: inout ImportFacts, file: String, otherFiles: [String]) throws(ImportError) {
        let others = otherFiles.joined(separator: ", ")
        if let size = facts.imageEmbeddingSize {
            if let known = merged.imageEmbeddingSize, known != size {
                throw ImportError(.conflictingFacts, file: file, otherFile: others, "image-embedding size \(size), the other inputs \(known)")
            }
            merged.imageEmbeddingSize = size
        }
        if let dim = facts.embeddingDim {
            if let known = merged.embeddingDim, known != dim {
                throw ImportError(.conflictingFacts, file: file, otherFile: others, "image-embedding width \(dim), the other inputs \(known)")
            }
            merged.embeddingDim = dim
        }
        if let size = facts.imageSize {
            if let known = merged.imageSize, known != size {
                throw ImportError(.conflictingFacts, file: file, otherFile: others, "image input size \(size), the other inputs \(known)")
            }
            merged.imageSize = size
        }
        for (stage, stride) in facts.mergeStrides {
            if let known = merged.mergeStrides[stage], known != stride {
                throw ImportError(.conflictingFacts, file: file, otherFile: others,
                                  "layers.\(stage).downsample stride \(stride), the other inputs \(known)")
            }
            merged.mergeStrides[stage] = stride
        }
        if let normalization = facts.inGraphNormalization {
            if let known = merged.inGraphNormalization,
               known.pixelMean != normalization.pixelMean || known.pixelStd != normalization.pixelStd {
                throw ImportError(.conflictingFacts, file: file, tensor: normalization.meanTensor ?? normalization.stdTensor,
                                  otherFile: known.file, "the graphs normalise pixels differently: \(normalization) vs \(known)")
            }
            merged.inGraphNormalization = merged.inGraphNormalization ?? normalization
        }
        merged.opsets.merge(facts.opsets) { first, _ in first }
        merged.dynamicPointInputs.merge(facts.dynamicPointInputs) { first, _ in first }
        merged.storedPrecisions.merge(facts.storedPrecisions) { first, second in first.union(second) }
    }
}

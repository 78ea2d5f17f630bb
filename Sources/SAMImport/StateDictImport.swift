import SAMFormats
import SAMTensor

/// State dicts: HDF5 (`mobile_sam.h5`: one dataset per key, flat dotted names or nested groups, the
/// reader gives dotted keys either way), PyTorch checkpoints (`.pth`/`.pt`, read without Python) and
/// safetensors. All three go through the same mapping: keys are canonical already, possibly under a
/// wrapper prefix (`model.`, `module.`); BatchNorm is unfused and folded here.
public enum StateDictImport {
    /// Lists the file's datasets first and reads only those whose keys map to weights.
    public static func importHDF5(_ path: String, options: ImportOptions = ImportOptions()) throws(ImportError) -> ImportedWeights {
        let file: HDF5File
        do { file = try HDF5File(path: path) } catch { throw ImportError(error) }
        return try importTensors(StoredTensors(file), file: path, options: options)
    }

    /// A `torch.save` checkpoint: its state dict, or the one under "model"/"state_dict" (see `PyTorchCheckpoint`).
    /// Its tensors are listed from the pickle and read one by one as their keys map: a storage no
    /// mapped key views is never inflated.
    public static func importPyTorch(_ path: String, options: ImportOptions = ImportOptions()) throws(ImportError) -> ImportedWeights {
        let checkpoint: PyTorchCheckpoint
        do { checkpoint = try PyTorchCheckpoint(path: path) } catch { throw ImportError(error) }
        return try importTensors(StoredTensors(checkpoint), file: path, options: options)
    }

    public static func importSafetensors(_ path: String, options: ImportOptions = ImportOptions()) throws(ImportError) -> ImportedWeights {
        let file: SafetensorsFile
        do { file = try SafetensorsFile(path: path) } catch { throw ImportError(error) }
        return try importTensors(StoredTensors(file), file: path, options: options)
    }

    /// The one place where a state dict's stored names become canonical: transformers' SamModel,
    /// Sam2Model and Sam2VideoModel names renamed, wrapper prefixes stripped, BatchNorm folded, attention-bias caches
    /// recovered, weight-like tensors no rule maps reported. A stored tensor is read only once its key has mapped.
    static func importTensors(_ stored: StoredTensors, file path: String, options: ImportOptions) throws(ImportError) -> ImportedWeights {
        var result = ImportedWeights()
        result.files = [path]
        var unmapped: [UnmappedTensor] = []
        let huggingFace = HuggingFaceLayout(keys: stored.entries.keys)
        let huggingFaceNames = huggingFace?.canonicalNames(for: stored.entries.keys)
        for key in stored.keys {
            let entry = stored.entries[key]!
            guard let (name, rule) = canonicalName(of: key, huggingFace: huggingFace, names: huggingFaceNames) else {
                if entry.isWeightLike {
                    unmapped.append(UnmappedTensor(file: path, name: key, dtype: entry.dtype.shortName, shape: entry.shape,
                                                   context: huggingFace?.unmappedContext
                                                       ?? "no segment names a SAM component or one of its modules"))
                }
                continue
            }
            let (value, narrowed) = try read(key, from: stored).narrowedToFloat32()
            let remake: ImportedTensor.Remake = { () throws(ImportError) -> Tensor in try read(key, from: stored).narrowedToFloat32().tensor }
            let origin = TensorOrigin(file: path, sources: [key], rule: narrowed ? .narrowFloat64 : rule, derivation: .stored)
            if name.contains(HuggingFaceSam2Names.rowToken) {
                try insertRows(of: value, as: name, key: key, origin: origin, into: &result)
            } else {
                try result.insert(name, value, origin: origin, remake: remake)
            }
        }
        try StateDictRules.apply(to: &result, file: path, eps: options.batchNormEps)
        try AttentionBiasCaches.recover(in: &result, file: path)
        try Unmapped.report(unmapped, file: path, into: &result, options: options)
        return result
    }

    static func read(_ key: String, from stored: StoredTensors) throws(ImportError) -> Tensor {
        do { return try stored.read(key) } catch { throw ImportError(error) }
    }

    /// A stored [rows, C] table whose rows are upstream's separate [1, C] tensors: row r is
    /// inserted under `pattern` with its row token replaced by r.
    static func insertRows(of table: Tensor, as pattern: String, key: String, origin: TensorOrigin,
                           into result: inout ImportedWeights) throws(ImportError) {
        guard table.shape.count == 2, table.shape[0] > 0 else {
            throw ImportError(.invalidLayout, file: origin.file, tensor: key,
                              "expected a [rows, channels] table (row N is "
                                + "\(pattern.replacingOccurrences(of: HuggingFaceSam2Names.rowToken, with: "N"))), found shape \(table.shape)")
        }
        guard table.dtype.isFloatingPoint else {
            throw ImportError(.wrongElementType, file: origin.file, tensor: key,
                              "expected floating-point rows, found \(table.dtype.shortName)")
        }
        let (rows, channels) = (table.shape[0], table.shape[1])
        let values = table.floats()
        for row in 0..<rows {
            let name = pattern.replacingOccurrences(of: HuggingFaceSam2Names.rowToken, with: String(row))
            let slice = Array(values[(row * channels)..<((row + 1) * channels)])
            try result.insert(name, Tensor(shape: [1, channels], floats: slice), origin: origin)
        }
    }
}

extension StateDictImport {
    /// A stored key's canonical name and the rule that gave it: transformers' tables for a
    /// transformers checkpoint (`huggingFace` non-nil; `names` from its table), SAM 2's component
    /// names, else the key itself, wrapper prefix stripped.
    static func canonicalName(of key: String, huggingFace: HuggingFaceLayout?, names: [String: String]?) -> (String, ImportRule)? {
        if let huggingFace { return names?[key].map { ($0, huggingFace.importRule(renamedTo: $0)) } }
        switch SAM2Names.resolve(key) {
        case .canonical(let name, _): return (name, .sam2ComponentRenamed)
        case .videoOnly(let name, _): return (name, .sam2VideoKept)
        case nil: break
        }
        guard let resolved = CanonicalNames.resolve(key), resolved.path.contains(".") else { return nil }
        return (resolved.path, .stateDictKey)
    }
}

/// Unmapped tensors: an error listing them, or (when allowed) a listing in the result.
enum Unmapped {
    /// - Parameter note: what else was tried, said after the count.
    static func report(_ unmapped: [UnmappedTensor], file: String, into result: inout ImportedWeights,
                       options: ImportOptions, note: String? = nil) throws(ImportError) {
        guard !unmapped.isEmpty else { return }
        if options.allowUnmapped {
            result.unmapped += unmapped
            return
        }
        throw ImportError(.unmappedTensors, file: file, unmapped: unmapped,
                          "\(unmapped.count) weight-like tensor(s) that no rule maps (pass allowUnmapped to import the rest)"
                            + (note.map { "; \($0)" } ?? ""))
    }
}

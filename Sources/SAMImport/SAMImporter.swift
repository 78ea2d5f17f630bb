/// The front door `samconvert` calls: any mix of ONNX exports, state dicts (HDF5, PyTorch,
/// safetensors) and raw dense-PE blobs in, one set of canonical weights out.
public enum SAMImporter {
    public enum InputKind: String, Sendable {
        case onnx, hdf5, pytorch, safetensors, rawDensePE
    }

    /// The kind of input, from the file name (`.onnx`; `.h5`/`.hdf5`; `.pth`/`.pt`; `.safetensors`;
    /// `.bin` = raw dense PE).
    public static func kind(of path: String) -> InputKind? {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".onnx") { return .onnx }
        if lowered.hasSuffix(".h5") || lowered.hasSuffix(".hdf5") { return .hdf5 }
        if lowered.hasSuffix(".pth") || lowered.hasSuffix(".pt") { return .pytorch }
        if lowered.hasSuffix(".safetensors") { return .safetensors }
        if lowered.hasSuffix(".bin") { return .rawDensePE }
        return nil
    }

    /// Imports every file and merges them (see `ImportMerge`). Raw blobs are read last, sized by
    /// what the other files gave.
    public static func importFiles(_ paths: [String], options: ImportOptions = ImportOptions()) throws(ImportError) -> ImportedWeights {
        var kinds: [(path: String, kind: InputKind)] = []
        for path in paths {
            guard let kind = kind(of: path) else {
                throw ImportError(.unsupportedInput, file: path, "not .onnx, .h5/.hdf5, .pth/.pt, .safetensors or a raw dense-PE .bin")
            }
            kinds.append((path, kind))
        }
        var merged = ImportedWeights()
        for (path, kind) in kinds.filter({ $0.kind != .rawDensePE }) + kinds.filter({ $0.kind == .rawDensePE }) {
            let part = try importOne(path, kind: kind, context: merged, options: options)
            try ImportMerge.merge(part, into: &merged, tolerance: options.computedTolerance, batchNormEps: options.runtimeBatchNormEps)
        }
        return merged
    }

    /// One file; a raw blob is sized by `context`, what the other files gave.
    private static func importOne(_ path: String, kind: InputKind, context: ImportedWeights,
                                  options: ImportOptions) throws(ImportError) -> ImportedWeights {
        switch kind {
        case .onnx: try ONNXImport.importModel(path, options: options)
        case .hdf5: try StateDictImport.importHDF5(path, options: options)
        case .pytorch: try StateDictImport.importPyTorch(path, options: options)
        case .safetensors: try StateDictImport.importSafetensors(path, options: options)
        case .rawDensePE: try DensePEBlobImport.importBlob(path, context: context, options: options)
        }
    }
}

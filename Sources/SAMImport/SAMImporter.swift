/// The front door `samconvert` calls: any mix of ONNX exports, HDF5 state dicts and raw
/// dense-PE blobs in, one set of canonical weights out.
public enum SAMImporter {
    public enum InputKind: String, Sendable {
        case onnx, hdf5, rawDensePE
    }

    /// The kind of input, from the file name (`.onnx`; `.h5`/`.hdf5`; `.bin` = raw dense PE).
    public static func kind(of path: String) -> InputKind? {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".onnx") { return .onnx }
        if lowered.hasSuffix(".h5") || lowered.hasSuffix(".hdf5") { return .hdf5 }
        if lowered.hasSuffix(".bin") { return .rawDensePE }
        return nil
    }

    /// Imports every file and merges them (see `ImportMerge`). Raw blobs are read last, sized by
    /// what the other files gave.
    public static func importFiles(_ paths: [String], options: ImportOptions = ImportOptions()) throws(ImportError) -> ImportedWeights {
        var kinds: [(path: String, kind: InputKind)] = []
        for path in paths {
            guard let kind = kind(of: path) else {
                throw ImportError(.unsupportedInput, file: path, "not .onnx, .h5/.hdf5 or a raw dense-PE .bin")
            }
            kinds.append((path, kind))
        }
        var merged = ImportedWeights()
        for (path, kind) in kinds where kind != .rawDensePE {
            let part = kind == .onnx ? try ONNXImport.importModel(path, options: options)
                                     : try StateDictImport.importHDF5(path, options: options)
            try ImportMerge.merge(part, into: &merged, tolerance: options.computedTolerance)
        }
        for (path, kind) in kinds where kind == .rawDensePE {
            let part = try DensePEBlobImport.importBlob(path, context: merged, options: options)
            try ImportMerge.merge(part, into: &merged, tolerance: options.computedTolerance)
        }
        return merged
    }
}

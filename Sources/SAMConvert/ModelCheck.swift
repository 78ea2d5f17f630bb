import SAMImport
import SAMModel
import SAMTensor

/// The model built from the imported weights, strictly, to check a file that would not load is never
/// written, and dropped at once. Building reads a large weight's name, dtype and shape only (linear
/// layers keep their matrices without reading them; `WeightTensor`), so tensors the import does not
/// hold are stood in for by zero pages of their size: the check holds the small tensors, not the model.
enum ModelCheck {
    /// The components the model has and the keys of the matrices it multiplies by.
    static func build(_ imported: ImportedWeights, config: SAMConfig, source: String) throws(ConversionFailure)
        -> (components: [String], matrixKeys: Set<String>) {
        let largest = imported.tensors.values.filter { !$0.isHeld }.map(\.byteCount).max() ?? 0
        guard let zeros = ZeroPages(count: largest) else {
            throw ConversionFailure("cannot reserve \(largest) bytes of address space to check the model")
        }
        var tensors: [String: Tensor] = [:]
        for (name, tensor) in imported.tensors {
            tensors[name] = tensor.isHeld ? tensor.tensor : zeros.tensor(tensor.dtype, shape: tensor.shape)
        }
        do {
            let store = WeightStore(tensors, source: source)
            let sam = try Sam(weights: store, config: config, densePositionalEncoding: imported.denseImagePE.map { FloatTensor($0.tensor) })
            return (sam.presentComponents, store.matrixKeys)
        } catch {
            var message = "the weights do not make a model: \(error)"
            // A transformers checkpoint names its weights its own way: say which key is missing there.
            if case .missing(let key, _) = error, let stored = HuggingFaceStoredNames.storedName(ofCanonical: key, in: imported) {
                message += " (the transformers checkpoint's key \(stored))"
            }
            throw ConversionFailure(message)
        }
    }
}

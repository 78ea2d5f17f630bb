import SAMTensor

/// Called after a named module has run, with the module's PyTorch state-dict path
/// ("image_encoder.layers.1.blocks.0") and its output, in execution order — what a PyTorch
/// forward hook registered on that module would see. A verifier uses it to dump or compare
/// every module's output. Pass nil (the default) to run without it; the only cost is then a
/// nil check per module.
package typealias ModuleObserver = (_ path: String, _ output: FloatTensor) -> Void

/// "parent.key", or just "key" when the parent path is empty (an encoder-only state dict).
@inline(__always)
func modulePath(_ parent: String, _ key: String) -> String {
    parent.isEmpty ? key : "\(parent).\(key)"
}

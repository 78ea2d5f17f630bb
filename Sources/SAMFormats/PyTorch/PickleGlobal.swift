/// The only Python globals the pickle machine accepts: what `torch.save` writes for a state dict.
/// Any other (`os.system`, `builtins.eval`, `subprocess.check_output` ...) is refused as soon as a
/// GLOBAL opcode names it. Nothing is ever called: these only tell the machine how to build dicts,
/// storages and tensor views, and the machine has no way to run code at all.
enum PickleGlobal: Sendable, Equatable {
    case orderedDict
    /// `_rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])`
    case rebuildTensor
    /// `_rebuild_parameter(data, requires_grad, backward_hooks)`: the tensor itself.
    case rebuildParameter
    /// `_rebuild_parameter_with_state(data, requires_grad, backward_hooks, state)`: the tensor itself.
    case rebuildParameterWithState
    /// `torch.FloatStorage` and kin, named in persistent ids.
    case storageType(CheckpointElementType, name: String)
    /// `torch.float32` and kin: inert values.
    case dtype(String)

    static let storageTypes: [String: CheckpointElementType] = [
        "FloatStorage": .plain(.float32), "HalfStorage": .plain(.float16), "BFloat16Storage": .bfloat16,
        "DoubleStorage": .plain(.float64), "LongStorage": .plain(.int64), "IntStorage": .plain(.int32),
        "ByteStorage": .plain(.uint8), "BoolStorage": .plain(.bool),
    ]

    static let dtypes: Set<String> = [
        "float32", "float", "float16", "half", "bfloat16", "float64", "double",
        "int64", "long", "int32", "int", "uint8", "bool",
    ]

    /// The global `module.name`, or nil when it is not one a state dict needs.
    static func named(module: String, name: String) -> PickleGlobal? {
        switch (module, name) {
        case ("collections", "OrderedDict"): return .orderedDict
        case ("torch._utils", "_rebuild_tensor_v2"): return .rebuildTensor
        case ("torch._utils", "_rebuild_parameter"): return .rebuildParameter
        case ("torch._utils", "_rebuild_parameter_with_state"): return .rebuildParameterWithState
        case ("torch", _):
            if let type = storageTypes[name] { return .storageType(type, name: name) }
            if dtypes.contains(name) { return .dtype(name) }
            return nil
        default: return nil
        }
    }

    /// Dotted name, as Python spells it.
    var name: String {
        switch self {
        case .orderedDict: "collections.OrderedDict"
        case .rebuildTensor: "torch._utils._rebuild_tensor_v2"
        case .rebuildParameter: "torch._utils._rebuild_parameter"
        case .rebuildParameterWithState: "torch._utils._rebuild_parameter_with_state"
        case .storageType(_, let name): "torch." + name
        case .dtype(let name): "torch." + name
        }
    }

    /// For the refusal message.
    static let acceptedText = "collections.OrderedDict, torch._utils._rebuild_tensor_v2, _rebuild_parameter, "
        + "_rebuild_parameter_with_state, torch.<dtype>, torch." + storageTypes.keys.sorted().joined(separator: "/")
}

/// A global a pickle names, and whether the machine accepts it (see `PickleGlobal`).
public struct PickleGlobalName: Sendable, Equatable {
    /// Dotted, as Python spells it: `torch.FloatStorage`, `os.system`.
    public let name: String
    public let accepted: Bool
}

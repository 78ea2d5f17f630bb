import SAMFiles
/// Where the tensors are in an unpickled checkpoint: the top-level dict itself, or the dict under its
/// "model" (SAM 2) or "state_dict" key when the top level wraps one beside other things (optimizer
/// state, epoch counters), which are then left alone.
struct TorchStateDict {
    static let wrapperKeys = ["model", "state_dict"]

    /// The top-level key the state dict was found under, or nil when the top level is the state dict.
    private(set) var wrapperKey: String?
    /// Tensor values by string key, in the dict's order.
    private(set) var tensors: [(key: String, view: PickleTensor)] = []
    /// Keys whose values are not tensors (counters, notes, nested dicts): left out of the result.
    private(set) var ignoredKeys: [String] = []

    init(root: PickleValue, heap: PickleHeap, file: String) throws(FormatError) {
        guard case .dict(let top) = root else {
            throw FormatError(.unsupported, file: file, "the checkpoint holds a \(root.kind), not a state dict (a dict of tensors)")
        }
        var stateDict = heap.dicts[top]
        for key in Self.wrapperKeys {
            if case .dict(let inner)? = stateDict[.string(key)] {
                stateDict = heap.dicts[inner]
                wrapperKey = key
                break
            }
        }
        for key in stateDict.keys {
            if case .string(let name) = key, case .tensor(let index)? = stateDict[key] {
                tensors.append((name, heap.tensors[index]))
            } else {
                ignoredKeys.append(key.description)
            }
        }
    }
}

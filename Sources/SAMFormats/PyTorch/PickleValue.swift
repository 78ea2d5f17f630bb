/// A value on the restricted pickle machine's stack. Containers, storages and tensors live in the
/// machine's `PickleHeap` and are referred to by index, so a deeply nested or self-referencing pickle
/// is a flat table here: nothing recurses over it, and freeing it cannot overflow the stack.
enum PickleValue: Sendable {
    case none
    case bool(Bool)
    case int(Int)
    /// An integer wider than 64 bits (LONG1/LONG4): carried along, never usable as a size or offset.
    case bigInt
    case float(Double)
    case string(String)
    /// A byte string, kept by length only (a state dict holds none).
    case bytes(count: Int)
    case global(PickleGlobal)
    /// A global the machine refuses, carried along only while taking an inventory of globals.
    case refused(String)
    case tuple(Int)
    case list(Int)
    case dict(Int)
    case storage(Int)
    case tensor(Int)

    /// What kind of value this is, for messages.
    var kind: String {
        switch self {
        case .none: "None"
        case .bool: "bool"
        case .int, .bigInt: "int"
        case .float: "float"
        case .string: "str"
        case .bytes: "bytes"
        case .global(let global): global.name
        case .refused(let name): name
        case .tuple: "tuple"
        case .list: "list"
        case .dict: "dict"
        case .storage: "storage"
        case .tensor: "tensor"
        }
    }
}

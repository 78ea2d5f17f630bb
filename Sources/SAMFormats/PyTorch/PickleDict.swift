/// A dict key: the hashable scalars Python allows and state dicts use.
enum PickleKey: Hashable, Sendable, CustomStringConvertible {
    case string(String)
    case int(Int)
    case bool(Bool)
    case none
    case float(UInt64)

    init?(_ value: PickleValue) {
        switch value {
        case .string(let text): self = .string(text)
        case .int(let number): self = .int(number)
        case .bool(let flag): self = .bool(flag)
        case .none: self = .none
        case .float(let number): self = .float(number.bitPattern)
        default: return nil
        }
    }

    var description: String {
        switch self {
        case .string(let text): text
        case .int(let number): String(number)
        case .bool(let flag): flag ? "True" : "False"
        case .none: "None"
        case .float(let bits): String(Double(bitPattern: bits))
        }
    }
}

/// A dict in insertion order (Python's dicts and OrderedDicts both keep it).
struct PickleDict: Sendable {
    private(set) var keys: [PickleKey] = []
    private var values: [PickleKey: PickleValue] = [:]

    subscript(key: PickleKey) -> PickleValue? { values[key] }

    mutating func set(_ key: PickleKey, _ value: PickleValue) {
        if values.updateValue(value, forKey: key) == nil { keys.append(key) }
    }
}

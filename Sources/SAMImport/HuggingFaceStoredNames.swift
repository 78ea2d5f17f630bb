/// The key a canonical weight has in a transformers checkpoint: the inverse of the naming tables,
/// so a weight the model needs and a transformers file lacks is reported under the name the file
/// would hold it by, not only under upstream's.
public enum HuggingFaceStoredNames {
    /// `canonical`'s key in the layout the weights were imported from, when they came from a
    /// transformers checkpoint and one rule gives it. Names a rule could also give through a count of
    /// other keys (an MLP head's hidden and last layers, a downsampler's convs) are ambiguous: nil.
    public static func storedName(ofCanonical canonical: String, in imported: ImportedWeights) -> String? {
        guard let layout = HuggingFaceLayout.of(imported) else { return nil }
        let found = layout.rules.compactMap { $0.storedName(forCanonical: canonical) }
        guard !found.contains(.counted) else { return nil }
        let keys = Set(found.compactMap { if case .key(let key) = $0 { key } else { nil } })
        return keys.count == 1 ? keys.first : nil
    }
}

extension HuggingFaceSamNames.Rule {
    enum StoredName: Equatable {
        case key(String)
        /// The rule would give the name through a count of other keys (`#last`, `#x3last`): which key
        /// holds it depends on what else the file holds.
        case counted
    }

    /// The transformers key this rule renames to `name`, nil when it gives `name` to none.
    func storedName(forCanonical name: String) -> StoredName? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        let pattern = canonical.split(separator: ".")
        guard parts.count == pattern.count else { return nil }
        var indexes: [Int] = [], leaf = "", counted = false
        for (part, token) in zip(parts, pattern) {
            guard token.hasPrefix("#") else {
                if token == "*" {
                    guard Self.leaves.contains(part) else { return nil }
                    leaf = String(part)
                } else {
                    guard part == token else { return nil }
                }
                continue
            }
            guard let value = Int(part), value >= 0, String(value) == part else { return nil }
            switch token {
            case "#": indexes.append(value)
            case "#+1":
                guard value >= 1 else { return nil }
                indexes.append(value - 1)
            case "#x3":
                guard value % 3 == 0 else { return nil }
                indexes.append(value / 3)
            case "#x3+1":
                guard value % 3 == 1 else { return nil }
                indexes.append(value / 3)
            case "#last":
                guard value >= 1 else { return nil }
                counted = true
            case "#x3last":
                guard value >= 3, value % 3 == 0 else { return nil }
                counted = true
            default: return nil
            }
        }
        if counted { return .counted }
        var next = indexes.makeIterator()
        var output: [String] = []
        for token in hf.split(separator: ".") {
            switch token {
            case "#":
                guard let index = next.next() else { return nil }
                output.append(String(index))
            case "*": output.append(leaf)
            default: output.append(String(token))
            }
        }
        return .key(output.joined(separator: "."))
    }
}

/// The call a dynamo-exported ONNX node came from, parsed from its `pkg.torch.onnx.fx_node`
/// metadata: the aten target and the top-level arguments. Parameters and buffers appear as
/// placeholders named after their module path with dots turned into underscores and a `p_` or
/// `b_` prefix (`%p_mask_decoder_transformer_layers_0_self_attn_q_proj_weight`).
///
/// Two spellings are in use:
/// `%linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = (%x, %p_w, %p_b), kwargs = {})`
/// and the shorter `aten.linear.default(%x, %p_w, %p_b)`.
struct FXNodeCall: Equatable {
    enum Argument: Equatable {
        /// `%name`: another node's value or a placeholder.
        case value(String)
        /// `[%a, %b]`: a list of values (as `aten.cat` takes).
        case list([String])
        /// Anything else: a number, `None`, a dtype.
        case literal(String)
    }

    /// `aten.linear.default`.
    let target: String
    let arguments: [Argument]

    init?(metadata text: String) {
        let callText: Substring
        if let marker = text.range(of: "call_function[target=") {
            let afterMarker = text[marker.upperBound...]
            guard let close = afterMarker.firstIndex(of: "]") else { return nil }
            var target = String(afterMarker[..<close])
            if target.hasPrefix("torch.ops.") { target.removeFirst("torch.ops.".count) }
            guard let args = afterMarker.range(of: "args = (") else { return nil }
            self.target = target
            callText = afterMarker[args.upperBound...]
        } else {
            guard let open = text.firstIndex(of: "("), !text[..<open].contains(" ") else { return nil }
            self.target = String(text[..<open])
            callText = text[text.index(after: open)...]
        }
        arguments = Self.topLevelArguments(callText)
    }

    /// Splits `a, [b, c], 1)...` at top-level commas up to the closing parenthesis.
    static func topLevelArguments(_ text: Substring) -> [Argument] {
        var arguments: [Argument] = []
        var depth = 0, current = ""
        func finish() {
            let item = current.trimmingCharacters(in: " ")
            current = ""
            guard !item.isEmpty else { return }
            if item.hasPrefix("[") {
                let names = item.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: " ") }
                arguments.append(names.allSatisfy { $0.hasPrefix("%") } ? .list(names.map { String($0.dropFirst()) }) : .literal(item))
            } else if item.hasPrefix("%") {
                arguments.append(.value(String(item.dropFirst())))
            } else {
                arguments.append(.literal(item))
            }
        }
        for character in text {
            switch character {
            case "(", "[":
                depth += 1
                current.append(character)
            case ")" where depth == 0:
                finish()
                return arguments
            case ")", "]":
                depth -= 1
                current.append(character)
            case "," where depth == 0:
                finish()
            default:
                current.append(character)
            }
        }
        finish()
        return arguments
    }

    /// Every value named by an argument, lists flattened, in order.
    var valueNames: [String] {
        arguments.flatMap { argument -> [String] in
            switch argument {
            case .value(let name): [name]
            case .list(let names): names
            case .literal: []
            }
        }
    }

    /// Placeholders of parameters (`p_`) and buffers (`b_`), without the prefix.
    var parameterPlaceholders: [String] {
        valueNames.compactMap { name in
            name.hasPrefix("p_") || name.hasPrefix("b_") ? String(name.dropFirst(2)) : nil
        }
    }
}

extension StringProtocol {
    /// The string without leading and trailing characters from `set`.
    func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        var slice = Substring(self)
        while let first = slice.first, characters.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, characters.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}

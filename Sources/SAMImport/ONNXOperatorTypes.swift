import SAMFormats

/// One version of an ONNX operator's type constraints: the type variable of each input, output and
/// type-naming attribute, and the element types each variable allows. A variable binds one type per
/// node: inputs that share it must agree (onnx.checker and onnxruntime refuse the node otherwise).
struct ONNXOperatorTypes: Sendable {
    /// The first opset version with these constraints.
    let since: Int64
    /// Each input's name in the specification and its type variable, in order.
    let inputs: [(name: String, variable: String)]
    /// Each output's type variable, in order.
    let outputs: [String]
    /// Attributes that name an element type (Cast's `to`) or hold a typed tensor (Constant's `value`).
    let typeAttributes: [(name: String, variable: String, required: Bool)]
    /// Allowed element type codes by variable, in the order messages list them; a variable not
    /// listed allows every type.
    let allowed: [String: [Int32]]

    init(since: Int64, inputs: [(String, String)], outputs: [String], typeAttributes: [(String, String, Bool)] = [],
         allowed: [String: String]) {
        self.since = since
        self.inputs = inputs.map { (name: $0.0, variable: $0.1) }
        self.outputs = outputs
        self.typeAttributes = typeAttributes.map { (name: $0.0, variable: $0.1, required: $0.2) }
        self.allowed = allowed.mapValues(Self.codes)
    }

    /// "int8 uint8" as TensorProto.DataType codes.
    private static func codes(_ names: String) -> [Int32] {
        names.split(separator: " ").map { name in
            guard let type = ONNXElementType(name: String(name)) else { preconditionFailure("no ONNX element type \(name)") }
            return type.code
        }
    }

    /// What the table says of an operator at one opset.
    enum Lookup {
        /// The importer reads nothing this check covers from the operator.
        case unlisted
        /// The operator exists only from a later opset.
        case notYetDefined(since: Int64)
        case defined(ONNXOperatorTypes)
    }

    /// The constraints of `opType` at `opset`; nil `opset` (a file that imports no ai.onnx opset, or
    /// a node of another domain) takes the newest version, whose type sets include every older one's.
    static func lookup(_ opType: String, opset: Int64?) -> Lookup {
        guard let versions = table[opType], let newest = versions.last else { return .unlisted }
        guard let opset else { return .defined(newest) }
        guard let version = versions.last(where: { $0.since <= opset }) else { return .notYetDefined(since: versions[0].since) }
        return .defined(version)
    }

    /// A type set that grows with the opset: each step's types join all earlier ones.
    private static func growing(_ steps: [(since: Int64, added: String)]) -> [(since: Int64, types: String)] {
        var types = ""
        return steps.map { step in
            types += (types.isEmpty ? "" : " ") + step.added
            return (step.since, types)
        }
    }

    // The newer element types, in the order the specification adds them.
    private static let float8 = "float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz"
    private static let newerTypes: [(since: Int64, added: String)] = [
        (19, float8), (21, "uint4 int4"), (23, "float4e2m1"), (24, "float8e8m0"), (25, "uint2 int2"), (28, "float6e2m3 float6e3m2"),
    ]
    /// Cast's types: every type of the opset but the complex ones.
    private static let castTypes = growing([
        (1, "float16 float double int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool"), (9, "string"), (13, "bfloat16"),
    ] + newerTypes)
    /// The specification's "all tensor types" (Gather's and Slice's data), and Constant's, which
    /// also takes the newer types up to opset 25 (its last version).
    private static let allTensorTypes = "uint8 uint16 uint32 uint64 int8 int16 int32 int64 float16 float double string bool complex64 complex128"
    private static let constantTypes = growing([(1, "float16 float double"), (9, allTensorTypes), (13, "bfloat16")]
                                               + newerTypes.filter { $0.since <= 25 })
    /// QuantizeLinear's zero point, and DequantizeLinear's data with int32 (float8e8m0 is only ever a scale).
    private static let quantizedTypes = growing([(10, "int8 uint8"), (19, float8), (21, "int16 uint16 uint4 int4"),
                                                 (23, "float4e2m1"), (25, "uint2 int2"), (28, "float6e2m3 float6e3m2")])
    private static func quantized(at opset: Int64) -> String { quantizedTypes.last { $0.since <= opset }!.types }

    /// The operators whose stored inputs the importer interprets, by the opset versions where their
    /// types changed: the quantization operators (weights, scales, zero points), Cast and the Mul
    /// that scales an integer product (quantize_dynamic's weight scale), Constant (a stored value's
    /// type), and Gather, Slice and Equal (indices and labels the structural rules read).
    // ref: https://github.com/onnx/onnx/blob/main/docs/Operators.md#DequantizeLinear (and #QuantizeLinear,
    // #DynamicQuantizeLinear, #MatMulInteger, #ConvInteger, #Cast, #Constant, #Mul, #Gather, #Slice, #Equal)
    static let table: [String: [ONNXOperatorTypes]] = [
        "DequantizeLinear": [
            .init(since: 10, inputs: [("x", "T"), ("x_scale", "tensor(float)"), ("x_zero_point", "T")], outputs: ["tensor(float)"],
                  allowed: ["T": "int8 uint8 int32", "tensor(float)": "float"]),
            .init(since: 19, inputs: [("x", "T1"), ("x_scale", "T2"), ("x_zero_point", "T1")], outputs: ["T2"],
                  allowed: ["T1": "\(quantized(at: 19)) int32", "T2": "float float16 bfloat16"]),
            .init(since: 21, inputs: [("x", "T1"), ("x_scale", "T2"), ("x_zero_point", "T1")], outputs: ["T2"],
                  allowed: ["T1": "\(quantized(at: 21)) int32", "T2": "float float16 bfloat16"]),
        ] + [23, 24, 25, 28].map { since in
            .init(since: since, inputs: [("x", "T1"), ("x_scale", "T2"), ("x_zero_point", "T1")], outputs: ["T3"],
                  typeAttributes: [("output_dtype", "T3", false)],
                  allowed: ["T1": "\(quantized(at: since)) int32", "T2": "float float16 bfloat16" + (since >= 24 ? " float8e8m0" : ""),
                            "T3": "float float16 bfloat16"])
        },
        "QuantizeLinear": [
            .init(since: 10, inputs: [("x", "T1"), ("y_scale", "tensor(float)"), ("y_zero_point", "T2")], outputs: ["T2"],
                  allowed: ["T1": "float int32", "tensor(float)": "float", "T2": "int8 uint8"]),
            .init(since: 19, inputs: [("x", "T1"), ("y_scale", "T1"), ("y_zero_point", "T2")], outputs: ["T2"],
                  allowed: ["T1": "float float16 bfloat16 int32", "T2": quantized(at: 19)]),
            .init(since: 21, inputs: [("x", "T1"), ("y_scale", "T1"), ("y_zero_point", "T2")], outputs: ["T2"],
                  typeAttributes: [("output_dtype", "T2", false)],
                  allowed: ["T1": "float float16 bfloat16 int32", "T2": quantized(at: 21)]),
        ] + [23, 24, 25, 28].map { since in
            .init(since: since, inputs: [("x", "T1"), ("y_scale", "T2"), ("y_zero_point", "T3")], outputs: ["T3"],
                  typeAttributes: [("output_dtype", "T3", false)],
                  allowed: ["T1": "float float16 bfloat16 int32", "T2": "float float16 bfloat16 int32" + (since >= 24 ? " float8e8m0" : ""),
                            "T3": quantized(at: since)])
        },
        "DynamicQuantizeLinear": [
            .init(since: 11, inputs: [("x", "T1")], outputs: ["T2", "tensor(float)", "T2"],
                  allowed: ["T1": "float", "T2": "uint8", "tensor(float)": "float"]),
        ],
        "MatMulInteger": [
            .init(since: 10, inputs: [("A", "T1"), ("B", "T2"), ("a_zero_point", "T1"), ("b_zero_point", "T2")], outputs: ["T3"],
                  allowed: ["T1": "int8 uint8", "T2": "int8 uint8", "T3": "int32"]),
        ],
        "ConvInteger": [
            .init(since: 10, inputs: [("x", "T1"), ("w", "T2"), ("x_zero_point", "T1"), ("w_zero_point", "T2")], outputs: ["T3"],
                  allowed: ["T1": "int8 uint8", "T2": "int8 uint8", "T3": "int32"]),
        ],
        "Cast": castTypes.map { step in
            .init(since: step.since, inputs: [("input", "T1")], outputs: ["T2"], typeAttributes: [("to", "T2", true)],
                  allowed: ["T1": step.types, "T2": step.types])
        },
        "Constant": constantTypes.map { step in
            .init(since: step.since, inputs: [], outputs: ["T"], typeAttributes: [("value", "T", false)], allowed: ["T": step.types])
        },
        "Mul": growing([(1, "float16 float double"), (6, "uint32 uint64 int32 int64"), (13, "bfloat16"), (14, "uint8 uint16 int8 int16")])
            .map { step in .init(since: step.since, inputs: [("A", "T"), ("B", "T")], outputs: ["T"], allowed: ["T": step.types]) },
        "Gather": [
            .init(since: 1, inputs: [("data", "T"), ("indices", "Tind")], outputs: ["T"], allowed: ["T": allTensorTypes, "Tind": "int32 int64"]),
            .init(since: 13, inputs: [("data", "T"), ("indices", "Tind")], outputs: ["T"],
                  allowed: ["T": "\(allTensorTypes) bfloat16", "Tind": "int32 int64"]),
        ],
        "Slice": [
            .init(since: 1, inputs: [("data", "T")], outputs: ["T"], allowed: ["T": allTensorTypes]),
            .init(since: 10, inputs: [("data", "T"), ("starts", "Tind"), ("ends", "Tind"), ("axes", "Tind"), ("steps", "Tind")],
                  outputs: ["T"], allowed: ["T": allTensorTypes, "Tind": "int32 int64"]),
            .init(since: 13, inputs: [("data", "T"), ("starts", "Tind"), ("ends", "Tind"), ("axes", "Tind"), ("steps", "Tind")],
                  outputs: ["T"], allowed: ["T": "\(allTensorTypes) bfloat16", "Tind": "int32 int64"]),
        ],
        "Equal": growing([(1, "bool int32 int64"), (11, "uint8 uint16 uint32 uint64 int8 int16 float16 float double"), (13, "bfloat16"),
                          (19, "string")])
            .map { step in .init(since: step.since, inputs: [("A", "T"), ("B", "T")], outputs: ["T1"], allowed: ["T": step.types, "T1": "bool"]) },
    ]
}

import SAMTensor

/// `TensorProto.DataType`: the raw code, its ONNX name, and the reader dtype where one exists.
public struct ONNXElementType: Sendable, Hashable, CustomStringConvertible {
    public let code: Int32

    public init(code: Int32) { self.code = code }

    /// The code ONNX spells `name` ("FLOAT", "INT8" ...; Cast-1 gives its target type so), or nil.
    public init?(name: String) {
        guard let code = Self.names.first(where: { $0.value == name.uppercased() })?.key else { return nil }
        self.code = code
    }

    /// The readers' dtype for codes whose data can be read (f32 f16 f64 i64 i32 i8 u8 bool).
    public var dtype: DType? {
        switch code {
        case 1: .float32
        case 2: .uint8
        case 3: .int8
        case 6: .int32
        case 7: .int64
        case 9: .bool
        case 10: .float16
        case 11: .float64
        default: nil
        }
    }

    // ref: onnx/onnx.proto TensorProto.DataType
    static let names: [Int32: String] = [
        0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64", 8: "STRING",
        9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64", 14: "COMPLEX64", 15: "COMPLEX128",
        16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ", 21: "UINT4",
        22: "INT4", 23: "FLOAT4E2M1", 24: "FLOAT8E8M0", 25: "UINT2", 26: "INT2", 27: "FLOAT6E2M3", 28: "FLOAT6E3M2",
    ]

    public var name: String { Self.names[code] ?? "type\(code)" }

    public var description: String { dtype?.shortName ?? name.lowercased() }
}

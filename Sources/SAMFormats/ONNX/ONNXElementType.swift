import SAMTensor

/// `TensorProto.DataType`: the raw code, its ONNX name, and the reader dtype where one exists.
public struct ONNXElementType: Sendable, Equatable, CustomStringConvertible {
    public let code: Int32

    public init(code: Int32) { self.code = code }

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

    public var name: String {
        let names = [0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64",
                     8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64", 14: "COMPLEX64",
                     15: "COMPLEX128", 16: "BFLOAT16"]
        return names[Int(code)] ?? "type\(code)"
    }

    public var description: String { dtype?.shortName ?? name.lowercased() }
}

/// Element types the readers understand. Names follow numpy's, since `.npy` and HDF5 files speak them.
public enum DType: String, Sendable, CaseIterable, CustomStringConvertible {
    /// IEEE 754 single precision, 4 bytes (numpy `float32`, `.samw` `f32`).
    case float32
    /// IEEE 754 half precision, 2 bytes (numpy `float16`).
    case float16
    /// IEEE 754 double precision, 8 bytes (numpy `float64`).
    case float64
    /// Signed 64-bit integer (numpy `int64`).
    case int64
    /// Signed 32-bit integer (numpy `int32`).
    case int32
    /// Signed 8-bit integer (numpy `int8`).
    case int8
    /// Unsigned 8-bit integer (numpy `uint8`).
    case uint8
    /// One byte per element, 0 or 1 (numpy `bool`).
    case bool

    /// Bytes per element.
    public var byteSize: Int {
        switch self {
        case .float64, .int64: 8
        case .float32, .int32: 4
        case .float16: 2
        case .int8, .uint8, .bool: 1
        }
    }

    /// Whether the elements are floating-point numbers (`float16`, `float32`, `float64`).
    public var isFloatingPoint: Bool { self == .float32 || self == .float16 || self == .float64 }

    /// Short name used in listings: f32, f16, i64 ...
    package var shortName: String {
        switch self {
        case .float32: "f32"
        case .float16: "f16"
        case .float64: "f64"
        case .int64: "i64"
        case .int32: "i32"
        case .int8: "i8"
        case .uint8: "u8"
        case .bool: "bool"
        }
    }

    /// The short name listings print: `f32`, `f16`, `i64` ...
    public var description: String { shortName }
}

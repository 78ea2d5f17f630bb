/// Element types the readers understand. Names follow numpy's, since `.npy` and HDF5 files speak them.
public enum DType: String, Sendable, CaseIterable, CustomStringConvertible {
    case float32, float16, float64, int64, int32, int8, uint8, bool

    /// Bytes per element.
    public var byteSize: Int {
        switch self {
        case .float64, .int64: 8
        case .float32, .int32: 4
        case .float16: 2
        case .int8, .uint8, .bool: 1
        }
    }

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

    public var description: String { shortName }
}

import Foundation
import SAMFiles
import SAMFormats
import SAMTensor
import Testing

/// The committed fixtures, written by `converters/make_format_fixtures.py` and, for the `pth_*` and `st_*`
/// checkpoints, `converters/make_checkpoint_fixtures.py` (their docstrings list every file and how to run them).
/// Regenerate with `/work/venv/bin/python converters/make_format_fixtures.py --out Tests/SAMFormatsTests/Fixtures`.
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

    static func path(_ name: String) -> String { folder + "/" + name }
}

/// The generator's closed-form values, restated: with k the flat C-order index,
///
///     f32   k * 0.25 - 1
///     f16   k * 0.5 - 3
///     f64   k / 3
///     i64   k * 1_000_000_007 - 5_000_000_000
///     i32   k * 100_000 - 1_000_000
///     i8    (k * 37 + 3) % 256 - 128
///     u8    (k * 97 + 5) % 256
///     bool  k % 3 == 0
enum Formula {
    /// Element k of `dtype`'s formula, as the exact Double the reader's `value(at:)` must return.
    static func value(_ dtype: DType, _ k: Int) -> Double {
        switch dtype {
        case .float32: Double(Float(Double(k) * 0.25 - 1))
        case .float16: Double(k) * 0.5 - 3
        case .float64: Double(k) / 3
        case .int64: Double(int64(k))
        case .int32: Double(k * 100_000 - 1_000_000)
        case .int8: Double((k * 37 + 3) % 256 - 128)
        case .uint8: Double((k * 97 + 5) % 256)
        case .bool: k % 3 == 0 ? 1 : 0
        }
    }

    static func int64(_ k: Int) -> Int64 { Int64(k) * 1_000_000_007 - 5_000_000_000 }

    static func values(_ dtype: DType, count: Int) -> [Double] { (0..<count).map { value(dtype, $0) } }

    /// The little-endian bytes of the formula's `count` elements of `dtype`.
    static func bytes(_ dtype: DType, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        func append<T>(_ value: T) { withUnsafeBytes(of: value) { out += $0 } }
        for k in 0..<count {
            switch dtype {
            case .float32: append(Float(Double(k) * 0.25 - 1).bitPattern.littleEndian)
            case .float16: append(Half.fromFloat(Float(Double(k) * 0.5 - 3)).littleEndian)
            case .float64: append((Double(k) / 3).bitPattern.littleEndian)
            case .int64: append(int64(k).littleEndian)
            case .int32: append(Int32(k * 100_000 - 1_000_000).littleEndian)
            case .int8: out.append(UInt8(bitPattern: Int8((k * 37 + 3) % 256 - 128)))
            case .uint8: out.append(UInt8((k * 97 + 5) % 256))
            case .bool: out.append(k % 3 == 0 ? 1 : 0)
            }
        }
        return out
    }
}

extension Tensor {
    /// Every element through `value(at:)`.
    var allValues: [Double] { (0..<elementCount).map { value(at: $0) } }
    var byteArray: [UInt8] { Array(storage.bytes) }
}

/// Checks a tensor against the formula of its dtype: dtype, shape, every element (as Double and, for
/// the 64-bit integers, as Int64), and the exact bytes.
func expectFormula(_ tensor: Tensor, _ dtype: DType, _ shape: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(tensor.dtype == dtype, sourceLocation: sourceLocation)
    #expect(tensor.shape == shape, sourceLocation: sourceLocation)
    let count = shape.reduce(1, *)
    #expect(tensor.elementCount == count, sourceLocation: sourceLocation)
    guard tensor.dtype == dtype, tensor.elementCount == count else { return }
    #expect(tensor.allValues == Formula.values(dtype, count: count), sourceLocation: sourceLocation)
    #expect(tensor.byteArray == Formula.bytes(dtype, count: count), sourceLocation: sourceLocation)
    if dtype == .int64 {
        #expect(tensor.int64s() == (0..<count).map(Formula.int64), sourceLocation: sourceLocation)
    }
}

/// Runs `body`, which must throw a `FormatError` with `code`, naming `file` (exactly, or by suffix when
/// `fileSuffix` is set) and `tensor`. Returns the error for further checks.
@discardableResult
func expectFormatError(_ code: FormatError.Code, file: String? = nil, fileSuffix: String? = nil, tensor: String? = nil,
                       sourceLocation: SourceLocation = #_sourceLocation,
                       _ body: () throws -> Void) -> FormatError? {
    let error = #expect(throws: FormatError.self, sourceLocation: sourceLocation) { try body() }
    guard let error else { return nil }
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    if let file { #expect(error.file == file, "\(error)", sourceLocation: sourceLocation) }
    if let fileSuffix { #expect(error.file.hasSuffix(fileSuffix), "\(error)", sourceLocation: sourceLocation) }
    #expect(error.tensor == tensor, "\(error)", sourceLocation: sourceLocation)
    #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
    return error
}

/// A fresh empty folder under the system temporary directory, removed by the caller.
func temporaryFolder(_ label: String) throws -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("samformats-\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url.path
}

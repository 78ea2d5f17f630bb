import Foundation
import SAMFiles
import SAMTensor

/// numpy's `.npy` format, versions 1, 2 and 3: little-endian, C order only.
/// ref: numpy/lib/format.py (magic, header length width per version, 64-byte header alignment)
public enum NPY {
    static let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]  // "\x93NUMPY"

    /// Reads `path`; the tensor borrows the file's mapped pages.
    public static func read(_ path: String) throws(FormatError) -> Tensor {
        let file = try MappedFile(path: path)
        let header = try parseHeader(file.bytes, file: path)
        let byteCount: Int
        do { byteCount = try Shape.byteCount(header.shape, header.dtype) } catch {
            throw FormatError(.corrupt, file: path, "header shape: \(error)")
        }
        let available = file.count - header.dataOffset
        guard available >= byteCount else {
            throw FormatError(.truncated, file: path, "shape \(Shape.text(header.shape)) of \(header.dtype) needs \(byteCount) data bytes, the file has \(available)")
        }
        guard available == byteCount else {
            throw FormatError(.sizeMismatch, file: path, "\(available - byteCount) bytes follow the data of shape \(Shape.text(header.shape))")
        }
        let data = try file.slice(offset: header.dataOffset, length: byteCount)
        // Safe: the byte count was checked against the shape just above.
        return Tensor(dtype: header.dtype, shape: header.shape, checkedStorage: TensorStorage(borrowing: data, owner: file))
    }

    struct Header {
        var dtype: DType
        var shape: [Int]
        var dataOffset: Int
    }

    static func parseHeader(_ bytes: UnsafeRawBufferPointer, file: String) throws(FormatError) -> Header {
        guard bytes.count >= 10, Array(bytes[0..<6]) == magic else {
            throw FormatError(.corrupt, file: file, "not a .npy file (bad magic)")
        }
        let major = bytes[6]
        let lengthWidth: Int
        switch major {
        case 1: lengthWidth = 2
        case 2, 3: lengthWidth = 4
        default: throw FormatError(.unsupported, file: file, ".npy format version \(major) (supported: 1, 2, 3)")
        }
        guard bytes.count >= 8 + lengthWidth else { throw FormatError(.truncated, file: file, "header length cut off") }
        var headerLength = 0
        for index in 0..<lengthWidth { headerLength |= Int(bytes[8 + index]) << (8 * index) }
        let start = 8 + lengthWidth
        guard headerLength <= bytes.count - start else {
            throw FormatError(.truncated, file: file, "header declares \(headerLength) bytes, the file has \(bytes.count - start) after the preamble")
        }
        let text = String(decoding: bytes[start..<(start + headerLength)], as: UTF8.self)
        let dictionary = try HeaderDictionary(text, file: file)
        return Header(dtype: dictionary.dtype, shape: dictionary.shape, dataOffset: start + headerLength)
    }

    /// Writes `tensor` as a version-1 file (version 2 when the header needs it), atomically.
    public static func write(_ tensor: Tensor, to path: String, policy: OutputPolicy = .replace) throws(FormatError) {
        let shapeText: String
        switch tensor.shape.count {
        case 0: shapeText = "()"
        case 1: shapeText = "(\(tensor.shape[0]),)"
        default: shapeText = "(" + tensor.shape.map(String.init).joined(separator: ", ") + ")"
        }
        var header = "{'descr': '\(descriptor(for: tensor.dtype))', 'fortran_order': False, 'shape': \(shapeText), }"
        // Total header (preamble + dict + padding + newline) is a multiple of 64, as numpy writes it.
        let version: UInt8 = header.utf8.count + 11 > 65535 ? 2 : 1
        let preamble = version == 1 ? 10 : 12
        let padding = (64 - (preamble + header.utf8.count + 1) % 64) % 64
        header += String(repeating: " ", count: padding) + "\n"
        var out = magic + [version, 0]
        let length = header.utf8.count
        out += version == 1 ? [UInt8(length & 0xFF), UInt8(length >> 8)]
                            : (0..<4).map { UInt8((length >> (8 * $0)) & 0xFF) }
        out += Array(header.utf8)
        out += Array(tensor.storage.bytes)
        try AtomicFile.write(out, to: path, policy: policy)
    }

    static func descriptor(for dtype: DType) -> String {
        switch dtype {
        case .float32: "<f4"
        case .float16: "<f2"
        case .float64: "<f8"
        case .int64: "<i8"
        case .int32: "<i4"
        case .int8: "|i1"
        case .uint8: "|u1"
        case .bool: "|b1"
        }
    }
}

/// The Python-literal dict of a `.npy` header: `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
struct HeaderDictionary {
    var dtype: DType
    var shape: [Int]

    init(_ text: String, file: String) throws(FormatError) {
        func field(_ key: String) throws(FormatError) -> Substring {
            guard let keyRange = text.range(of: "'\(key)'"),
                  let colon = text[keyRange.upperBound...].firstIndex(of: ":") else {
                throw FormatError(.corrupt, file: file, "header has no '\(key)': \(text)")
            }
            return text[text.index(after: colon)...].drop(while: { $0 == " " })
        }
        let descrField = try field("descr")
        guard descrField.first == "'", let close = descrField.dropFirst().firstIndex(of: "'") else {
            throw FormatError(.corrupt, file: file, "header 'descr' is not a string: \(text)")
        }
        let descr = String(descrField[descrField.index(after: descrField.startIndex)..<close])
        switch descr {
        case "<f4": dtype = .float32
        case "<f2": dtype = .float16
        case "<f8": dtype = .float64
        case "<i8": dtype = .int64
        case "<i4": dtype = .int32
        case "|i1", "<i1": dtype = .int8
        case "|u1", "<u1": dtype = .uint8
        case "|b1", "<b1": dtype = .bool
        default:
            if descr.hasPrefix(">") {
                throw FormatError(.unsupported, file: file, "big-endian data ('\(descr)'); save it little-endian (arr.astype(arr.dtype.newbyteorder('<')))")
            }
            throw FormatError(.unsupported, file: file, "dtype '\(descr)' (supported: <f4 <f2 <f8 <i8 <i4 |i1 |u1 |b1)")
        }
        let fortran = try field("fortran_order")
        if fortran.hasPrefix("True") {
            throw FormatError(.unsupported, file: file, "Fortran-order data; save a C-contiguous array (np.ascontiguousarray)")
        }
        guard fortran.hasPrefix("False") else { throw FormatError(.corrupt, file: file, "header 'fortran_order' is neither True nor False") }
        let shapeField = try field("shape")
        guard shapeField.first == "(", let close = shapeField.firstIndex(of: ")") else {
            throw FormatError(.corrupt, file: file, "header 'shape' is not a tuple: \(text)")
        }
        var dims: [Int] = []
        for part in shapeField[shapeField.index(after: shapeField.startIndex)..<close].split(separator: ",") {
            let trimmed = part.trimmingSpaces()
            if trimmed.isEmpty { continue }
            guard let dim = Int(trimmed.hasSuffix("L") ? String(trimmed.dropLast()) : trimmed), dim >= 0 else {
                throw FormatError(.corrupt, file: file, "header shape entry '\(trimmed)' is not a non-negative integer")
            }
            dims.append(dim)
        }
        shape = dims
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

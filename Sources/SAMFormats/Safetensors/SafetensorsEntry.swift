import SAMFiles
import SAMTensor

/// One tensor of a safetensors file, checked against the file when it is opened.
public struct SafetensorsEntry: Sendable, Equatable {
    public let name: String
    /// The dtype as the header spells it (`F32`, `BF16` ...).
    public let dtypeName: String
    public let elementType: CheckpointElementType
    public let shape: [Int]
    /// `data_offsets`: the tensor's bytes, relative to the start of the data region.
    public let begin: Int
    public let end: Int

    /// The header's dtype names the readers know.
    static let elementTypes: [String: CheckpointElementType] = [
        "F32": .plain(.float32), "F16": .plain(.float16), "BF16": .bfloat16, "F64": .plain(.float64),
        "I64": .plain(.int64), "I32": .plain(.int32), "U8": .plain(.uint8), "BOOL": .plain(.bool),
    ]

    init(name: String, _ raw: SafetensorsHeader.Entry, dataLength: Int, file: String) throws(FormatError) {
        guard let elementType = Self.elementTypes[raw.dtype] else {
            throw FormatError(.unsupported, file: file, tensor: name,
                              "dtype '\(raw.dtype)' (readable: \(Self.elementTypes.keys.sorted().joined(separator: " ")))")
        }
        guard raw.dataOffsets.count == 2 else {
            throw FormatError(.corrupt, file: file, tensor: name, "data_offsets \(raw.dataOffsets) is not [begin, end]")
        }
        let (begin, end) = (raw.dataOffsets[0], raw.dataOffsets[1])
        guard begin >= 0, begin <= end else {
            throw FormatError(.corrupt, file: file, tensor: name, "data_offsets [\(begin), \(end)] do not run forwards")
        }
        guard end <= dataLength else {
            throw FormatError(.truncated, file: file, tensor: name, "data_offsets [\(begin), \(end)] run past the \(dataLength) data bytes")
        }
        let count: Int
        do { count = try Shape.elementCount(raw.shape) } catch {
            throw FormatError(.corrupt, file: file, tensor: name, "\(error)")
        }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: elementType.byteSize)
        guard !overflow, bytes == end - begin else {
            throw FormatError(.sizeMismatch, file: file, tensor: name,
                              "\(raw.dtype) \(Shape.text(raw.shape)) needs \(overflow ? "too many" : String(bytes)) bytes, data_offsets give \(end - begin)")
        }
        self.name = name
        dtypeName = raw.dtype
        self.elementType = elementType
        shape = raw.shape
        self.begin = begin
        self.end = end
    }
}

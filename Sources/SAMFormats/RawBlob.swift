import SAMFiles
import SAMTensor

/// Headerless little-endian tensors such as `image_points_embeddings.bin` (f32 [1,256,64,64]):
/// the caller declares dtype and shape, and the byte count must match exactly.
public enum RawBlob {
    public static func read(_ path: String, dtype: DType, shape: [Int], tensorName: String? = nil) throws(FormatError) -> Tensor {
        let expected: Int
        do { expected = try Shape.byteCount(shape, dtype) } catch {
            throw FormatError(.sizeMismatch, file: path, tensor: tensorName, "declared shape: \(error)")
        }
        let file = try MappedFile(path: path, tensor: tensorName)
        guard file.count == expected else {
            throw FormatError(.sizeMismatch, file: path, tensor: tensorName,
                              "has \(file.count) bytes; \(dtype) \(Shape.text(shape)) needs \(expected)")
        }
        let data = try file.slice(offset: 0, length: expected, tensor: tensorName)
        return Tensor(dtype: dtype, shape: shape, checkedStorage: TensorStorage(borrowing: data, owner: file))
    }
}

import SAMFiles
import SAMTensor

/// One tensor of a PyTorch state dict: a view (offset, shape, strides, all in elements) into a storage
/// that several tensors may share. Checked against its storage when the checkpoint is opened.
public struct PyTorchTensorEntry: Sendable, Equatable {
    /// The state-dict key.
    public let key: String
    public let storage: TorchStorageReference
    /// The archive entry holding the storage's bytes (`<archive>/data/<key>`).
    public let storageEntry: String
    public let storageOffset: Int
    public let shape: [Int]
    public let strides: [Int]
    public let elementCount: Int
    /// C-order strides: the bytes are one run of the storage, used in place when no conversion is needed.
    public let isContiguous: Bool

    public var elementType: CheckpointElementType { storage.elementType }
    /// The dtype the reader returns (bfloat16 is widened to float32).
    public var dtype: DType { elementType.dtype }

    /// Checks the view against its storage: ranks agree, nothing negative or overflowing, and the last
    /// element it reaches lies inside the storage.
    init(key: String, view: PickleTensor, storage: TorchStorageReference, storageEntry: String, file: String) throws(FormatError) {
        func refuse(_ code: FormatError.Code, _ message: String) -> FormatError {
            FormatError(code, file: file, tensor: key, message + " (storage '\(storage.key)')")
        }
        guard view.shape.count == view.strides.count else {
            throw refuse(.corrupt, "size \(Shape.text(view.shape)) and stride \(Shape.text(view.strides)) differ in rank")
        }
        guard view.storageOffset >= 0, view.strides.allSatisfy({ $0 >= 0 }) else {
            throw refuse(.corrupt, "negative storage offset \(view.storageOffset) or stride \(Shape.text(view.strides))")
        }
        let count: Int
        do { count = try Shape.elementCount(view.shape) } catch { throw refuse(.corrupt, "\(error)") }
        if count > 0 {
            var last = view.storageOffset
            for (size, stride) in zip(view.shape, view.strides) {
                let (step, overflowA) = (size - 1).multipliedReportingOverflow(by: stride)
                let (sum, overflowB) = last.addingReportingOverflow(step)
                guard !overflowA, !overflowB else { throw refuse(.corrupt, "the view's extent overflows") }
                last = sum
            }
            guard last < storage.elementCount else {
                throw refuse(.corrupt, "size \(Shape.text(view.shape)) stride \(Shape.text(view.strides)) at offset \(view.storageOffset) "
                             + "reaches element \(last) of a storage of \(storage.elementCount)")
            }
        }
        // A view may not hold more elements than its storage (a stride-0 broadcast): its copy is bounded by the file.
        guard count <= storage.elementCount else {
            throw refuse(.unsupported, "a broadcast view of \(count) elements over a storage of \(storage.elementCount)")
        }
        self.key = key
        self.storage = storage
        self.storageEntry = storageEntry
        storageOffset = view.storageOffset
        shape = view.shape
        strides = view.strides
        elementCount = count
        isContiguous = count == 0 || Self.contiguous(shape: view.shape, strides: view.strides)
    }

    /// Whether `strides` are C-order for `shape` (dims of size 1 may have any stride).
    static func contiguous(shape: [Int], strides: [Int]) -> Bool {
        var expected = 1
        for (size, stride) in zip(shape, strides).reversed() where size != 1 {
            guard stride == expected else { return false }
            expected *= size
        }
        return true
    }

    /// Whether reading needs new memory (a strided copy, or bfloat16 widened), and how much.
    var copiedBytes: Int {
        isContiguous && elementType != .bfloat16 ? 0 : elementCount * dtype.byteSize
    }

    /// The tensor, from its storage's bytes (`storage.elementCount` elements, checked by the caller):
    /// a contiguous view borrows them; a strided one is copied in C order; bfloat16 is widened. A copy
    /// the machine has no memory for is an error naming `file` and the key.
    func tensor(from storageBytes: TensorStorage, file: String) throws(FormatError) -> Tensor {
        let size = elementType.byteSize
        let data: TensorStorage
        if elementCount == 0 {
            data = TensorStorage(zeroedByteCount: 0)  // an empty view's offset is never used, so never checked
        } else if isContiguous {
            let start = storageOffset * size
            data = TensorStorage(borrowing: UnsafeRawBufferPointer(rebasing: storageBytes.bytes[start..<start + elementCount * size]),
                                 owner: storageBytes)
        } else {
            guard let copy = StridedCopy.gather(storageBytes.bytes, elementSize: size, offset: storageOffset, shape: shape, strides: strides) else {
                throw FormatError(.outOfMemory, file: file, tensor: key, "cannot allocate \(elementCount * size) bytes to copy its strided view")
            }
            data = copy
        }
        var result = data
        if elementType == .bfloat16 {
            guard let widened = CheckpointElementType.widenBFloat16(data.bytes) else {
                throw FormatError(.outOfMemory, file: file, tensor: key, "cannot allocate \(elementCount * 4) bytes to widen it to float32")
            }
            result = widened
        }
        // Safe: init checked the view against the storage, and the caller the storage's byte count.
        return Tensor(dtype: dtype, shape: shape, checkedStorage: result)
    }
}

import CONNXProto
import CProtobufC
import SAMFiles
import SAMTensor

extension ONNXModel {
    /// Name, type, shape and data location of a TensorProto, without reading its data.
    static func describe(_ proto: UnsafeMutablePointer<Onnx__TensorProto>, name: String, file: String) throws(FormatError) -> ONNXInitializer {
        let tensor = proto.pointee
        let dims = array(tensor.dims, tensor.n_dims)
        guard dims.allSatisfy({ $0 >= 0 }) else {
            throw FormatError(.corrupt, file: file, tensor: name, "negative dims \(dims)")
        }
        guard dims.allSatisfy({ $0 <= Int64(Int32.max) * 64 }), (try? Shape.elementCount(dims.map { Int($0) })) != nil else {
            throw FormatError(.corrupt, file: file, tensor: name, "dims \(dims) overflow: their product is not a count of elements")
        }
        let elementType = ONNXElementType(code: tensor.has_data_type != 0 ? tensor.data_type : 0)
        let location: ONNXDataLocation
        if tensor.has_data_location != 0 && tensor.data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL {
            let external = entries(tensor.external_data, tensor.n_external_data)
            guard let path = external["location"], !path.isEmpty else {
                throw FormatError(.corrupt, file: file, tensor: name, "external data without a location")
            }
            guard let offset = Int(external["offset"] ?? "0"), offset >= 0 else {
                throw FormatError(.corrupt, file: file, tensor: name, "external data offset '\(external["offset"] ?? "")' is not a non-negative integer")
            }
            var length: Int? = nil
            if let text = external["length"] {
                guard let value = Int(text), value >= 0 else {
                    throw FormatError(.corrupt, file: file, tensor: name, "external data length '\(text)' is not a non-negative integer")
                }
                length = value
            }
            location = .external(location: path, offset: offset, length: length)
        } else if tensor.has_raw_data != 0 {
            location = .raw(byteCount: tensor.raw_data.len)
        } else {
            location = typedField(tensor)
        }
        return ONNXInitializer(name: name, elementType: elementType, shape: dims.map { Int($0) }, location: location)
    }

    /// The typed repeated field ONNX uses for this element type when there is no raw_data.
    static func typedField(_ tensor: Onnx__TensorProto) -> ONNXDataLocation {
        switch tensor.data_type {
        case 1: .typed(field: "float_data", count: tensor.n_float_data)
        case 11: .typed(field: "double_data", count: tensor.n_double_data)
        case 7: .typed(field: "int64_data", count: tensor.n_int64_data)
        case 12, 13: .typed(field: "uint64_data", count: tensor.n_uint64_data)
        case 8: .typed(field: "string_data", count: tensor.n_string_data)
        default: .typed(field: "int32_data", count: tensor.n_int32_data)  // int32, f16, bf16, u8, i8, bool, u16, i16
        }
    }

    /// Reads a TensorProto's data into a Tensor, borrowing the bytes wherever the layout allows.
    func decode(_ proto: UnsafeMutablePointer<Onnx__TensorProto>, name: String, copyingExternalData: Bool = false) throws(FormatError) -> Tensor {
        let description = try Self.describe(proto, name: name, file: path)
        guard let dtype = description.elementType.dtype else {
            throw FormatError(.unsupported, file: path, tensor: name,
                              "element type \(description.elementType.name) (readable: FLOAT FLOAT16 DOUBLE INT64 INT32 UINT8 BOOL)")
        }
        let byteCount: Int
        do { byteCount = try Shape.byteCount(description.shape, dtype) } catch {
            throw FormatError(.corrupt, file: path, tensor: name, "\(error)")
        }
        let tensor = proto.pointee
        switch description.location {
        case .raw(let available):
            guard available == byteCount else {
                throw FormatError(.sizeMismatch, file: path, tensor: name,
                                  "raw_data has \(available) bytes, \(dtype) \(Shape.text(description.shape)) needs \(byteCount)")
            }
            let bytes = UnsafeRawBufferPointer(start: tensor.raw_data.data, count: byteCount)
            return Tensor(dtype: dtype, shape: description.shape, checkedStorage: TensorStorage(borrowing: bytes, owner: message))
        case .external(let location, let offset, let length):
            if let length, length != byteCount {
                throw FormatError(.sizeMismatch, file: path, tensor: name,
                                  "external length \(length) bytes, \(dtype) \(Shape.text(description.shape)) needs \(byteCount)")
            }
            if copyingExternalData {
                let storage = try externalData.copy(location: location, offset: offset, length: byteCount, tensor: name)
                return Tensor(dtype: dtype, shape: description.shape, checkedStorage: storage)
            }
            let (bytes, owner) = try externalData.bytes(location: location, offset: offset, length: byteCount, tensor: name)
            return Tensor(dtype: dtype, shape: description.shape, checkedStorage: TensorStorage(borrowing: bytes, owner: owner))
        case .constantAttribute(let attribute):
            // Not produced for TensorProtos; those constants are read from `scalarConstants`.
            throw FormatError(.corrupt, file: path, tensor: name, "\(attribute) is not stored as a TensorProto")
        case .typed(let field, let count):
            let elements = byteCount / dtype.byteSize
            guard count == elements else {
                throw FormatError(.sizeMismatch, file: path, tensor: name,
                                  "\(field) has \(count) elements, shape \(Shape.text(description.shape)) needs \(elements)")
            }
            let storage = try typedStorage(tensor, dtype: dtype, count: elements, name: name)
            return Tensor(dtype: dtype, shape: description.shape, checkedStorage: storage)
        }
    }

    /// Typed fields: 32- and 64-bit types are borrowed as they are; the narrow types ONNX widens
    /// into int32_data (f16 bit patterns, u8, bool) are narrowed into a new buffer.
    private func typedStorage(_ tensor: Onnx__TensorProto, dtype: DType, count: Int, name: String) throws(FormatError) -> TensorStorage {
        func borrow<T>(_ pointer: UnsafeMutablePointer<T>?) -> TensorStorage {
            TensorStorage(borrowing: UnsafeRawBufferPointer(start: pointer, count: count * MemoryLayout<T>.stride), owner: message)
        }
        switch dtype {
        case .float32: return borrow(tensor.float_data)
        case .float64: return borrow(tensor.double_data)
        case .int64: return borrow(tensor.int64_data)
        case .int32: return borrow(tensor.int32_data)
        case .float16, .int8, .uint8, .bool:
            let values = array(tensor.int32_data, count)
            guard let storage = TensorStorage(zeroedByteCountIfAvailable: count * dtype.byteSize) else {
                throw FormatError(.outOfMemory, file: path, tensor: name, "cannot allocate \(count * dtype.byteSize) bytes to narrow it")
            }
            let out = UnsafeMutableRawPointer(mutating: storage.bytes.baseAddress!)
            for (index, value) in values.enumerated() {
                if dtype == .float16 {
                    out.storeBytes(of: UInt16(truncatingIfNeeded: value), toByteOffset: index * 2, as: UInt16.self)
                } else {
                    out.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: index, as: UInt8.self)
                }
            }
            return storage
        }
    }

    // MARK: - Graph values and attributes

    static func valueInfo(_ proto: UnsafeMutablePointer<Onnx__ValueInfoProto>) -> ONNXValueInfo {
        let name = string(proto.pointee.name)
        guard let type = proto.pointee.type, type.pointee.value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE,
              let tensorType = type.pointee.tensor_type else {
            return ONNXValueInfo(name: name, elementType: nil, dims: nil)
        }
        let elementType = ONNXElementType(code: tensorType.pointee.has_elem_type != 0 ? tensorType.pointee.elem_type : 0)
        guard let shape = tensorType.pointee.shape else { return ONNXValueInfo(name: name, elementType: elementType, dims: nil) }
        let dims: [ONNXDim] = messages(shape.pointee.dim, shape.pointee.n_dim).map { dim in
            switch dim.pointee.value_case {
            case ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE: .fixed(Int(dim.pointee.dim_value))
            case ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM: .symbolic(string(dim.pointee.dim_param))
            default: .unknown
            }
        }
        return ONNXValueInfo(name: name, elementType: elementType, dims: dims)
    }

    static func attribute(_ proto: UnsafeMutablePointer<Onnx__AttributeProto>, file: String) throws(FormatError)
        -> (ONNXAttribute, UnsafeMutablePointer<Onnx__TensorProto>?) {
        let attribute = proto.pointee
        let name = string(attribute.name)
        var tensorProto: UnsafeMutablePointer<Onnx__TensorProto>? = nil
        let value: ONNXAttributeValue
        switch attribute.type {
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: value = .float(attribute.f)
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: value = .int(attribute.i)
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: value = .string(binaryString(attribute.s))
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: value = .floats(array(attribute.floats, attribute.n_floats))
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: value = .ints(array(attribute.ints, attribute.n_ints))
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: value = .strings(array(attribute.strings, attribute.n_strings).map(binaryString))
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: value = .graph(name: string(attribute.g?.pointee.name))
        case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
            guard let tensor = attribute.t else { throw FormatError(.corrupt, file: file, tensor: name, "tensor attribute without a tensor") }
            let description = try describe(tensor, name: name, file: file)
            value = .tensor(dtype: description.elementType, shape: description.shape)
            tensorProto = tensor
        default: value = .other(type: Int32(attribute.type.rawValue))
        }
        return (ONNXAttribute(name: name, value: value), tensorProto)
    }
}

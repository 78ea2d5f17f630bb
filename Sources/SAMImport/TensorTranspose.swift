import SAMTensor

extension Tensor {
    /// The [columns, rows] transpose of a 2-D tensor, element bits moved as they are. Tiled, so a
    /// large matrix moves at memory speed (a conversion transposes each MatMul weight it reads).
    func transposed2D() -> Tensor {
        precondition(shape.count == 2, "transposed2D needs a 2-D tensor")
        let (rows, columns) = (shape[0], shape[1])
        switch dtype.byteSize {
        case 4: return transposed(rows, columns, as: UInt32.self)
        case 2: return transposed(rows, columns, as: UInt16.self)
        case 8: return transposed(rows, columns, as: UInt64.self)
        default:
            return gathered(shape: [columns, rows], count: rows * columns) { index in
                let (j, i) = index.quotientAndRemainder(dividingBy: rows)
                return i * columns + j
            }
        }
    }

    private func transposed<Element: FixedWidthInteger>(_ rows: Int, _ columns: Int, as _: Element.Type) -> Tensor {
        let result = TensorStorage(zeroedByteCount: rows * columns * MemoryLayout<Element>.size)
        let tile = 32
        // Owned and borrowed storages alike may be unaligned for Element: copy through raw loads.
        let source = storage.bytes
        let destination = UnsafeMutableRawPointer(mutating: result.bytes.baseAddress)
        let size = MemoryLayout<Element>.size
        for rowStart in stride(from: 0, to: rows, by: tile) {
            let rowEnd = Swift.min(rowStart + tile, rows)
            for columnStart in stride(from: 0, to: columns, by: tile) {
                let columnEnd = Swift.min(columnStart + tile, columns)
                for i in rowStart..<rowEnd {
                    for j in columnStart..<columnEnd {
                        let value = source.loadUnaligned(fromByteOffset: (i * columns + j) * size, as: Element.self)
                        destination?.storeBytes(of: value, toByteOffset: (j * rows + i) * size, as: Element.self)
                    }
                }
            }
        }
        return Tensor(dtype: dtype, shape: [columns, rows], checkedStorage: result)
    }
}

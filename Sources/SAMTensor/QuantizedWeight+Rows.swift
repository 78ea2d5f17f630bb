extension QuantizedWeight {
    /// This int8 weight as an [out, inner] matrix, each row's scale multiplied by `factors[row]` (rounded
    /// once to float32), the codes unchanged: a BatchNorm folded into the convolution before it (each
    /// output channel's weights times one factor) keeps that convolution's codes. `factors` has one entry
    /// per row; nil leaves the scales as they are, and the matrix then reads the same bytes.
    package func int8Matrix(rowScaleFactors factors: [Double]?) -> QuantizedWeight {
        precondition(scheme == .int8, "int8Matrix: a \(scheme.rawValue) weight")
        precondition(factors.map { $0.count == layout.rows } ?? true, "int8Matrix: \(factors?.count ?? 0) factors for \(layout.rows) rows")
        let matrix = [layout.rows, layout.inner]
        guard let factors else { return QuantizedWeight(scheme: .int8, shape: matrix, checkedStorage: storage) }
        let rescaled = TensorStorage(copying: storage.bytes)
        let raw = UnsafeMutableRawPointer(mutating: rescaled.bytes.baseAddress!)
        for row in 0..<layout.rows {
            let scale = Float(Double(rowScale(row)) * factors[row])
            raw.storeBytes(of: scale.bitPattern.littleEndian, toByteOffset: row * 4, as: UInt32.self)
        }
        return QuantizedWeight(scheme: .int8, shape: matrix, checkedStorage: rescaled)
    }
}

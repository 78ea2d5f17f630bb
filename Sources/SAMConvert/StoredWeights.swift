import SAMTensor

/// A plain tensor of the written file: dtype and shape as stored; `read()` makes its bytes again.
public struct StoredTensor: Sendable {
    public let dtype: DType
    public let shape: [Int]
    public let byteCount: Int
    let make: @Sendable () throws(ConversionFailure) -> Tensor

    /// The tensor as written (read from the inputs and narrowed again).
    public func read() throws(ConversionFailure) -> Tensor { try make() }
}

/// A quantized matrix of the written file (`--dtype int8|q4`).
public struct StoredQuantizedWeight: Sendable {
    public let scheme: QuantizedWeight.Scheme
    public let shape: [Int]
    public let byteCount: Int
}

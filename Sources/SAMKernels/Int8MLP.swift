import CInt8
import SAMTensor

extension Kernels {
    /// A two-layer MLP, `second(activation(first(x)))` then `epilogue`, whose weights are both stored int8,
    /// with int8 products on: the same bits as the two `int8Linear` calls, made tile by tile. Each task
    /// quantizes a tile of x's rows, multiplies them by the first weight into a hidden tile, applies
    /// the activation, quantizes that tile while it is in cache and multiplies it by the second weight:
    /// apart, the hidden map (TinyViT's first stage: 16384 rows of 512) went to memory and the second
    /// layer's quantization read it back (`sambench encoder --int8-products`: the row quantization was
    /// 12% of MobileSAM's samples on Zen 5, most of it waiting on those loads).
    ///
    /// Nil when int8 products are off or either weight is not int8 (the caller runs the two layers).
    package static func int8MLP(_ x: FloatTensor, first: WeightTensor, firstBias: FloatTensor?, activation: Epilogue.Activation,
                                second: WeightTensor, secondBias: FloatTensor?, epilogue: Epilogue) -> FloatTensor? {
        guard let firstCodes = int8ProductCodes(first.quantized), let secondCodes = int8ProductCodes(second.quantized) else {
            return nil
        }
        let (hidden, inFeatures) = (firstCodes.shape[0], firstCodes.shape[1])
        let outFeatures = secondCodes.shape[0]
        precondition(x.shape.last == inFeatures && secondCodes.shape[1] == hidden,
                     "int8 MLP: input \(x.shape) through [\(hidden), \(inFeatures)] and \(secondCodes.shape)")
        let rows = x.count / inFeatures, outShape = Array(x.shape.dropLast()) + [outFeatures]
        epilogue.check(outputShape: outShape, "int8 MLP")
        guard rows > 0 else { return FloatTensor(zeros: outShape) }
        let firstPanels = int8ProductPanels(first, codes: firstCodes, rows: rows)
        let secondPanels = int8ProductPanels(second, codes: secondCodes, rows: rows)
        let codeBytes = Int(sam_q8_row_bytes(Int64(max(inFeatures, hidden)))), tileRows = int8TileRows(rows)
        let tiles = (rows + tileRows - 1) / tileRows, count = rows * outFeatures
        let data = [Float](unsafeUninitializedCapacity: count) { outBuffer, initialized in
            let out = outBuffer.baseAddress!
            x.data.withUnsafeBufferPointer { xBuffer in
            (firstBias?.data ?? []).withUnsafeBufferPointer { firstBiasBuffer in
            (secondBias?.data ?? []).withUnsafeBufferPointer { secondBiasBuffer in
            withResidual(epilogue) { residual in
                let xs = xBuffer.baseAddress!
                let b1 = firstBias == nil ? nil : firstBiasBuffer.baseAddress, b2 = secondBias == nil ? nil : secondBiasBuffer.baseAddress
                parallelForChunks(tiles) { range in
                    let codes = UnsafeMutablePointer<UInt8>.allocate(capacity: tileRows * codeBytes)
                    let scales = UnsafeMutablePointer<Float>.allocate(capacity: tileRows)
                    let hiddenTile = UnsafeMutablePointer<Float>.allocate(capacity: tileRows * hidden)
                    defer { codes.deallocate(); scales.deallocate(); hiddenTile.deallocate() }
                    for tile in range {
                        let firstRow = tile * tileRows, tileCount = min(tileRows, rows - firstRow)
                        firstPanels.product(rows: xs + firstRow * inFeatures, count: tileCount, codes: codes, scales: scales,
                                            bias: b1, into: hiddenTile, activation: activation, residual: nil)
                        secondPanels.product(rows: hiddenTile, count: tileCount, codes: codes, scales: scales, bias: b2,
                                             into: out + firstRow * outFeatures, activation: epilogue.activation,
                                             residual: residual.map { $0 + firstRow * outFeatures })
                    }
                }
            }
            }
            }
            }
            initialized = count
        }
        return FloatTensor(shape: outShape, data: data)
    }
}

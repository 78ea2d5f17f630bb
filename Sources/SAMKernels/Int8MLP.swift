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
        let keep = rows < keptPanelRowLimit
        let firstPanels = keep ? first.derived("int8 panels") { Int8Panels(firstCodes) } : Int8Panels(firstCodes)
        let secondPanels = keep ? second.derived("int8 panels") { Int8Panels(secondCodes) } : Int8Panels(secondCodes)
        let (inBytes, hiddenBytes) = (Int(sam_q8_row_bytes(Int64(inFeatures))), Int(sam_q8_row_bytes(Int64(hidden))))
        // `int8Linear`'s tiles: whole row blocks of the product kernel, at least two per worker.
        let block = sam_q8_implementation() == 3 ? 32 : 6
        let tileRows = max(block, min(96, (rows / (2 * workerCount) + block - 1) / block * block))
        let tiles = (rows + tileRows - 1) / tileRows
        let count = rows * outFeatures
        let data = [Float](unsafeUninitializedCapacity: count) { outBuffer, initialized in
            let out = outBuffer.baseAddress!
            x.data.withUnsafeBufferPointer { xBuffer in
            (firstBias?.data ?? []).withUnsafeBufferPointer { firstBiasBuffer in
            (secondBias?.data ?? []).withUnsafeBufferPointer { secondBiasBuffer in
            withResidual(epilogue) { residual in
                let xs = xBuffer.baseAddress!
                let b1 = firstBias == nil ? nil : firstBiasBuffer.baseAddress, b2 = secondBias == nil ? nil : secondBiasBuffer.baseAddress
                parallelForChunks(tiles) { range in
                    let codes = UnsafeMutablePointer<UInt8>.allocate(capacity: tileRows * max(inBytes, hiddenBytes))
                    let scales = UnsafeMutablePointer<Float>.allocate(capacity: tileRows)
                    let hiddenTile = UnsafeMutablePointer<Float>.allocate(capacity: tileRows * hidden)
                    defer { codes.deallocate(); scales.deallocate(); hiddenTile.deallocate() }
                    for tile in range {
                        let firstRow = tile * tileRows, tileCount = min(tileRows, rows - firstRow)
                        sam_q8_quantize_rows(xs + firstRow * inFeatures, Int64(tileCount), Int64(inFeatures), Int64(inFeatures),
                                             codes, scales)
                        firstPanels.product(codes: codes, scales: scales, rows: tileCount, bias: b1, into: hiddenTile)
                        applyEpilogue(activation, hiddenTile, count: tileCount * hidden, residual: nil)
                        sam_q8_quantize_rows(hiddenTile, Int64(tileCount), Int64(hidden), Int64(hidden), codes, scales)
                        let tileOut = out + firstRow * outFeatures
                        secondPanels.product(codes: codes, scales: scales, rows: tileCount, bias: b2, into: tileOut)
                        applyEpilogue(epilogue.activation, tileOut, count: tileCount * outFeatures,
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

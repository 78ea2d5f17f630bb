import SAMBLAS
import SAMTensor

extension Kernels {
    /// PyTorch nn.Linear: x [..., in] (leading dims flattened to rows), weight [out, in],
    /// bias [out] or nil. Returns [..., out], then `epilogue` (residual add, activation). The
    /// weight is read through `withFloats` once per call (a float16 weight is widened once).
    ///
    /// With many rows, the output is made in tiles of rows, in parallel: each tile is seeded
    /// with the bias, multiplied (one single-threaded sgemm, x * weightᵀ accumulated onto it)
    /// and finished by the epilogue while it is still in cache. With few rows, one `gemm`
    /// split across threads and a separate epilogue pass. On the panel product the tiles start
    /// from the bias inside the product, and too few tiles split the weight's panels instead.
    package static func linear(_ x: FloatTensor, weight: some WeightOperand, bias: FloatTensor?,
                              epilogue: Epilogue = .none) -> FloatTensor {
        precondition(weight.shape.count == 2, "linear: weight must be [out, in], got \(weight.shape)")
        let outFeatures = weight.shape[0], inFeatures = weight.shape[1]
        precondition(x.shape.last == inFeatures,
                     "linear: input \(x.shape) does not end in \(inFeatures) features")
        if let bias { precondition(bias.count == outFeatures, "linear: bias \(bias.shape) for \(outFeatures) outputs") }
        let outShape = Array(x.shape.dropLast()) + [outFeatures]
        epilogue.check(outputShape: outShape, "linear")
        let rows = x.shape.dropLast().reduce(1, *)
        guard rows > 0, outFeatures > 0 else { return FloatTensor(zeros: outShape) }
        guard inFeatures > 0 else {
            var output = biasSeededRows(outShape, bias: bias)
            applyEpilogue(epilogue, to: &output)
            return output
        }

        // int8 weights (`samconvert --dtype int8`) multiply in int8 when the opt-in int8 products are on
        // (`setInt8Products`); otherwise they are widened to float32 like float16 storage, below.
        if let product = int8Linear(x, weight: weight, bias: bias, epilogue: epilogue, outShape: outShape) { return product }

        // The opt-in bfloat16 path (`setLinearPrecision`) multiplies by the weight's packed panels;
        // float32 by the panel product (`Float32LinearKernel`; on AVX2, up to `avx2PanelInputLimit`
        // inputs), on panels kept with the weight for few rows, packed for this call otherwise.
        let panels = linearPrecision == .bfloat16 ? bfloat16Panels(weight) : nil
        // One row goes to the BLAS, whose small-matrix kernel packs nothing: the decoder's heads, and
        // calls at load time (TinyViT's padded-position qkv), which should not keep a copy.
        let usesPanelProduct = panels == nil && float32LinearKernel == .panels && rows > 1 && panelProductPays(inputs: inFeatures)
        let keepsPanels = rows < keptPanelRowLimit
        // About 256 KB of output per tile (it stays in L2 for the epilogue), at least 16 rows, and at
        // least as many rows as input features: each tile's sgemm packs the whole weight again, and
        // with rows >= in that costs no more memory traffic than writing the tile. (ViT-B's MLP,
        // 768 -> 3072 on 4096 rows, had tiles of 21 rows: 195 packs of a 9 MB weight per call; with
        // this rule the encoder took 28% less CPU time, MobileSAM's 8% less.) The panel product packs
        // the weight once per call, so its tiles need as many rows as inputs only while there are
        // 8 tiles per worker, in whole blocks of twelve rows: SAM 2.1's stage-3 and 4 products had
        // 3 or fewer tiles of rows >= inputs and split the weight in two halves instead, one per
        // worker, the other idle while the slower finished.
        let ruleRows = usesPanelProduct
            ? max(48, 65_536 / outFeatures, min(inFeatures, rows / (8 * workerCount)))
            : max(16, 65_536 / outFeatures, inFeatures)
        let tileRows = usesPanelProduct ? (ruleRows + 11) / 12 * 12 : ruleRows
        let tiles = (rows + tileRows - 1) / tileRows
        guard usesPanelProduct || tiles >= 2 * workerCount else {
            var output = biasSeededRows(outShape, bias: bias)
            multiplyAll(x, weight: weight, panels: panels, rows: rows, into: &output)
            applyEpilogue(epilogue, to: &output)
            return output
        }
        let count = rows * outFeatures
        return (panels ?? []).withUnsafeBufferPointer { panelBuffer in
            let panelPointer = panels == nil ? nil : panelBuffer.baseAddress
            let data = productOutput(count: count, x: x, weight: weight, bias: bias, epilogue: epilogue) { p in
                // The panel product's copy of the weight: kept, or packed once for the call.
                let packed = !usesPanelProduct ? nil
                    : keepsPanels ? keptPanels(weight)
                    : ProductPanels(features: outFeatures, inputs: inFeatures, source: p.weight, featureStride: inFeatures,
                                    inputStride: 1)
                if let packed, tiles < 2 * workerCount {
                    panelProductAcrossWorkers(packed, p, rows: rows, epilogue: epilogue)
                    return
                }
                parallelFor(tiles) { tile in
                    let first = tile * tileRows, tileCount = min(tileRows, rows - first)
                    let out = p.out + first * outFeatures
                    if let packed {
                        packed.product(x: p.x + first * inFeatures, xStride: inFeatures, rows: tileCount, bias: p.bias,
                                       into: out, outStride: outFeatures)
                    } else {
                        if let bias = p.bias {
                            seedRows(out, rows: tileCount, with: bias, width: outFeatures)
                        } else {
                            out.initialize(repeating: 0, count: tileCount * outFeatures)
                        }
                        if let panelPointer {
                            bfloat16Product(x: p.x + first * inFeatures, rows: tileCount, inFeatures: inFeatures,
                                            panels: panelPointer, outFeatures: outFeatures, into: out)
                        } else {
                            BLAS.sgemm(transA: false, transB: true, m: tileCount, n: outFeatures, k: inFeatures, alpha: 1,
                                       a: p.x + first * inFeatures, lda: inFeatures,
                                       b: p.weight, ldb: inFeatures,
                                       beta: 1, c: out, ldc: outFeatures)
                        }
                    }
                    applyEpilogue(epilogue.activation, out, count: tileCount * outFeatures,
                                  residual: p.residual.map { $0 + first * outFeatures })
                }
            }
            return FloatTensor(shape: outShape, data: data)
        }
    }

    /// Copies `row` (width floats) into each of `rows` consecutive rows at `out` (`copyRows` from
    /// one row).
    @inline(__always)
    static func seedRows(_ out: UnsafeMutablePointer<Float>, rows: Int, with row: UnsafePointer<Float>, width: Int) {
        copyRows(row, stride: 0, rows: rows, width: width, into: out)
    }

    /// output += x * weightᵀ over all `rows`: one (thread-split) gemm, or with bfloat16 `panels`
    /// the rows split between the workers.
    private static func multiplyAll(_ x: FloatTensor, weight: some WeightOperand, panels: [UInt32]?, rows: Int,
                                    into output: inout FloatTensor) {
        let outFeatures = weight.shape[0], inFeatures = weight.shape[1]
        if let panels {
            let chunk = (rows + workerCount - 1) / workerCount
            x.data.withUnsafeBufferPointer { xBuffer in
                panels.withUnsafeBufferPointer { panelBuffer in
                    output.data.withUnsafeMutableBufferPointer { outBuffer in
                        let (xs, outs) = (xBuffer.baseAddress!, outBuffer.baseAddress!)
                        parallelFor((rows + chunk - 1) / chunk) { part in
                            let first = part * chunk
                            bfloat16Product(x: xs + first * inFeatures, rows: min(chunk, rows - first), inFeatures: inFeatures,
                                            panels: panelBuffer.baseAddress!, outFeatures: outFeatures,
                                            into: outs + first * outFeatures)
                        }
                    }
                }
            }
            return
        }
        x.data.withUnsafeBufferPointer { xBuffer in
            weight.withFloats { weightBuffer in
                output.data.withUnsafeMutableBufferPointer { outBuffer in
                    gemm(transA: false, transB: true, m: rows, n: outFeatures, k: inFeatures, alpha: 1,
                         a: xBuffer.baseAddress!, lda: inFeatures,
                         b: weightBuffer.baseAddress!, ldb: inFeatures,
                         beta: 1, c: outBuffer.baseAddress!, ldc: outFeatures)
                }
            }
        }
    }
}

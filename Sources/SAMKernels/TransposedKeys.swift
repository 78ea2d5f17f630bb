import SAMTensor

extension Kernels {
    /// Attention keys projected straight into the layout the small-heads kernel reads: for
    /// every batch, row h*D + d holds dimension d of head h for all keys, the key index
    /// contiguous. `attention(q:transposedKeys:v:...)` then needs no per-call transposition
    /// (at 4096 keys that transposition was ~1.7% of the decoder's samples).
    package struct TransposedKeys: Sendable {
        /// [B, H*D, stride]; columns from `length` to `stride` are zero.
        package let data: FloatTensor
        /// Lk, the number of keys.
        package let length: Int

        package var batch: Int { data.shape[0] }
        package var width: Int { data.shape[1] }
        package var stride: Int { data.shape[2] }
    }

    /// nn.Linear on x [B, L, in] (weight [out, in], bias [out]) with its output transposed:
    /// keys[b][o, j] = bias[o] + Σ_i weight[o, i] x[b, j, i]. One sgemm per image, weight *
    /// x_bᵀ, written into rows seeded with the bias, instead of x_b * weightᵀ then a transpose.
    package static func linearTransposed(_ x: FloatTensor, weight: some WeightOperand, bias: FloatTensor) -> TransposedKeys {
        precondition(x.shape.count == 3 && weight.shape.count == 2 && x.shape[2] == weight.shape[1],
                     "linearTransposed: input \(x.shape) does not end in the weight's \(weight.shape) input features")
        precondition(bias.count == weight.shape[0], "linearTransposed: bias \(bias.shape) for \(weight.shape[0]) outputs")
        let batch = x.shape[0], length = x.shape[1], inFeatures = x.shape[2], outFeatures = weight.shape[0]
        let stride = transposedKeyStride(length)
        let count = batch * outFeatures * stride
        let data = [Float](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            let out = buffer.baseAddress!
            bias.data.withUnsafeBufferPointer { biasBuffer in
                for row in 0..<(batch * outFeatures) {
                    (out + row * stride).initialize(repeating: biasBuffer[row % outFeatures], count: length)
                    (out + row * stride + length).initialize(repeating: 0, count: stride - length)
                }
            }
            if length > 0 && inFeatures > 0 {
                x.data.withUnsafeBufferPointer { xBuffer in
                    weight.withFloats { weightBuffer in
                        for b in 0..<batch {
                            gemm(transA: false, transB: true, m: outFeatures, n: length, k: inFeatures, alpha: 1,
                                 a: weightBuffer.baseAddress!, lda: inFeatures,
                                 b: xBuffer.baseAddress! + b * length * inFeatures, ldb: inFeatures,
                                 beta: 1, c: out + b * outFeatures * stride, ldc: stride)
                        }
                    }
                }
            }
            initializedCount = count
        }
        return TransposedKeys(data: FloatTensor(shape: [batch, outFeatures, stride], data: data), length: length)
    }

    /// `attention(q:k:v:...)` with the keys given transposed (`linearTransposed`), for heads of
    /// at most 64 dims: the small-heads kernel, whatever the lengths. q [B, Lq, H*D], v [B, Lk, H*Dv];
    /// returns [B, Lq, H*Dv].
    package static func attention(q: FloatTensor, transposedKeys keys: TransposedKeys, v: FloatTensor, heads: Int,
                                 scale: Float) -> FloatTensor {
        precondition(q.shape.count == 3 && v.shape.count == 3, "attention: q and v must be [B, L, H*D], got \(q.shape), \(v.shape)")
        let batch = q.shape[0], queryLength = q.shape[1], keyWidth = q.shape[2], valueWidth = v.shape[2]
        precondition(keys.batch == batch && keys.width == keyWidth && v.shape[0] == batch && v.shape[1] == keys.length,
                     "attention: incompatible q \(q.shape), transposed keys \(keys.data.shape) of \(keys.length), v \(v.shape)")
        precondition(heads >= 1 && keyWidth % heads == 0 && valueWidth % heads == 0,
                     "attention: widths \(keyWidth), \(valueWidth) not divisible by \(heads) heads")
        let headDim = keyWidth / heads, valueHeadDim = valueWidth / heads
        precondition(headDim <= 64 && valueHeadDim <= 64, "attention: transposed keys need heads of at most 64 dims")
        guard batch * queryLength * valueWidth > 0 else { return FloatTensor(zeros: [batch, queryLength, valueWidth]) }
        precondition(keys.length > 0, "attention: softmax over zero keys")
        let data = [Float](unsafeUninitializedCapacity: batch * queryLength * valueWidth) { outBuffer, initializedCount in
            q.data.withUnsafeBufferPointer { qBuffer in
            keys.data.data.withUnsafeBufferPointer { kBuffer in
            v.data.withUnsafeBufferPointer { vBuffer in
                let shape = AttentionShape(batch: batch, queryLength: queryLength, keyLength: keys.length, heads: heads,
                                           headDim: headDim, valueHeadDim: valueHeadDim)
                attentionSmallHeads(shape, q: qBuffer.baseAddress!, qRowStride: keyWidth, keysT: kBuffer.baseAddress!,
                                    keyStride: keys.stride, v: vBuffer.baseAddress!, vRowStride: valueWidth, scale: scale,
                                    bias: nil, biasPerBatch: false, into: outBuffer.baseAddress!)
            }
            }
            }
            initializedCount = outBuffer.count
        }
        return FloatTensor(shape: [batch, queryLength, valueWidth], data: data)
    }
}

import SAMBLAS
import SAMTensor

extension Kernels {
    /// EfficientViT's ReLU linear attention (LiteMLA.relu_linear_att) on NCHW `qkv`
    /// [B, G * 3 * headDim, H, W]: every block of 3 * headDim consecutive channels is one head,
    /// laid out q, k, v (headDim channels each). Per head, with N = H * W tokens:
    /// out_i = Σ_j v_j (k_j · q_i) / (Σ_j k_j · q_i + eps), q and k through ReLU, computed as
    /// upstream orders it: v padded with a row of ones, vk = v_pad kᵀ [headDim + 1, headDim],
    /// then vk q [headDim + 1, N], whose last row is the denominator. Returns [B, G * headDim, H, W]
    /// (head-major channels). Float32 throughout: the 1e-15 eps makes 0 / 0 (a query all zero after
    /// ReLU) come out 0, as it does upstream on CPU.
    /// ref: efficientsam/models/nn/ops.py LiteMLA.relu_linear_att
    package static func reluLinearAttention(_ qkv: FloatTensor, headDim dim: Int, eps: Float) -> FloatTensor {
        precondition(qkv.shape.count == 4 && dim >= 1 && qkv.shape[1] % (3 * dim) == 0,
                     "reluLinearAttention: \(qkv.shape) is not [B, G * 3 * \(dim), H, W]")
        let batch = qkv.shape[0], heads = qkv.shape[1] / (3 * dim)
        let (height, width) = (qkv.shape[2], qkv.shape[3]), tokens = height * width
        let outShape = [batch, heads * dim, height, width]
        guard batch * heads * tokens > 0 else { return FloatTensor(zeros: outShape) }
        let data = [Float](unsafeUninitializedCapacity: batch * heads * dim * tokens) { outBuffer, initializedCount in
            qkv.data.withUnsafeBufferPointer { input in
                let source = input.baseAddress!, target = outBuffer.baseAddress!
                parallelFor(batch * heads) { head in
                    attendHead(source + head * 3 * dim * tokens, dim: dim, tokens: tokens, eps: eps,
                               into: target + head * dim * tokens)
                }
            }
            initializedCount = batch * heads * dim * tokens
        }
        return FloatTensor(shape: outShape, data: data)
    }

    /// One head: `head` points at its q, k, v rows ([3 * dim, tokens]); `out` takes [dim, tokens].
    private static func attendHead(_ head: UnsafePointer<Float>, dim: Int, tokens: Int, eps: Float,
                                   into out: UnsafeMutablePointer<Float>) {
        let plane = dim * tokens
        let queries = UnsafeMutablePointer<Float>.allocate(capacity: plane)
        let keys = UnsafeMutablePointer<Float>.allocate(capacity: plane)
        let paddedValues = UnsafeMutablePointer<Float>.allocate(capacity: plane + tokens)
        let valueKeys = UnsafeMutablePointer<Float>.allocate(capacity: (dim + 1) * dim)
        let product = UnsafeMutablePointer<Float>.allocate(capacity: plane + tokens)
        defer {
            for buffer in [queries, keys, paddedValues, valueKeys, product] { buffer.deallocate() }
        }
        // ref: relu_linear_att — q = kernel_func(q); k = kernel_func(k)
        for i in 0..<plane {
            queries[i] = max(head[i], 0)
            keys[i] = max(head[plane + i], 0)
        }
        // ref: v = F.pad(v, (0, 0, 0, 1), mode="constant", value=1)
        paddedValues.update(from: head + 2 * plane, count: plane)
        (paddedValues + plane).initialize(repeating: 1, count: tokens)
        // ref: vk = torch.matmul(v, trans_k) — [dim + 1, tokens] x [tokens, dim]
        BLAS.sgemm(transA: false, transB: true, m: dim + 1, n: dim, k: tokens, alpha: 1, a: paddedValues, lda: tokens,
                   b: keys, ldb: tokens, beta: 0, c: valueKeys, ldc: dim)
        // ref: out = torch.matmul(vk, q) — [dim + 1, dim] x [dim, tokens]
        BLAS.sgemm(transA: false, transB: false, m: dim + 1, n: tokens, k: dim, alpha: 1, a: valueKeys, lda: dim,
                   b: queries, ldb: tokens, beta: 0, c: product, ldc: tokens)
        // ref: out = out[:, :, :-1] / (out[:, :, -1:] + self.eps)
        let denominators = product + plane
        for d in 0..<dim {
            for i in 0..<tokens { out[d * tokens + i] = product[d * tokens + i] / (denominators[i] + eps) }
        }
    }
}

import SAMKernels
import SAMTensor

extension TwoWayTransformer {
    /// transformer.py `Attention`: multi-head attention whose q/k/v projections may shrink the width
    /// to `embeddingDim / downsampleRate` (2 for the cross attentions, 1 for self attention) before
    /// splitting heads; `out_proj` maps back to `embeddingDim`. No masking, no attention bias.
    /// (Nested here so it cannot be confused with TinyViT's own `Attention`.)
    package struct Attention: Sendable {
        package let path: String
        package let qProj: NN.Linear
        package let kProj: NN.Linear
        package let vProj: NN.Linear
        package let outProj: NN.Linear
        package let numHeads: Int

        package var embeddingDim: Int { qProj.inFeatures }
        /// embedding_dim // downsample_rate
        package var internalDim: Int { qProj.outFeatures }
        /// From this many keys on, k_proj's output is made transposed (see callAsFunction).
        static let transposedKeysFrom = 512

        /// ref: transformer.py Attention.__init__
        package init(weights: WeightStore, path: String, embeddingDim: Int, numHeads: Int, downsampleRate: Int) throws(WeightError) {
            self.path = path
            guard downsampleRate > 0, embeddingDim % downsampleRate == 0 else {
                throw .invalid(key: "\(path).q_proj.weight", reason: "embedding dim \(embeddingDim) is not divisible by the downsample rate \(downsampleRate)",
                               source: weights.source)
            }
            let internalDim = embeddingDim / downsampleRate
            guard numHeads > 0, internalDim % numHeads == 0 else {
                throw .invalid(key: "\(path).q_proj.weight", reason: "\(numHeads) heads do not divide the internal dim \(internalDim)",
                               source: weights.source)
            }
            qProj = try NN.Linear(weights: weights, path: "\(path).q_proj", inFeatures: embeddingDim, outFeatures: internalDim)
            kProj = try NN.Linear(weights: weights, path: "\(path).k_proj", inFeatures: embeddingDim, outFeatures: internalDim)
            vProj = try NN.Linear(weights: weights, path: "\(path).v_proj", inFeatures: embeddingDim, outFeatures: internalDim)
            outProj = try NN.Linear(weights: weights, path: "\(path).out_proj", inFeatures: internalDim, outFeatures: embeddingDim)
            self.numHeads = numHeads
        }

        /// q [1, Lq, E], k and v [1, Lk, E] → [1, Lq, E]; with `residual` ([1, Lq, E]), returns
        /// residual + attention (the caller's skip connection, fused into out_proj unless an
        /// observer wants the attention output itself). Where one side is a few tokens and the
        /// other many, the many tokens' projections are folded into the few (`Folding`) unless
        /// `folding` is false.
        /// ref: transformer.py Attention.forward
        package func callAsFunction(q: FloatTensor, k: FloatTensor, v: FloatTensor, plusResidual residual: FloatTensor? = nil,
                                   folding: Bool = true, observer: ModuleObserver? = nil) -> FloatTensor {
            let route = folding ? Folding(attention: self, queryLength: q.shape[1], keyLength: k.shape[1]) : .none
            guard let observer else {
                switch route {
                case .keyValue:
                    return outProj(foldedKeyValueAttention(queries: qProj(q), k: k, v: v), then: Kernels.Epilogue(residual: residual))
                case .queryOutput:
                    return foldedQueryOutputAttention(q: q, keys: kProj(k), values: vProj(v), residual: residual)
                case .none:
                    return attend(queries: qProj(q), keys: projectedKeys(k), values: vProj(v), plusResidual: residual)
                }
            }
            // ref: Attention.forward — q = self.q_proj(q); k = self.k_proj(k); v = self.v_proj(v)
            // (in that order: an observer sees PyTorch's hook order). The observer sees every
            // projection; the attention itself takes the same route as without one, so attaching
            // an observer never changes the outputs.
            let queries = qProj(q, observer: observer)
            let keys = kProj(k, observer: observer)
            let values = vProj(v, observer: observer)
            var out: FloatTensor
            switch route {
            case .keyValue:
                out = outProj(foldedKeyValueAttention(queries: queries, k: k, v: v), observer: observer)
            case .queryOutput:
                out = foldedQueryOutputAttention(q: q, keys: keys, values: values, residual: nil)
                observer(outProj.path, out)
            case .none:
                out = outProj(Kernels.attention(q: queries, k: keys, v: values, heads: numHeads, scale: scale, bias: nil),
                              observer: observer)
            }
            observer(path, out)
            if let residual { Kernels.add(&out, residual) }
            return out
        }

        /// Which projections this attention folds for a shape: where one side is short (the
        /// prompt tokens of a click or a box) and the other long (the image tokens), multiplying
        /// the short side's vectors back to token width costs fewer multiply-adds than projecting
        /// every long-side token.
        enum Folding {
            /// A few queries over many keys: k_proj and v_proj folded into the queries
            /// (`Kernels.attentionFoldingKeyValueProjections`).
            case keyValue
            /// Many queries over a few keys: q_proj and out_proj folded into the keys and values
            /// (`Kernels.attentionFoldingQueryOutputProjections`).
            case queryOutput
            case none

            init(attention a: Attention, queryLength: Int, keyLength: Int) {
                if keyLength > queryLength
                    && Kernels.foldingKeyValueProjectionsPays(queryLength: queryLength, heads: a.numHeads, projectedWidth: a.internalDim) {
                    self = .keyValue
                } else if queryLength > keyLength
                    && Kernels.foldingQueryOutputProjectionsPays(keyLength: keyLength, heads: a.numHeads, projectedWidth: a.internalDim) {
                    self = .queryOutput
                } else {
                    self = .none
                }
            }
        }

        /// ref: Attention.forward with k_proj and v_proj folded in (`Folding.keyValue`).
        private func foldedKeyValueAttention(queries: FloatTensor, k: FloatTensor, v: FloatTensor) -> FloatTensor {
            Kernels.attentionFoldingKeyValueProjections(queries: queries, keys: k, values: v, keyWeight: kProj.weight,
                                                        valueWeight: vProj.weight, valueBias: vProj.bias, heads: numHeads, scale: scale)
        }

        /// ref: Attention.forward with q_proj and out_proj folded in (`Folding.queryOutput`), plus the residual.
        private func foldedQueryOutputAttention(q: FloatTensor, keys: FloatTensor, values: FloatTensor,
                                                residual: FloatTensor?) -> FloatTensor {
            Kernels.attentionFoldingQueryOutputProjections(tokens: q, keys: keys, values: values, queryWeight: qProj.weight,
                                                           queryBias: qProj.bias, outputWeight: outProj.weight,
                                                           outputBias: outProj.bias, heads: numHeads, scale: scale, residual: residual)
        }

        /// The same attention with the queries already projected (q_proj output, [1, Lq, internal]).
        func callAsFunction(projectedQueries queries: FloatTensor, k: FloatTensor, v: FloatTensor,
                            plusResidual residual: FloatTensor?) -> FloatTensor {
            attend(queries: queries, keys: projectedKeys(k), values: vProj(v), plusResidual: residual)
        }

        /// The same attention with keys and values already projected (`projectedKeys`, v_proj output).
        func callAsFunction(q: FloatTensor, projectedKeys keys: ProjectedKeys, projectedValues values: FloatTensor,
                            plusResidual residual: FloatTensor?) -> FloatTensor {
            attend(queries: qProj(q), keys: keys, values: values, plusResidual: residual)
        }

        /// k_proj's output in the layout the attention kernel for that many keys reads.
        enum ProjectedKeys: Sendable {
            /// Many keys (the 4096 image tokens): written transposed per head, the layout the
            /// small-heads kernel reads, so they need no transposing per call.
            case transposed(Kernels.TransposedKeys)
            case rows(FloatTensor)
        }

        func projectedKeys(_ k: FloatTensor) -> ProjectedKeys {
            if k.shape.count == 3 && k.shape[1] >= Self.transposedKeysFrom && headDim <= 64 {
                return .transposed(Kernels.linearTransposed(k, weight: kProj.weight, bias: kProj.bias))
            }
            return .rows(kProj(k))
        }

        var headDim: Int { internalDim / numHeads }
        var scale: Float { 1 / Float(headDim).squareRoot() }

        /// ref: Attention.forward — _separate_heads, attn = q @ kᵀ / math.sqrt(c_per_head),
        /// softmax(dim=-1), attn @ v, _recombine_heads, out = self.out_proj(out) (+ the caller's residual)
        private func attend(queries: FloatTensor, keys: ProjectedKeys, values: FloatTensor,
                            plusResidual residual: FloatTensor?) -> FloatTensor {
            let mixed: FloatTensor
            switch keys {
            case .transposed(let keys):
                mixed = Kernels.attention(q: queries, transposedKeys: keys, v: values, heads: numHeads, scale: scale)
            case .rows(let keys):
                mixed = Kernels.attention(q: queries, k: keys, v: values, heads: numHeads, scale: scale, bias: nil)
            }
            return outProj(mixed, then: Kernels.Epilogue(residual: residual))
        }
    }
}

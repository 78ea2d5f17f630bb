import SAMKernels
import SAMModel
import SAMTensor

extension TrackingModel {
    /// The frame's coarsest features fused with the object's memories [1, C, g, g]: on a frame tracked
    /// without memory (the first prompt of an object), the features plus `no_mem_embed`; otherwise
    /// memory attention over the conditioning frames' memories, the last `numMaskmem - 1` frames'
    /// memories and up to `maxObjectPointers` object pointers.
    /// ref: sam2/modeling/sam2_base.py _prepare_memory_conditioned_features
    func conditionedFeatures(frame: Int, initialConditioning: Bool, features: TrackingFeatures, bank: ObjectMemoryBank,
                             frameCount: Int, reverse: Bool) throws(TrackingError) -> FloatTensor {
        let c = features.channels, g = features.grid, tokens = g * g
        if initialConditioning {
            // ref: directly_add_no_mem_embed — pix_feat_with_mem = current_vision_feats[-1] + self.no_mem_embed
            var embedding = features.embedding
            if let noMemory = encoder.noMemoryEmbedding { Kernels.addBias(&embedding, channelBias: noMemory) }
            return embedding
        }
        guard !bank.conditioningFrames.isEmpty else {
            throw .invalidRequest("frame \(frame) is tracked before any frame of its object was prompted")
        }
        let memDim = config.memoryDim, numMaskmem = config.numMaskmem
        let (selected, unselected) = try bank.selectConditioning(near: frame, limit: config.maxConditioningFrames)
        func output(at t: Int) -> ObjectFrameOutput? {
            bank.nonConditioning[t] ?? (unselected.contains(t) ? bank.conditioning[t] : nil)
        }
        // ref: t_pos_and_prevs — conditioning frames at t_pos 0, then t_pos 1 ... numMaskmem - 1
        var entries: [(position: Int, output: ObjectFrameOutput)] = selected.compactMap { t in bank.conditioning[t].map { (0, $0) } }
        let stride = config.memoryTemporalStride
        for position in 1..<max(numMaskmem, 1) {
            let back = numMaskmem - position
            let previous: Int
            if back == 1 {
                previous = reverse ? frame + back : frame - back
            } else if !reverse {
                // ref: prev_frame_idx = ((frame_idx - 2) // stride) * stride - (t_rel - 2) * stride
                previous = floorDivide(frame - 2, stride) * stride - (back - 2) * stride
            } else {
                // ref: prev_frame_idx = -(-(frame_idx + 2) // stride) * stride + (t_rel - 2) * stride
                previous = -floorDivide(-(frame + 2), stride) * stride + (back - 2) * stride
            }
            if let out = output(at: previous) { entries.append((position, out)) }
        }
        var memoryValues: [Float] = [], memoryPositions: [Float] = []
        for (position, out) in entries {
            guard let stored = out.memory else { continue }
            // ref: feats.flatten(2).permute(2, 0, 1); maskmem_enc + maskmem_tpos_enc[num_maskmem - t_pos - 1]
            memoryValues += Kernels.nchwToTokens(stored).data
            var encoded = memoryPositionTokens
            Kernels.add(&encoded, repeating: FloatTensor(shape: [memDim], data: Array(video.memoryTemporalEncoding(position: position))))
            memoryPositions += encoded.data
        }
        var pointerTokens = 0
        if config.useObjectPointers {
            let maxPointers = min(frameCount, config.maxObjectPointers)
            // ref: only_obj_ptrs_in_the_past_for_eval — conditioning frames up to this one (in the tracking direction)
            let pointerFrames = config.onlyPointersInThePast ? selected.filter { reverse ? $0 >= frame : $0 <= frame } : selected
            let sign = reverse ? -1 : 1
            var distances: [Int] = [], pointers: [FloatTensor] = []
            for t in pointerFrames {
                guard let out = bank.conditioning[t] else { continue }
                distances.append(config.signedTemporalEncodingInPointers ? (frame - t) * sign : abs(frame - t))
                pointers.append(out.pointer)
            }
            for distance in 1..<max(maxPointers, 1) {
                let t = reverse ? frame + distance : frame - distance
                if t < 0 || t >= frameCount { break }
                if let out = output(at: t) {
                    distances.append(distance)
                    pointers.append(out.pointer)
                }
            }
            if !pointers.isEmpty {
                let split = c / memDim
                let encodings: FloatTensor
                if config.addTemporalEncodingToPointers {
                    let dim = config.projectTemporalEncodingInPointers ? c : memDim
                    encodings = video.objectPointers.temporalEncodings(distances: distances, maxDistance: maxPointers - 1, dim: dim)
                } else {
                    encodings = FloatTensor(zeros: [pointers.count, memDim])
                }
                // ref: obj_ptrs.reshape(-1, B, C // mem_dim, mem_dim).permute(0, 2, 1, 3).flatten(0, 1);
                // obj_pos.repeat_interleave(C // mem_dim, dim=0)
                for (index, pointer) in pointers.enumerated() {
                    memoryValues += pointer.data
                    let encoding = encodings.data[(index * memDim)..<((index + 1) * memDim)]
                    for _ in 0..<split { memoryPositions += encoding }
                }
                pointerTokens = pointers.count * split
            }
        }
        let memoryRows = memoryValues.count / memDim
        guard memoryRows > 0 else { throw .invalidRequest("frame \(frame): the object has no memory to attend to") }
        let attended = video.memoryAttention(firstSelfAttended: features.firstSelfAttended ?? firstSelfAttended(features),
                                             memory: FloatTensor(shape: [memoryRows, memDim], data: memoryValues),
                                             memoryPosition: FloatTensor(shape: [memoryRows, memDim], data: memoryPositions),
                                             pointerTokens: pointerTokens, rope: memoryRotaryEncoding)
        return Kernels.tokensToNCHW(attended.reshaped([1, tokens, c]), height: g, width: g)
    }
}

/// Python's `//` on integers (rounds toward negative infinity).
func floorDivide(_ a: Int, _ b: Int) -> Int {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

import Foundation
import SAMKernels
import SAMTensor

/// SAM 2's object pointers: a frame's pointer is its chosen mask token projected (`obj_ptr_proj`,
/// an MLP or a Linear); in the memory each pointer is split into C / mem_dim tokens of the memory's
/// width, with a temporal position encoding (the signed or absolute frame distance, as a 1-D sine
/// encoding projected by `obj_ptr_tpos_proj`) repeated over its tokens.
/// ref: sam2/modeling/sam2_base.py SAM2Base.__init__ (obj_ptr_proj, obj_ptr_tpos_proj),
/// _prepare_memory_conditioned_features; sam2/modeling/sam2_utils.py get_1d_sine_pe
package struct ObjectPointers: Sendable {
    package let projectionMLP: SAM2MLP?
    package let projectionLinear: NN.Linear?
    package let temporalProjection: NN.Linear?
    /// `no_obj_ptr` [1, C]: the pointer of a frame where the object is absent.
    package let noObjectPointer: FloatTensor

    init(weights: WeightStore, config: SAM2VideoConfig, hiddenDim: Int) throws(WeightError) {
        if config.mlpObjectPointerProjection {
            projectionMLP = try SAM2MLP(weights: weights, path: "obj_ptr_proj", inputDim: hiddenDim, hiddenDim: hiddenDim,
                                        outputDim: hiddenDim, layerCount: 3, activation: .relu)
            projectionLinear = nil
        } else {
            projectionMLP = nil
            projectionLinear = try NN.Linear(weights: weights, path: "obj_ptr_proj", inFeatures: hiddenDim, outFeatures: hiddenDim)
        }
        temporalProjection = config.projectTemporalEncodingInPointers
            ? try NN.Linear(weights: weights, path: "obj_ptr_tpos_proj", inFeatures: hiddenDim, outFeatures: config.memoryDim) : nil
        noObjectPointer = try weights.take("no_obj_ptr", shape: [1, hiddenDim])
    }

    /// The pointer [1, C] of a mask token [1, C], with `no_obj_ptr` where the object is absent.
    /// ref: _forward_sam_heads — obj_ptr = obj_ptr_proj(token); lambda * obj_ptr + (1 - lambda) * no_obj_ptr
    package func pointer(token: FloatTensor, objectPresent: Bool, fixedNoObjectPointer: Bool) -> FloatTensor {
        var pointer = projectionMLP.map { $0(token, observer: nil) } ?? projectionLinear.map { $0(token) } ?? token
        applyPresence(&pointer, objectPresent: objectPresent, fixedNoObjectPointer: fixedNoObjectPointer)
        return pointer
    }

    /// ref: _forward_sam_heads / _use_mask_as_output — fixed_no_obj_ptr: obj_ptr = lambda * obj_ptr;
    /// obj_ptr = obj_ptr + (1 - lambda) * no_obj_ptr, lambda 1 or 0
    package func applyPresence(_ pointer: inout FloatTensor, objectPresent: Bool, fixedNoObjectPointer: Bool) {
        let lambda: Float = objectPresent ? 1 : 0
        for i in pointer.data.indices {
            var value = pointer.data[i]
            if fixedNoObjectPointer { value = lambda * value }
            pointer.data[i] = value + (1 - lambda) * noObjectPointer.data[i]
        }
    }

    /// The temporal encodings [N, mem_dim] of pointers at frame distances `distances`, normalised by
    /// `maxDistance` (max_obj_ptrs_in_encoder - 1).
    /// ref: _prepare_memory_conditioned_features — get_1d_sine_pe(obj_pos / t_diff_max, dim=tpos_dim); obj_ptr_tpos_proj
    package func temporalEncodings(distances: [Int], maxDistance: Int, dim: Int) -> FloatTensor {
        let half = dim / 2
        // ref: get_1d_sine_pe — dim_t = temperature ** (2 * (dim_t // 2) / pe_dim), float32
        let dimT = (0..<half).map { i in Float(pow(Float(10_000), Float(2 * (i / 2)) / Float(half))) }
        var data = [Float](repeating: 0, count: distances.count * dim)
        for (row, distance) in distances.enumerated() {
            // ref: torch.tensor(pos_list) / t_diff_max — integer tensor over an integer: float32 division
            let position = Float(distance) / Float(maxDistance)
            for i in 0..<half {
                let argument = position / dimT[i]
                data[row * dim + i] = sinf(argument)
                data[row * dim + half + i] = cosf(argument)
            }
        }
        let encodings = FloatTensor(shape: [distances.count, dim], data: data)
        return temporalProjection.map { $0(encodings) } ?? encodings
    }
}

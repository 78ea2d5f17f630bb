import Testing
@testable import SAMPipeline
import SAMModel
import SAMTensor

/// The tracker's small rules, against upstream's Python semantics worked by hand.
@Suite("Tracking pieces")
struct TrackingPiecesTests {
    @Test("bfloat16 rounding: nearest, ties to even, as torch's .to(torch.bfloat16)")
    func bfloat16() {
        #expect(Float(1).roundedToBFloat16 == 1)
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
        #expect(Float(1 + 1.0 / 256).roundedToBFloat16 == 1)
        // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even (1 + 2^-6).
        #expect(Float(1 + 3.0 / 256).roundedToBFloat16 == Float(1 + 1.0 / 64))
        #expect(Float(1 + 1.0 / 256 + 1.0 / 4096).roundedToBFloat16 == Float(1 + 1.0 / 128))
        #expect(Float(-0.1).roundedToBFloat16 == -Float(0.1).roundedToBFloat16)
        #expect(Float.nan.roundedToBFloat16.isNaN)
        #expect(Float.infinity.roundedToBFloat16 == .infinity)
    }

    @Test("Python's // on integers")
    func floorDivision() {
        #expect(floorDivide(7, 2) == 3)
        #expect(floorDivide(-1, 1) == -1)
        #expect(floorDivide(-3, 2) == -2)
        #expect(floorDivide(-4, 2) == -2)
        #expect(floorDivide(3, -2) == -2)
    }

    static func output(_ value: Float) -> ObjectFrameOutput {
        ObjectFrameOutput(lowResolutionLogits: FloatTensor(shape: [1, 1, 1, 1], data: [value]), objectScore: value,
                          pointer: FloatTensor(shape: [1, 1], data: [value]), memory: nil)
    }

    @Test("select_closest_cond_frames: all when within the limit, else the nearest before, at-or-after, then by distance")
    func conditioningSelection() throws {
        var bank = ObjectMemoryBank()
        for frame in [0, 10, 20, 30, 40] { bank.setConditioning(frame, Self.output(Float(frame))) }
        #expect(try bank.selectConditioning(near: 25, limit: -1) == ([0, 10, 20, 30, 40], []))
        #expect(try bank.selectConditioning(near: 25, limit: 5) == ([0, 10, 20, 30, 40], []))
        // limit 3 at 25: before 20, after 30, then the closest other: 10 (15 away) over 40 (15 away, later in order).
        let three = try bank.selectConditioning(near: 25, limit: 3)
        #expect(three.selected == [20, 30, 10] && three.unselected == [0, 40])
        // At 30 itself: before 20, at-or-after 30, then 40 (10 away).
        #expect(try bank.selectConditioning(near: 30, limit: 3).selected == [20, 30, 40])
        // Past the last: only a before, then the closest other.
        #expect(try bank.selectConditioning(near: 50, limit: 2).selected == [40, 30])
    }

    @Test("a limit of one conditioning frame: fine for one, refused when it has to choose, as upstream asserts")
    func conditioningLimitOne() throws {
        var bank = ObjectMemoryBank()
        bank.setConditioning(0, Self.output(0))
        #expect(try bank.selectConditioning(near: 3, limit: 1) == ([0], []))
        bank.setConditioning(5, Self.output(5))
        #expect(throws: TrackingError.self) { try bank.selectConditioning(near: 3, limit: 1) }
    }

    @Test("video config from the weights: SAM 2.1's pointer encodings and no-object embedding, SAM 2.0 without")
    func configInference() {
        var shapes: [String: [Int]] = [
            "memory_attention.layers.0.linear1.weight": [2048, 256], "memory_attention.layers.1.linear1.weight": [2048, 256],
            "maskmem_tpos_enc": [7, 1, 1, 64], "obj_ptr_proj.layers.0.weight": [256, 256], "obj_ptr_tpos_proj.weight": [64, 256],
            "no_obj_embed_spatial": [1, 64], "memory_encoder.mask_downsampler.encoder.0.weight": [4, 1, 3, 3],
            "memory_encoder.mask_downsampler.encoder.3.weight": [16, 4, 3, 3], "memory_encoder.mask_downsampler.encoder.6.weight": [64, 16, 3, 3],
            "memory_encoder.mask_downsampler.encoder.9.weight": [256, 64, 3, 3], "memory_encoder.mask_downsampler.encoder.12.weight": [256, 256, 1, 1],
            "memory_encoder.fuser.layers.0.dwconv.weight": [256, 1, 7, 7],
        ]
        let v21 = SAM2VideoConfig.inferred(fromShapes: shapes)
        #expect(v21.memoryAttentionLayers == 2 && v21.memoryDim == 64 && v21.numMaskmem == 7)
        #expect(v21.addTemporalEncodingToPointers && v21.projectTemporalEncodingInPointers && v21.signedTemporalEncodingInPointers)
        #expect(v21.noObjectEmbedSpatial && v21.mlpObjectPointerProjection)
        #expect(v21.maskDownsamplerStride == 2 && v21.maskDownsamplerTotalStride == 16 && v21.maskDownsamplerPadding == 1)
        shapes["obj_ptr_tpos_proj.weight"] = nil
        shapes["no_obj_embed_spatial"] = nil
        let v20 = SAM2VideoConfig.inferred(fromShapes: shapes)
        #expect(!v20.addTemporalEncodingToPointers && !v20.projectTemporalEncodingInPointers && !v20.signedTemporalEncodingInPointers)
        #expect(!v20.noObjectEmbedSpatial)
        // MaskDownSampler's own defaults: kernel 4, stride 4, no padding.
        let strided = SAM2VideoConfig.inferred(fromShapes: [
            "memory_encoder.mask_downsampler.encoder.0.weight": [16, 1, 4, 4], "memory_encoder.mask_downsampler.encoder.3.weight": [256, 16, 4, 4],
            "memory_encoder.mask_downsampler.encoder.6.weight": [256, 256, 1, 1],
        ])
        #expect(strided.maskDownsamplerStride == 4 && strided.maskDownsamplerPadding == 0 && strided.maskDownsamplerTotalStride == 16)
    }
}

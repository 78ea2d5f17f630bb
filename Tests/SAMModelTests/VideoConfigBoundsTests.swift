import Foundation
import SAMModel
import Testing

@Suite("SAM 2 video configuration bounds: the tracking numbers checked before a clip is tracked")
struct VideoConfigBoundsTests {
    static func withVideo(_ video: SAM2VideoConfig) -> SAMConfig {
        var config = SAMConfig.sam2(.tiny)
        config.videoMode = video
        return config
    }

    @Test("SAM 2.0's and 2.1's published video configurations are within bounds")
    func published() {
        for video in [SAM2VideoConfig(), .sam2_0] {
            #expect(Self.withVideo(video).problems.isEmpty, "\(Self.withVideo(video).problems)")
        }
        // One pointer is fine without temporal encodings (SAM 2.0's): nothing is divided by its count.
        var one = SAM2VideoConfig.sam2_0
        one.maxObjectPointers = 1
        #expect(Self.withVideo(one).problems.isEmpty, "\(Self.withVideo(one).problems)")
        // One conditioning frame attended to: upstream runs it while an object has one (checked when tracking).
        var limited = SAM2VideoConfig()
        limited.maxConditioningFrames = 1
        #expect(Self.withVideo(limited).problems.isEmpty, "\(Self.withVideo(limited).problems)")
    }

    @Test("each number that would divide by zero, give NaN or allocate without bound is named")
    func outOfBounds() {
        let cases: [(String, (inout SAM2VideoConfig) -> Void)] = [
            ("memory_temporal_stride_for_eval) 0 is not in 1...1024", { $0.memoryTemporalStride = 0 }),
            ("max_obj_ptrs_in_encoder) 1 with temporal encodings", { $0.maxObjectPointers = 1 }),
            ("max_obj_ptrs_in_encoder) 4611686018427387904 is not in 1...4096", { $0.maxObjectPointers = 1 << 62 }),
            ("rope_theta) 0.0 is not in", { $0.ropeTheta = 0 }),
            ("rope_theta) nan is not in", { $0.ropeTheta = .nan }),
            ("max_cond_frames_in_attn) 0 is neither -1", { $0.maxConditioningFrames = 0 }),
            ("max_cond_frames_in_attn) -2 is neither -1", { $0.maxConditioningFrames = -2 }),
            ("num_maskmem) 0 is not in 1...256", { $0.numMaskmem = 0 }),
            ("video.maskDownsamplerPadding 9223372036854775807", { $0.maskDownsamplerPadding = .max }),
            ("video.fuserPadding 1099511627776", { $0.fuserPadding = 1 << 40 }),
            ("memory_attention num_heads) 0 is not in 1...256", { $0.memoryAttentionHeads = 0 }),
            ("are not finite", { $0.memorySigmoidScale = .infinity }),
        ]
        for (says, edit) in cases {
            var video = SAM2VideoConfig()
            edit(&video)
            let config = Self.withVideo(video)
            #expect(config.problems.contains { $0.contains(says) }, "expected '\(says)' in \(config.problems)")
            #expect(throws: ConfigError.self) { try config.validate(file: "model.samw") }
        }
    }
}

import Testing
@testable import SAMVerify

@Suite("Verify: naming a video set's first divergence")
struct VideoDivergenceNamingTests {
    static func report(_ modules: [(String, String, Bool)]) -> String {
        var result = VideoVerification()
        result.frames = [.init(stem: "00000", maxLogitError: 1, minimumIoU: 1, maxScoreError: 0, passed: false)]
        result.modules = modules.map { .init(stem: $0.0, object: 1, name: $0.1, maxError: 1, withinShare: 0.5, passed: $0.2) }
        return result.table
    }

    @Test("a preflight memory (free to differ) is named only when no other module differs")
    func preflightLast() {
        let both = Self.report([("00000", "preflight_maskmem_features", false), ("00001", "vision_features", false)])
        #expect(both.contains("first diverging module vision_features (object 1, frame 00001)"), "\(both)")
        let alone = Self.report([("00000", "preflight_maskmem_features", false), ("00001", "vision_features", true)])
        #expect(alone.contains("first diverging module preflight_maskmem_features (object 1, frame 00000)"), "\(alone)")
    }
}

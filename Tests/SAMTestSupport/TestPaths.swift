import Foundation

/// Where tests find their data, however the package was cloned.
public enum TestPaths {
    /// The package root (this file is Tests/SAMTestSupport/TestPaths.swift).
    public static let packageRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The committed tiny-configuration reference set.
    public static let tinyReferences = packageRoot + "/reference_outputs/tiny"

    /// The committed tiny SAM ViT reference set.
    public static let vitTinyReferences = packageRoot + "/reference_outputs/vit_tiny"

    /// Seeded random prompts on the tiny sets' images, with PyTorch's outputs (converters/export_fuzz.py).
    public static let tinyFuzz = packageRoot + "/reference_outputs/tiny_fuzz"
    public static let vitTinyFuzz = packageRoot + "/reference_outputs/vit_tiny_fuzz"
    /// The committed tiny SAM 2.1 reference set (converters/export_sam2.py --config tiny).
    public static let sam2TinyReferences = packageRoot + "/reference_outputs/sam2_tiny"
    /// converters/export_sam_hq.py's tiny SAM-HQ sets: over SAM's ViT, and over MobileSAM's TinyViT.
    public static let samHQViTTinyReferences = packageRoot + "/reference_outputs/sam_hq_vit_tiny"
    public static let samHQTinyViTTinyReferences = packageRoot + "/reference_outputs/sam_hq_tiny_vit_tiny"
    /// converters/export_efficientvit_sam.py's tiny EfficientViT-SAM set (L0's structure at small widths).
    public static let efficientViTSAMTinyReferences = packageRoot + "/reference_outputs/efficientvit_sam_tiny"
    /// converters/export_sam2_video.py's tiny video set (SAM 2.1 tiny's structure at small widths, 8 frames).
    public static let sam2TinyVideoReferences = packageRoot + "/reference_outputs/sam2_tiny_video"
    /// The same scenario with the predictor's two switches on: corrections as conditioning frames,
    /// non-overlapping output masks.
    public static let sam2TinyVideoSwitchesReferences = packageRoot + "/reference_outputs/sam2_tiny_video_switches"
    /// Tiny video files made from that set's frames, and their frames as ffmpeg decodes them
    /// (Tests/SAMVideoFilesTests/Fixtures/README.md).
    public static let videoFileFixtures = packageRoot + "/Tests/SAMVideoFilesTests/Fixtures"
    /// Its checkpoint, as the published .pt files are laid out.
    public static let sam2TinyCheckpoint = sam2TinyReferences + "/sam2.1_hiera_tiny_widths.pt"

    /// A full-size reference set: `SAM_REFERENCE_SET_DIR` when set (`SAM_DROP_DIR`, its former name, still
    /// works), else `../shared/fixtures/mobilesam-seed0` beside the clone, as CI lays it out.
    public static let fullSizeSet: String = {
        if let path = environment("SAM_REFERENCE_SET_DIR", formerly: "SAM_DROP_DIR"), !path.isEmpty { return path }
        return URL(fileURLWithPath: packageRoot).deletingLastPathComponent()
            .appendingPathComponent("shared/fixtures/mobilesam-seed0").standardized.path
    }()

    /// Full-size set tests run in `make check-reference-set` (an optimized build, SAM_REFERENCE_SET_DIR
    /// set); `make test` stays on the committed fixtures. `make check-reference-set` fails before the tests
    /// when the set is missing, and sets SAM_REQUIRE_REFERENCE_SET=1 so a full-size set test that would
    /// disable itself fails instead: missing is never a skip there.
    public static var fullSizeSetIsPresent: Bool {
        environment("SAM_REFERENCE_SET_DIR", formerly: "SAM_DROP_DIR") != nil
            && FileManager.default.fileExists(atPath: fullSizeSet + "/mobile_sam.h5")
    }

    public static var fullSizeSetIsRequired: Bool {
        environment("SAM_REQUIRE_REFERENCE_SET", formerly: "SAM_REQUIRE_DROP") == "1"
    }

    /// A variable's value, or its former name's while scripts that set the old name remain.
    private static func environment(_ name: String, formerly former: String) -> String? {
        ProcessInfo.processInfo.environment[name] ?? ProcessInfo.processInfo.environment[former]
    }
}

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
    /// Its checkpoint, as the published .pt files are laid out.
    public static let sam2TinyCheckpoint = sam2TinyReferences + "/sam2.1_hiera_tiny_widths.pt"

    /// A full-size reference set (the drop): `SAM_DROP_DIR` when set, else `../shared/fixtures/mobilesam-seed0`
    /// beside the clone, as CI lays it out.
    public static let drop: String = {
        if let path = ProcessInfo.processInfo.environment["SAM_DROP_DIR"], !path.isEmpty { return path }
        return URL(fileURLWithPath: packageRoot).deletingLastPathComponent()
            .appendingPathComponent("shared/fixtures/mobilesam-seed0").standardized.path
    }()

    /// Drop tests run in `make check-drops` (an optimized build, SAM_DROP_DIR set); `make test` stays on the
    /// committed fixtures. `make check-drops` fails before the tests when the drop is missing, and sets
    /// SAM_REQUIRE_DROP=1 so a drop test that would disable itself fails instead: missing is never a skip there.
    public static var dropIsPresent: Bool {
        ProcessInfo.processInfo.environment["SAM_DROP_DIR"] != nil && FileManager.default.fileExists(atPath: drop + "/mobile_sam.h5")
    }

    public static var dropIsRequired: Bool {
        ProcessInfo.processInfo.environment["SAM_REQUIRE_DROP"] == "1"
    }
}

import ArgumentParser
import SAMEverything

/// `samrun --everything`: every parameter of upstream's automatic mask generator under its own name
/// in kebab case; an option not given takes the model family's upstream default.
/// Values are taken as given, so a negative one (`--mask-threshold -1`) reads as a value, not an option.
struct EverythingOptions: ParsableArguments {
    @Flag(help: "Segment everything: a grid of point prompts, masks filtered and deduplicated as upstream's automatic mask generator does; writes masks.json (COCO RLE) and overlay.png.")
    var everything = false
    @Option(name: .customLong("points-per-side"), parsing: .unconditional, help: "Grid points along one side (default 32).") var pointsPerSide: Int?
    @Option(name: .customLong("points-per-batch"), parsing: .unconditional, help: "Prompts decoded together (default 64).") var pointsPerBatch: Int?
    @Option(name: .customLong("pred-iou-thresh"), parsing: .unconditional, help: "Drop masks whose predicted IoU is not above this (SAM 0.88, SAM 2 0.8).")
    var predIoUThresh: Double?
    @Option(name: .customLong("stability-score-thresh"), parsing: .unconditional, help: "Drop masks whose stability score is below this (default 0.95).")
    var stabilityScoreThresh: Double?
    @Option(name: .customLong("stability-score-offset"), parsing: .unconditional, help: "Cutoff shift for the stability score (default 1.0).")
    var stabilityScoreOffset: Double?
    @Option(name: .customLong("box-nms-thresh"), parsing: .unconditional, help: "Box IoU for duplicates within a crop (default 0.7).") var boxNMSThresh: Double?
    @Option(name: .customLong("crop-n-layers"), parsing: .unconditional, help: "Crop layers; layer i has (2^i)^2 crops (default 0).") var cropNLayers: Int?
    @Option(name: .customLong("crop-nms-thresh"), parsing: .unconditional, help: "Box IoU for duplicates across crops (default 0.7).") var cropNMSThresh: Double?
    @Option(name: .customLong("crop-overlap-ratio"), parsing: .unconditional, help: "Overlap of neighbouring crops (default 512/1500).") var cropOverlapRatio: Double?
    @Option(name: .customLong("crop-n-points-downscale-factor"), parsing: .unconditional, help: "Layer n has points-per-side / factor^n points a side (default 1).")
    var cropNPointsDownscaleFactor: Int?
    @Option(name: .customLong("min-mask-region-area"), parsing: .unconditional, help: "Remove holes and islands smaller than this many pixels (default 0: off).")
    var minMaskRegionArea: Int?
    @Option(name: .customLong("mask-threshold"), parsing: .unconditional, help: "SAM 2: the logit a pixel must exceed (default 0).") var maskThreshold: Double?
    @Flag(name: .customLong("use-m2m"), help: "SAM 2: refine each mask once with its own logits as the mask prompt.")
    var useM2M = false
    @Flag(name: .customLong("no-multimask-output"), help: "SAM 2: one mask per point (the decoder's choice) instead of three.")
    var noMultimaskOutput = false
    @Option(name: .customLong("point-grids"), help: ArgumentHelp(
        "Explicit grids instead of --points-per-side: a JSON file holding one list of [x, y] points in 0...1 per crop layer.",
        valueName: "file"))
    var pointGrids: String?
    @Option(name: .customLong("output-mode"), help: ArgumentHelp(
        "masks.json's segmentations: coco_rle (default) or uncompressed_rle; binary_mask also writes <i>.png per mask and metadata.csv, as upstream's scripts/amg.py does.",
        valueName: "mode"))
    var outputMode: String?
    @Flag(name: .customLong("mask-pngs"), help: "With --everything: also write each mask as everything_NNNN.png.") var maskPNGs = false
    @Option(name: .customLong("images"), help: ArgumentHelp(
        "Dataset mode (instead of IMAGE): a folder (its *.png, *.jpg, *.jpeg) or a list file (one path a line); writes --out/<stem>.json per image, skipping those already there.",
        valueName: "dir-or-list"))
    var images: String?
    @Option(name: .customLong("shard"), parsing: .unconditional, help: ArgumentHelp(
        "With --images: only the sorted list's images whose index % N == I (0 <= I < N).", valueName: "I/N"))
    var shard: String?
    @Option(name: .customLong("coco"), help: ArgumentHelp(
        "With --images: merge every image's JSON into one COCO instances file (after segmenting this shard's missing ones).",
        valueName: "file"))
    var coco: String?

    /// The settings for a model of `rule`: its family's defaults, with what was given (the point
    /// grids read from their file).
    func settings(for rule: AutomaticMaskGenerator.Rule) throws(RunFailure) -> AutomaticMaskSettings {
        var settings: AutomaticMaskSettings = rule == .sam2 ? .sam2 : .sam
        if let pointGrids {
            settings.pointGrids = try RunFailure.wrap { try PointGridsFile.read(pointGrids) }
            // ref: SamAutomaticMaskGenerator.__init__ — exactly one of points_per_side and point_grids
            settings.pointsPerSide = nil
        }
        if let pointsPerSide { settings.pointsPerSide = pointsPerSide }
        if let pointsPerBatch { settings.pointsPerBatch = pointsPerBatch }
        if let predIoUThresh { settings.predIoUThresh = predIoUThresh }
        if let stabilityScoreThresh { settings.stabilityScoreThresh = stabilityScoreThresh }
        if let stabilityScoreOffset { settings.stabilityScoreOffset = stabilityScoreOffset }
        if let boxNMSThresh { settings.boxNMSThresh = boxNMSThresh }
        if let cropNLayers { settings.cropNLayers = cropNLayers }
        if let cropNMSThresh { settings.cropNMSThresh = cropNMSThresh }
        if let cropOverlapRatio { settings.cropOverlapRatio = cropOverlapRatio }
        if let cropNPointsDownscaleFactor { settings.cropNPointsDownscaleFactor = cropNPointsDownscaleFactor }
        if let minMaskRegionArea { settings.minMaskRegionArea = minMaskRegionArea }
        if let maskThreshold { settings.maskThreshold = maskThreshold }
        if useM2M { settings.useM2M = true }
        if noMultimaskOutput { settings.multimaskOutput = false }
        return settings
    }

    /// The given values' problems (out-of-range sizes, thresholds outside [0, 1] or NaN, an unknown
    /// output mode), found before the model loads: every family's defaults are within bounds, so
    /// SAM's stand in for them.
    func problems() throws(RunFailure) -> [String] {
        var found = try settings(for: .sam).problems
        if let outputMode, EverythingOutputMode(rawValue: outputMode) == nil {
            found.append("--output-mode must be one of \(EverythingOutputMode.allCases.map(\.rawValue).joined(separator: ", ")), not \(outputMode)")
        }
        return found
    }

    /// `--output-mode`, once `problems()` has found it valid.
    var mode: EverythingOutputMode { outputMode.flatMap(EverythingOutputMode.init(rawValue:)) ?? .cocoRLE }

    /// The dataset mode's options that were given, by name.
    var datasetOptionsGiven: [String] {
        [("--images", images), ("--shard", shard), ("--coco", coco)].filter { $0.1 != nil }.map(\.0)
    }

    /// Whether any generator option was given (they mean nothing without --everything).
    var anyGiven: Bool {
        [pointsPerSide, pointsPerBatch, cropNLayers, cropNPointsDownscaleFactor, minMaskRegionArea].contains { $0 != nil }
            || [predIoUThresh, stabilityScoreThresh, stabilityScoreOffset, boxNMSThresh, cropNMSThresh, cropOverlapRatio,
                maskThreshold].contains { $0 != nil }
            || useM2M || noMultimaskOutput || maskPNGs || pointGrids != nil || outputMode != nil
    }
}

/// upstream's `output_mode`, as `scripts/amg.py` writes each.
enum EverythingOutputMode: String, CaseIterable {
    case cocoRLE = "coco_rle"
    case uncompressedRLE = "uncompressed_rle"
    case binaryMask = "binary_mask"
}

/// The automatic mask generator's parameters, named and defaulted as upstream's generators name and
/// default them (`SamAutomaticMaskGenerator.__init__`, `SAM2AutomaticMaskGenerator.__init__`): a grid of
/// single-point prompts over the image (and over crops of it), masks filtered by predicted IoU and
/// stability, duplicates removed by box NMS. Thresholds are doubles, as upstream's Python floats are;
/// torch compares a float32 tensor with one after casting it to float32, and so does the generator.
/// ref: segment_anything/automatic_mask_generator.py SamAutomaticMaskGenerator.__init__;
/// sam2/automatic_mask_generator.py SAM2AutomaticMaskGenerator.__init__
public struct AutomaticMaskSettings: Sendable, Equatable, Codable {
    /// Points along one side of the grid (points_per_side^2 prompts); nil when `pointGrids` are given.
    public var pointsPerSide: Int?
    /// Prompts decoded together on one image state.
    public var pointsPerBatch: Int
    /// Masks whose predicted IoU is not above this are dropped (0 keeps all).
    public var predIoUThresh: Double
    /// Masks whose stability score is below this are dropped (0 keeps all).
    public var stabilityScoreThresh: Double
    /// How far the binarising cutoff moves to measure stability.
    public var stabilityScoreOffset: Double
    /// Box IoU above which the lower-scored of two masks of one crop is dropped.
    public var boxNMSThresh: Double
    /// Crop layers: layer i cuts the image into (2^i)^2 overlapping crops, each encoded and prompted.
    public var cropNLayers: Int
    /// Box IoU above which masks of different crops are deduplicated (the smaller crop's mask wins).
    public var cropNMSThresh: Double
    /// How much neighbouring crops of the first layer overlap, as a fraction of the image's long side.
    public var cropOverlapRatio: Double
    /// Layer n has points_per_side / factor^n points along a side.
    public var cropNPointsDownscaleFactor: Int
    /// Explicit grids, one per crop layer, points in [0, 1] as (x, y); exclusive with `pointsPerSide`.
    public var pointGrids: [[[Double]]]?
    /// Holes and islands smaller than this (pixels) are removed from each mask, then duplicates again (0: off).
    public var minMaskRegionArea: Int
    /// SAM 2: the logit above which a pixel is in the mask (SAM's generator uses the model's, 0).
    public var maskThreshold: Double
    /// SAM 2: refine each mask once with its own low-resolution logits as the mask prompt.
    public var useM2M: Bool
    /// SAM 2: three masks per point (false: the single best, by the decoder's rule).
    public var multimaskOutput: Bool

    /// Settings with upstream's parameter names (camel-cased) and `SamAutomaticMaskGenerator`'s defaults.
    public init(pointsPerSide: Int? = 32, pointsPerBatch: Int = 64, predIoUThresh: Double = 0.88,
                stabilityScoreThresh: Double = 0.95, stabilityScoreOffset: Double = 1.0, boxNMSThresh: Double = 0.7,
                cropNLayers: Int = 0, cropNMSThresh: Double = 0.7, cropOverlapRatio: Double = 512.0 / 1500.0,
                cropNPointsDownscaleFactor: Int = 1, pointGrids: [[[Double]]]? = nil, minMaskRegionArea: Int = 0,
                maskThreshold: Double = 0.0, useM2M: Bool = false, multimaskOutput: Bool = true) {
        self.pointsPerSide = pointsPerSide
        self.pointsPerBatch = pointsPerBatch
        self.predIoUThresh = predIoUThresh
        self.stabilityScoreThresh = stabilityScoreThresh
        self.stabilityScoreOffset = stabilityScoreOffset
        self.boxNMSThresh = boxNMSThresh
        self.cropNLayers = cropNLayers
        self.cropNMSThresh = cropNMSThresh
        self.cropOverlapRatio = cropOverlapRatio
        self.cropNPointsDownscaleFactor = cropNPointsDownscaleFactor
        self.pointGrids = pointGrids
        self.minMaskRegionArea = minMaskRegionArea
        self.maskThreshold = maskThreshold
        self.useM2M = useM2M
        self.multimaskOutput = multimaskOutput
    }

    /// SamAutomaticMaskGenerator's defaults (SAM, MobileSAM).
    public static let sam = AutomaticMaskSettings()
    /// SAM2AutomaticMaskGenerator's defaults: pred_iou_thresh 0.8, the rest as SAM's.
    public static let sam2 = AutomaticMaskSettings(predIoUThresh: 0.8)

    /// Upstream's snake_case names, in JSON (a reference set's manifest, `masks.json`'s settings).
    enum CodingKeys: String, CodingKey {
        case pointsPerSide = "points_per_side", pointsPerBatch = "points_per_batch", predIoUThresh = "pred_iou_thresh"
        case stabilityScoreThresh = "stability_score_thresh", stabilityScoreOffset = "stability_score_offset"
        case boxNMSThresh = "box_nms_thresh", cropNLayers = "crop_n_layers", cropNMSThresh = "crop_nms_thresh"
        case cropOverlapRatio = "crop_overlap_ratio", cropNPointsDownscaleFactor = "crop_n_points_downscale_factor"
        case pointGrids = "point_grids", minMaskRegionArea = "min_mask_region_area", maskThreshold = "mask_threshold"
        case useM2M = "use_m2m", multimaskOutput = "multimask_output"
    }

    /// Reads upstream's parameter names; a parameter absent (SAM's generator has no `mask_threshold`,
    /// `use_m2m` or `multimask_output`) keeps SAM's default.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let base = Self.sam
        pointsPerSide = try container.decodeIfPresent(Int.self, forKey: .pointsPerSide)
        pointGrids = try container.decodeIfPresent([[[Double]]].self, forKey: .pointGrids)
        if pointsPerSide == nil, pointGrids == nil, !container.contains(.pointsPerSide) { pointsPerSide = base.pointsPerSide }
        pointsPerBatch = try container.decodeIfPresent(Int.self, forKey: .pointsPerBatch) ?? base.pointsPerBatch
        predIoUThresh = try container.decodeIfPresent(Double.self, forKey: .predIoUThresh) ?? base.predIoUThresh
        stabilityScoreThresh = try container.decodeIfPresent(Double.self, forKey: .stabilityScoreThresh) ?? base.stabilityScoreThresh
        stabilityScoreOffset = try container.decodeIfPresent(Double.self, forKey: .stabilityScoreOffset) ?? base.stabilityScoreOffset
        boxNMSThresh = try container.decodeIfPresent(Double.self, forKey: .boxNMSThresh) ?? base.boxNMSThresh
        cropNLayers = try container.decodeIfPresent(Int.self, forKey: .cropNLayers) ?? base.cropNLayers
        cropNMSThresh = try container.decodeIfPresent(Double.self, forKey: .cropNMSThresh) ?? base.cropNMSThresh
        cropOverlapRatio = try container.decodeIfPresent(Double.self, forKey: .cropOverlapRatio) ?? base.cropOverlapRatio
        cropNPointsDownscaleFactor = try container.decodeIfPresent(Int.self, forKey: .cropNPointsDownscaleFactor)
            ?? base.cropNPointsDownscaleFactor
        minMaskRegionArea = try container.decodeIfPresent(Int.self, forKey: .minMaskRegionArea) ?? base.minMaskRegionArea
        maskThreshold = try container.decodeIfPresent(Double.self, forKey: .maskThreshold) ?? base.maskThreshold
        useM2M = try container.decodeIfPresent(Bool.self, forKey: .useM2M) ?? base.useM2M
        multimaskOutput = try container.decodeIfPresent(Bool.self, forKey: .multimaskOutput) ?? base.multimaskOutput
    }

    /// Bounds that keep a run finite and meaningful. A grid side of 1...1024 (upstream's largest in use
    /// is 64; 1024 is a million prompts per crop), thresholds finite and in [0, 1] where upstream's are
    /// fractions, crop layers 0...4 (341 crops), batches 1...4096, areas 0...(32768^2).
    public var problems: [String] {
        var found: [String] = []
        func fraction(_ name: String, _ value: Double) {
            if !(value.isFinite && value >= 0 && value <= 1) { found.append("--\(name) \(value) is not a number in [0, 1]") }
        }
        switch (pointsPerSide, pointGrids) {
        case (nil, nil): found.append("give --points-per-side or point grids")
        case (.some, .some): found.append("--points-per-side and point grids exclude each other")
        case (.some(let side), nil) where !(1...1024).contains(side):
            found.append("--points-per-side \(side) is not in 1...1024")
        default: break
        }
        if let grids = pointGrids {
            if grids.count < cropNLayers + 1 { found.append("\(grids.count) point grid(s) for \(cropNLayers + 1) crop layer(s)") }
            if grids.contains(where: { $0.isEmpty || $0.count > 1 << 20 }) { found.append("a point grid is empty or holds more than 2^20 points") }
            if grids.joined().contains(where: { $0.count != 2 || !$0.allSatisfy { $0.isFinite && $0 >= 0 && $0 <= 1 } }) {
                found.append("point grids hold (x, y) pairs in [0, 1]")
            }
        }
        if !(1...4096).contains(pointsPerBatch) { found.append("--points-per-batch \(pointsPerBatch) is not in 1...4096") }
        fraction("pred-iou-thresh", predIoUThresh)
        fraction("stability-score-thresh", stabilityScoreThresh)
        fraction("box-nms-thresh", boxNMSThresh)
        fraction("crop-nms-thresh", cropNMSThresh)
        if !(stabilityScoreOffset.isFinite && stabilityScoreOffset >= 0 && stabilityScoreOffset <= 1000) {
            found.append("--stability-score-offset \(stabilityScoreOffset) is not a number in [0, 1000]")
        }
        if !(0...4).contains(cropNLayers) { found.append("--crop-n-layers \(cropNLayers) is not in 0...4") }
        if !(cropOverlapRatio.isFinite && cropOverlapRatio >= 0 && cropOverlapRatio < 1) {
            found.append("--crop-overlap-ratio \(cropOverlapRatio) is not a number in [0, 1)")
        }
        if !(1...64).contains(cropNPointsDownscaleFactor) {
            found.append("--crop-n-points-downscale-factor \(cropNPointsDownscaleFactor) is not in 1...64")
        }
        if !(0...(1 << 30)).contains(minMaskRegionArea) { found.append("--min-mask-region-area \(minMaskRegionArea) is not in 0...2^30") }
        if !(maskThreshold.isFinite && abs(maskThreshold) <= 1000) { found.append("--mask-threshold \(maskThreshold) is not a finite logit") }
        return found
    }
}

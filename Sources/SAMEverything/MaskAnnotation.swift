/// One mask the automatic generator keeps, with what upstream's generator records of it
/// (`SamAutomaticMaskGenerator.generate`'s annotations): the mask as run-length counts at the image's
/// size, its area, its box (XYWH), the model's predicted IoU, the prompt point, the stability score
/// and the crop it came from (XYWH).
/// ref: segment_anything/automatic_mask_generator.py SamAutomaticMaskGenerator.generate (curr_anns)
public struct MaskAnnotation: Sendable, Equatable {
    /// The mask at the image's size, as run lengths.
    public var segmentation: UncompressedRLE
    /// Pixels in the mask.
    public var area: Int
    /// x, y, width, height in pixels (upstream's `box_xyxy_to_xywh` of the inclusive XYXY box).
    public var bbox: [Int]
    /// The decoder's predicted IoU for the mask.
    public var predictedIoU: Float
    /// The grid point (x, y) in the image's pixels.
    public var pointCoords: [Double]
    /// IoU of the logits thresholded at the mask threshold plus and minus `stabilityScoreOffset`
    /// (upstream's stability score).
    public var stabilityScore: Float
    /// x, y, width, height of the crop the mask was found in.
    public var cropBox: [Int]

    /// An annotation with the given fields.
    public init(segmentation: UncompressedRLE, area: Int, bbox: [Int], predictedIoU: Float, pointCoords: [Double],
                stabilityScore: Float, cropBox: [Int]) {
        self.segmentation = segmentation
        self.area = area
        self.bbox = bbox
        self.predictedIoU = predictedIoU
        self.pointCoords = pointCoords
        self.stabilityScore = stabilityScore
        self.cropBox = cropBox
    }
}

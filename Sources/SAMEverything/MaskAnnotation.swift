/// One mask the automatic generator keeps, with what upstream's generator records of it
/// (`SamAutomaticMaskGenerator.generate`'s annotations): the mask as run-length counts at the image's
/// size, its area, its box (XYWH), the model's predicted IoU, the prompt point, the stability score
/// and the crop it came from (XYWH).
/// ref: segment_anything/automatic_mask_generator.py SamAutomaticMaskGenerator.generate (curr_anns)
public struct MaskAnnotation: Sendable, Equatable {
    public var segmentation: UncompressedRLE
    public var area: Int
    /// x, y, width, height in pixels (upstream's `box_xyxy_to_xywh` of the inclusive XYXY box).
    public var bbox: [Int]
    public var predictedIoU: Float
    /// The grid point (x, y) in the image's pixels.
    public var pointCoords: [Double]
    public var stabilityScore: Float
    /// x, y, width, height of the crop the mask was found in.
    public var cropBox: [Int]

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

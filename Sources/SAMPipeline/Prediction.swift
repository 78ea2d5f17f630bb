import SAMImage
import SAMTensor

/// The answer to one prompt.
public struct Prediction: Sendable {
    /// All four low-res mask logits [1, 4, 4g, 4g], whatever the selection; clamped to -32...32 for
    /// SAM 2, as SAM2ImagePredictor returns them (the masks are made before the clamp, as there).
    public let lowResLogits: FloatTensor
    /// All four IoU predictions.
    public let iouPredictions: [Float]
    /// Indices (into the four) of the masks this prediction returns, by `MaskSelection`.
    public let selected: [Int]
    /// The selected masks at the original image size, thresholded at 0.
    public let masks: BinaryMasks
    /// The selected index with the highest IoU prediction.
    public let best: Int
    /// SAM 2's object-score logit (> 0: the object is there); nil for SAM.
    public let objectScoreLogit: Float?
    /// How long decoding (prompt encoder and mask decoder) and postprocessing took.
    public let stageTimings: StageTimings

    /// Seconds spent in each stage ("prompt_encoder+mask_decoder", "postprocess").
    @available(*, deprecated, message: "use stageTimings (StageTimings.decoding, .postprocessing); stageTimings.secondsByStage is this dictionary")
    public var timings: [String: Double] { stageTimings.secondsByStage }

    /// The IoU predictions of the selected masks, in `masks` order.
    public var scores: [Float] { selected.map { iouPredictions[$0] } }
    /// Where `best` stands among the selected masks: its position in `masks` and `scores`.
    public var bestPosition: Int { selected.firstIndex(of: best) ?? 0 }
    /// The best mask at the original image size, 0 or 1 per pixel, rows top to bottom.
    public var bestMask: ArraySlice<UInt8> { masks.mask(bestPosition) }
    /// The best mask's IoU prediction.
    public var bestScore: Float { iouPredictions[best] }
}

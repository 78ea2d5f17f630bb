import SAMImage
import SAMKernels
import SAMModel
import SAMTensor

/// The decoder's outputs before anything is upscaled: what a caller that filters masks first (the
/// automatic mask generator keeps a fraction of the thousands it decodes) needs, so that only the
/// masks it keeps are brought to the image's size.
public struct LowResolutionPrediction: Sendable, Equatable {
    /// All K mask logits [1, K, h, w], as the decoder made them (not clamped).
    public var logits: FloatTensor
    /// The K IoU predictions.
    public var iouPredictions: [Float]
    /// The masks a request of `selection` gets (multimask: 1...K-1; single: the family's rule).
    public var selected: [Int]
    /// The logits the family's predictor returns (SAM 2 clamps them to ±32), for a mask prompt.
    public var returnedLogits: FloatTensor
}

extension SegmentAnything {
    /// `predict`'s decoding without its postprocessing: `prompt` checked and mapped as `predict` does,
    /// decoded on the current image's state. Upscale the masks kept with `transform` at `inputSize` and
    /// `originalSize` (`InputTransform.masksWithStability`).
    /// ref: mobile_sam/predictor.py SamPredictor.predict_torch (return_logits); sam2_image_predictor.py _predict
    public func predictLowResolution(_ prompt: Prompt, selection: MaskSelection = .multimask) throws(PipelineError) -> LowResolutionPrediction {
        try segmenter.predictLowResolution(prompt, on: try currentImage(), selection: selection)
    }

    /// `predictLowResolution` for a batch of prompts on the current image: every prompt decoded on
    /// the one per-image decoder state (its prompt-independent work done once, at `setImage`), the
    /// prompts spread over the workers one per core, each decoded on its core alone. The same
    /// outputs, bit for bit, as one call per prompt, in the prompts' order; the first failing
    /// prompt's error (by position) is thrown.
    /// ref: automatic_mask_generator.py _process_batch — predictor.predict_torch on points_per_batch prompts
    public func predictLowResolution(_ prompts: [Prompt],
                                     selection: MaskSelection = .multimask) throws(PipelineError) -> [LowResolutionPrediction] {
        try segmenter.predictLowResolution(prompts, on: try currentImage(), selection: selection)
    }
}

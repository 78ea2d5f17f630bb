import SAMTensor

/// One family of mask decoders (SAM's, SAM 2's): how to build it from weights, and how prompts are
/// laid out for it. A model family names the one it runs (`ModelFamily.maskDecoderFamily`).
package protocol MaskDecoderFamily: SendableMetatype {
    /// "sam", "sam2".
    static var name: String { get }
    /// How the predictor of these models orders box corners and adds the padding point.
    static var promptLayout: PromptLayout { get }
    /// The decoder built strictly from the weights under `prefix` (sizes checked against `config`).
    static func makeDecoder(weights: WeightStore, prefix: String, config: SAMConfig) throws(WeightError) -> any PromptMaskDecoder
}

/// A runnable mask decoder: prompt tokens and image features in, every mask token's low-res
/// logits and scores out; what a single-mask request returns is the family's rule.
package protocol PromptMaskDecoder: Sendable {
    var path: String { get }
    /// C, the transformer width (= the prompt embedding width).
    var transformerDim: Int { get }
    /// 1 + num_multimask_outputs (4).
    var numMaskTokens: Int { get }
    /// The sparse token counts `predictMasks` accepts (points, box corners and padding).
    var sparseTokenRange: ClosedRange<Int> { get }
    /// Where the predictor clamps the low-res logits it returns (SAM 2: -32...32); nil: not clamped.
    var lowResolutionClamp: ClosedRange<Float>? { get }
    /// Whether `predictMasks` gives object-score logits (SAM 2).
    var predictsObjectScores: Bool { get }

    /// imagePE [1, C, g, g] (`PromptEncoder.denseImagePositionalEncoding()`), sparse [1, N, C],
    /// dense [1, C, g, g]: every mask token's logits [1, K, 4g, 4g] and scores [1, K].
    func predictMasks(features: ImageFeatures, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                      observer: ModuleObserver?) throws(PromptError) -> MaskPrediction
    /// The index (into all K) of the mask a single-mask request returns. `tokenCount` is the
    /// number of sparse tokens the decoder saw (points, box corners, padding point).
    func singleMaskIndex(_ prediction: MaskPrediction, tokenCount: Int) -> Int

    /// The decoder's prompt-independent work on `features` (with the no-mask `dense` embedding),
    /// done once per image and passed to `predictMasks(imageState:…)` for every prompt on it.
    func imageState(features: ImageFeatures, imagePE: FloatTensor, noMaskDense dense: FloatTensor) throws(PromptError)
        -> DecoderImageState
    /// `predictMasks(features:…)` on an image prepared by `imageState`: the same outputs, bit for bit.
    func predictMasks(imageState: DecoderImageState, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                      observer: ModuleObserver?) throws(PromptError) -> MaskPrediction

    /// The switches this decoder's predictor takes per request (`PredictorOptions.flags`), each with
    /// what it does; none for SAM's and SAM 2's.
    var predictorFlags: [String: String] { get }
    /// Every mask token's logits as the family's predictor would return that token's mask, before
    /// any clamp (SAM-HQ adds its HQ mask to each), with their scores: what selection, thresholding
    /// and the returned logits are made from. SAM's and SAM 2's: the decoded masks.
    func predictorMasks(_ prediction: MaskPrediction, options: PredictorOptions) -> MaskPrediction
    /// The masks (indices into all K) the family's predictor returns: 1...K-1 for multimask output,
    /// else the one `singleMaskIndex` picks (SAM-HQ's multimask output is the best of 1...K-1 alone).
    func predictorSelection(_ prediction: MaskPrediction, multimask: Bool, tokenCount: Int) -> [Int]
}

/// Switches a decoder family's predictor takes per request beyond multimask output (SAM-HQ's
/// `hq_token_only`), by the names upstream's predictor gives its arguments.
public struct PredictorOptions: Sendable, Hashable, Codable {
    /// The switches that are on, by upstream's argument names (`hq_token_only`).
    public var flags: Set<String>

    /// Options with `flags` on (none by default).
    public init(flags: Set<String> = []) {
        self.flags = flags
    }

    /// The flags `decoder` does not take, sorted; empty when it takes them all.
    package func unknownFlags(for decoder: any PromptMaskDecoder) -> [String] {
        flags.filter { decoder.predictorFlags[$0] == nil }.sorted()
    }
}

/// An image's features with whatever work the decoder family does once per image (SAM's decoder:
/// its first block's projections of the image tokens; `MaskDecoderImageState`). Apps call predict
/// many times per image; this work is the same for every prompt without a mask.
package struct DecoderImageState: Sendable {
    package let features: ImageFeatures
    /// The family's kept work; nil when it keeps none.
    let kept: (any Sendable)?

    package init(features: ImageFeatures) {
        self.features = features
        kept = nil
    }

    init(features: ImageFeatures, kept: any Sendable) {
        self.features = features
        self.kept = kept
    }
}

extension PromptMaskDecoder {
    /// A family that keeps no per-image work keeps the features alone.
    package func imageState(features: ImageFeatures, imagePE: FloatTensor, noMaskDense dense: FloatTensor) throws(PromptError)
        -> DecoderImageState {
        DecoderImageState(features: features)
    }

    package func predictMasks(imageState: DecoderImageState, imagePE: FloatTensor, sparse: FloatTensor, dense: FloatTensor,
                             observer: ModuleObserver?) throws(PromptError) -> MaskPrediction {
        try predictMasks(features: imageState.features, imagePE: imagePE, sparse: sparse, dense: dense, observer: observer)
    }
}

extension PromptMaskDecoder {
    package var predictorFlags: [String: String] { [:] }

    package func predictorMasks(_ prediction: MaskPrediction, options: PredictorOptions) -> MaskPrediction { prediction }

    /// ref: segment_anything/modeling/mask_decoder.py MaskDecoder.forward (mask_slice);
    /// sam2/modeling/sam/mask_decoder.py MaskDecoder.forward
    package func predictorSelection(_ prediction: MaskPrediction, multimask: Bool, tokenCount: Int) -> [Int] {
        multimask ? Array(1..<max(numMaskTokens, 2)) : [singleMaskIndex(prediction, tokenCount: tokenCount)]
    }
}

/// Every mask token's outputs for one prompt.
package struct MaskPrediction: Sendable, Equatable {
    /// Low-res mask logits [1, K, 4g, 4g], K = numMaskTokens.
    package var masks: FloatTensor
    /// IoU predictions [1, K].
    package var iou: FloatTensor
    /// SAM 2's object-score logit [1, 1] (is the object present); nil for SAM.
    package var objectScoreLogits: FloatTensor?
    /// The mask tokens' transformer outputs [K, C] (SAM 2: video mode's object pointers are made
    /// from them); nil where the decoder does not hand them out.
    package var maskTokenOutputs: FloatTensor?

    package init(masks: FloatTensor, iou: FloatTensor, objectScoreLogits: FloatTensor? = nil, maskTokenOutputs: FloatTensor? = nil) {
        self.masks = masks
        self.iou = iou
        self.objectScoreLogits = objectScoreLogits
        self.maskTokenOutputs = maskTokenOutputs
    }

    /// Masks and scores `indices` (into all K) only, the logits clamped to `range` when given (the
    /// object-score logit is kept).
    package func selecting(_ indices: [Int], clampedTo range: ClosedRange<Float>? = nil) -> MaskPrediction {
        let plane = masks.shape[2] * masks.shape[3]
        var data: [Float] = []
        data.reserveCapacity(indices.count * plane)
        for index in indices { data += masks.data[(index * plane)..<((index + 1) * plane)] }
        if let range { for i in data.indices { data[i] = min(max(data[i], range.lowerBound), range.upperBound) } }
        return MaskPrediction(masks: FloatTensor(shape: [1, indices.count, masks.shape[2], masks.shape[3]], data: data),
                              iou: FloatTensor(shape: [1, indices.count], data: indices.map { iou.data[$0] }),
                              objectScoreLogits: objectScoreLogits)
    }
}

/// How a predictor turns points and a box into the decoder's sparse tokens.
package struct PromptLayout: Sendable, Equatable {
    /// When the (0, 0) point labelled -1 is appended after a prompt's points.
    package enum PaddingPoint: Sendable, Equatable {
        /// With or without a box (SAM 2: its predictor passes the box as points, so the prompt
        /// encoder always pads).
        case always
        /// Only when there is no box (SAM: the prompt encoder pads when `boxes is None`).
        case withoutBox
        /// Never: the tokens are the prompt's points and box corners alone.
        case never
    }

    /// Box corners (labels 2, 3) before the points (SAM 2's predictor) or after them (SAM's).
    package var boxFirst: Bool
    package var paddingPoint: PaddingPoint

    package init(boxFirst: Bool, paddingPoint: PaddingPoint) {
        self.boxFirst = boxFirst
        self.paddingPoint = paddingPoint
    }

    /// ref: segment_anything/predictor.py predict_torch; prompt_encoder.py forward (pad=(boxes is None))
    package static let sam = PromptLayout(boxFirst: false, paddingPoint: .withoutBox)
    /// ref: sam2/sam2_image_predictor.py SAM2ImagePredictor._predict (concat_points, boxes=None)
    package static let sam2 = PromptLayout(boxFirst: true, paddingPoint: .always)

    /// Whether the padding point is appended to a prompt with or without a box.
    package func appendsPaddingPoint(hasBox: Bool) -> Bool {
        switch paddingPoint {
        case .always: true
        case .withoutBox: !hasBox
        case .never: false
        }
    }
}

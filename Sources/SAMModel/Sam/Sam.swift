import SAMKernels
import SAMTensor

/// The whole model, as PyTorch's `Sam` holds it: `image_encoder`, `prompt_encoder`, `mask_decoder`
/// (SAM 2's `sam_prompt_encoder` and `sam_mask_decoder` take the same canonical names).
/// A component is present when the weights hold it; asking a missing one to run is a `SamError`,
/// so an encoder-only or decoder-only file still loads.
public struct Sam: Sendable {
    package static let imageEncoderKey = "image_encoder"
    package static let components = [imageEncoderKey, "prompt_encoder", "mask_decoder", videoKey]
    /// SAM 2's video modules (`SAM2VideoModules.weightNames`), one component in a `.samw`.
    package static let videoKey = "video"

    /// The component a stored tensor belongs to: its top-level module, except the weights SAM 2's
    /// image encoder runs in image mode although upstream keeps them elsewhere
    /// (`mask_decoder.conv_s0`/`conv_s1`, `no_mem_embed`): an encoder-only file holds them.
    package static func component(ofTensor name: String) -> String? {
        if name == "no_mem_embed" || SAM2ImageEncoder.highResolutionProjections.contains(where: { name.hasPrefix($0 + ".") }) {
            return imageEncoderKey
        }
        if SAM2VideoModules.owns(name) { return videoKey }
        return components.first { name.hasPrefix($0 + ".") }
    }

    /// The configuration the model was built from (a `.samw` stores it in its metadata).
    public let config: SAMConfig
    /// The image encoder the model family builds (`ModelFamily.makeImageEncoder`; the configured encoder family's).
    package let imageEncoder: (any ImageEncoder)?
    package let promptEncoder: PromptEncoder?
    /// The mask decoder of the model family's decoder family (`ModelFamily.maskDecoderFamily`).
    package let maskDecoder: (any PromptMaskDecoder)?
    /// SAM 2's video modules, when the weights hold them (`config.videoMode` sizes them).
    package let video: SAM2VideoModules?

    /// Builds every component whose weights are present, then requires that every supplied weight was used.
    /// `densePositionalEncoding` ([1, C, g, g], e.g. `image_points_embeddings.bin`) replaces the one computed
    /// from `prompt_encoder.pe_layer`.
    package init(weights: WeightStore, config: SAMConfig = .mobileSAM, densePositionalEncoding: FloatTensor? = nil) throws(WeightError) {
        guard let family = config.family, let encoderFamily = config.imageEncoder.familyType else {
            throw .invalid(key: Self.imageEncoderKey, reason: "unknown model family '\(config.modelFamily)' or image encoder family "
                           + "'\(config.imageEncoder.family)'", source: weights.source)
        }
        let decoderFamily = family.maskDecoderFamily
        // Keys the encoder takes from other components (SAM 2's conv_s0/conv_s1) do not make them present.
        func has(_ component: String) -> Bool {
            weights.keys.contains { $0.hasPrefix(component + ".") && !encoderFamily.takesOutsideEncoder($0) }
        }
        self.config = config
        // The image encoder on one core, the prompt encoder and mask decoder on another: a load is
        // mostly copying weights into fresh pages (page faults), which the cores do side by side.
        var encoder: Result<(any ImageEncoder)?, WeightError> = .success(nil)
        var decoders: Result<(PromptEncoder?, (any PromptMaskDecoder)?), WeightError> = .success((nil, nil))
        Kernels.parallelFor(2) { part in
            if part == 0 {
                encoder = Result { () throws(WeightError) in
                    has(Self.imageEncoderKey) ? try family.makeImageEncoder(weights: weights, prefix: Self.imageEncoderKey, config: config) : nil
                }
            } else {
                decoders = Result { () throws(WeightError) in
                    (has("prompt_encoder")
                        ? try PromptEncoder(weights: weights, config: config, densePositionalEncoding: densePositionalEncoding) : nil,
                     has("mask_decoder") ? try decoderFamily.makeDecoder(weights: weights, prefix: "mask_decoder", config: config) : nil)
                }
            }
        }
        imageEncoder = try encoder.get()
        (promptEncoder, maskDecoder) = try decoders.get()
        if weights.keys.contains(where: SAM2VideoModules.owns) {
            // A configuration without a video section (one written for image mode) takes its sizes from the weights.
            let shapes = Dictionary(uniqueKeysWithValues: weights.keys.compactMap { key in weights.shape(of: key).map { (key, $0) } })
            let videoConfig = config.videoMode ?? SAM2VideoConfig.inferred(fromShapes: shapes)
            video = try SAM2VideoModules(weights: weights, config: videoConfig, hiddenDim: config.maskDecoder.transformerDim)
        } else {
            video = nil
        }
        try weights.finish()
    }

    /// [1, 3, S, S] normalised image -> the decoder's image features (the embedding [1, C, g, g]
    /// and, for SAM 2, its high-resolution maps).
    package func encodeFeatures(_ image: FloatTensor, observer: ModuleObserver? = nil) throws(SamError) -> ImageFeatures {
        guard let imageEncoder else { throw .missingComponent(Self.imageEncoderKey) }
        do { return try imageEncoder.features(image, observer: observer) } catch { throw .imageEncoder(error) }
    }

    /// [1, 3, S, S] normalised, padded image -> image embeddings [1, C, g, g]: the features'
    /// embedding (all a SAM or MobileSAM decoder takes; SAM 2's also needs `encodeFeatures`' maps).
    package func encodeImage(_ image: FloatTensor, observer: ModuleObserver? = nil) throws(SamError) -> FloatTensor {
        try encodeFeatures(image, observer: observer).embedding
    }

    /// How this model's predictor lays out prompts (box corners first or last, padding point).
    package var promptLayout: PromptLayout { MaskDecoderFamilies.family(for: config)?.promptLayout ?? .sam }

    /// The prompt encoder and mask decoder as the official ONNX decoder (`SamOnnxModel`) runs them,
    /// before its upscaling: points in the input-image frame with labels (-1, 0, 1, 2, 3); a (0,0,-1)
    /// padding point appended when `appendPaddingPoint`; the mask input mixed in by `hasMaskInput`.
    /// Returns all four low-res mask logits [1, 4, 4g, 4g] and IoU scores [1, 4].
    /// ref: mobile_sam/utils/onnx.py SamOnnxModel.forward
    package func decode(imageEmbeddings: FloatTensor, points: FloatTensor, labels: FloatTensor, appendPaddingPoint: Bool,
                       maskInput: FloatTensor?, hasMaskInput: Float,
                       observer: ModuleObserver? = nil) throws(SamError) -> (masks: FloatTensor, iou: FloatTensor) {
        let prediction = try decode(features: ImageFeatures(embedding: imageEmbeddings), points: points, labels: labels,
                                    appendPaddingPoint: appendPaddingPoint, maskInput: maskInput, hasMaskInput: hasMaskInput,
                                    observer: observer)
        return (prediction.masks, prediction.iou)
    }

    /// `decode(imageEmbeddings:…)` on the image features of any family: all K mask logits, their
    /// scores and (SAM 2) the object-score logit.
    package func decode(features: ImageFeatures, points: FloatTensor, labels: FloatTensor, appendPaddingPoint: Bool,
                       maskInput: FloatTensor?, hasMaskInput: Float,
                       observer: ModuleObserver? = nil) throws(SamError) -> MaskPrediction {
        // A state that keeps no per-image work: every family decodes it from the features alone.
        try decode(imageState: DecoderImageState(features: features), points: points, labels: labels,
                   appendPaddingPoint: appendPaddingPoint, maskInput: maskInput, hasMaskInput: hasMaskInput, observer: observer)
    }

    /// The decoder's prompt-independent work on `features`, to pass to `decode(imageState:...)` for
    /// every prompt on that image (see `DecoderImageState`).
    package func decoderImageState(features: ImageFeatures) throws(SamError) -> DecoderImageState {
        guard let promptEncoder else { throw .missingComponent("prompt_encoder") }
        guard let maskDecoder else { throw .missingComponent("mask_decoder") }
        do {
            return try maskDecoder.imageState(features: features, imagePE: promptEncoder.denseImagePositionalEncoding(),
                                              noMaskDense: promptEncoder.denseEmbedding(maskInput: nil, hasMaskInput: 0))
        } catch {
            throw .prompt(error)
        }
    }

    /// `decode(features:…)` on an image whose prompt-independent decoder work was done once: the same
    /// outputs, bit for bit.
    package func decode(imageState: DecoderImageState, points: FloatTensor, labels: FloatTensor, appendPaddingPoint: Bool,
                       maskInput: FloatTensor?, hasMaskInput: Float,
                       observer: ModuleObserver? = nil) throws(SamError) -> MaskPrediction {
        guard let promptEncoder else { throw .missingComponent("prompt_encoder") }
        guard let maskDecoder else { throw .missingComponent("mask_decoder") }
        do {
            let sparse = try promptEncoder.embedPoints(coords: points, labels: labels,
                                                       appendPaddingPoint: appendPaddingPoint, observer: observer)
            let dense = try promptEncoder.denseEmbedding(maskInput: maskInput, hasMaskInput: hasMaskInput, observer: observer)
            return try maskDecoder.predictMasks(imageState: imageState,
                                                imagePE: promptEncoder.denseImagePositionalEncoding(observer: observer),
                                                sparse: sparse, dense: dense, observer: observer)
        } catch {
            throw .prompt(error)
        }
    }

    /// Removes a trailing (0, 0) point labelled -1 — the padding point callers of the official decoder
    /// append — so the point-count range applies to the user's points. Returns whether one was removed.
    package static func removeOfficialPaddingPoint(points: inout FloatTensor, labels: inout FloatTensor) -> Bool {
        let count = labels.count
        guard count > 1, points.count == 2 * count, labels.data[count - 1] == -1,
              points.data[2 * count - 2] == 0, points.data[2 * count - 1] == 0 else { return false }
        points = FloatTensor(shape: [1, count - 1, 2], data: Array(points.data.prefix(2 * (count - 1))))
        labels = FloatTensor(shape: [1, count - 1], data: Array(labels.data.prefix(count - 1)))
        return true
    }
}

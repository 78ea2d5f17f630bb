import SAMKernels
import SAMTensor

/// The whole model, as PyTorch's `Sam` holds it: `image_encoder`, `prompt_encoder`, `mask_decoder`.
/// A component is present when the weights hold it; asking a missing one to run is a `SamError`,
/// so an encoder-only or decoder-only file still loads.
public struct Sam: Sendable {
    public static let imageEncoderKey = "image_encoder"
    public static let components = [imageEncoderKey, "prompt_encoder", "mask_decoder"]

    public let config: SAMConfig
    /// The image encoder of the configured family (`config.imageEncoder.family`).
    public let imageEncoder: (any ImageEncoder)?
    public let promptEncoder: PromptEncoder?
    public let maskDecoder: MaskDecoder?

    /// Builds every component whose weights are present, then requires that every supplied weight was used.
    /// `densePositionalEncoding` ([1, C, g, g], e.g. `image_points_embeddings.bin`) replaces the one computed
    /// from `prompt_encoder.pe_layer`.
    public init(weights: WeightStore, config: SAMConfig = .mobileSAM, densePositionalEncoding: FloatTensor? = nil) throws(WeightError) {
        func has(_ component: String) -> Bool { weights.keys.contains { $0.hasPrefix(component + ".") } }
        self.config = config
        // The image encoder on one core, the prompt encoder and mask decoder on another: a load is
        // mostly copying weights into fresh pages (page faults), which the cores do side by side.
        var encoder: Result<(any ImageEncoder)?, WeightError> = .success(nil)
        var decoders: Result<(PromptEncoder?, MaskDecoder?), WeightError> = .success((nil, nil))
        Kernels.parallelFor(2) { part in
            if part == 0 {
                encoder = Result { () throws(WeightError) in
                    has(Self.imageEncoderKey) ? try config.imageEncoder.makeEncoder(weights: weights, prefix: Self.imageEncoderKey) : nil
                }
            } else {
                decoders = Result { () throws(WeightError) in
                    (has("prompt_encoder")
                        ? try PromptEncoder(weights: weights, config: config, densePositionalEncoding: densePositionalEncoding) : nil,
                     has("mask_decoder") ? try MaskDecoder(weights: weights, config: config) : nil)
                }
            }
        }
        imageEncoder = try encoder.get()
        (promptEncoder, maskDecoder) = try decoders.get()
        try weights.finish()
    }

    /// [1, 3, S, S] normalised, padded image -> image embeddings [1, C, g, g].
    public func encodeImage(_ image: FloatTensor, observer: ModuleObserver? = nil) throws(SamError) -> FloatTensor {
        guard let imageEncoder else { throw .missingComponent(Self.imageEncoderKey) }
        do { return try imageEncoder(image, observer: observer) } catch { throw .imageEncoder(error) }
    }

    /// The prompt encoder and mask decoder as the official ONNX decoder (`SamOnnxModel`) runs them,
    /// before its upscaling: points in the input-image frame with labels (-1, 0, 1, 2, 3); a (0,0,-1)
    /// padding point appended when `appendPaddingPoint`; the mask input mixed in by `hasMaskInput`.
    /// Returns all four low-res mask logits [1, 4, 4g, 4g] and IoU scores [1, 4].
    /// ref: mobile_sam/utils/onnx.py SamOnnxModel.forward
    public func decode(imageEmbeddings: FloatTensor, points: FloatTensor, labels: FloatTensor, appendPaddingPoint: Bool,
                       maskInput: FloatTensor?, hasMaskInput: Float,
                       observer: ModuleObserver? = nil) throws(SamError) -> (masks: FloatTensor, iou: FloatTensor) {
        guard let promptEncoder else { throw .missingComponent("prompt_encoder") }
        guard let maskDecoder else { throw .missingComponent("mask_decoder") }
        do {
            let sparse = try promptEncoder.embedPoints(coords: points, labels: labels,
                                                       appendPaddingPoint: appendPaddingPoint, observer: observer)
            let dense = try promptEncoder.denseEmbedding(maskInput: maskInput, hasMaskInput: hasMaskInput, observer: observer)
            return try maskDecoder.predictMasks(imageEmbeddings: imageEmbeddings,
                                                imagePE: promptEncoder.denseImagePositionalEncoding(observer: observer),
                                                sparse: sparse, dense: dense, observer: observer)
        } catch {
            throw .prompt(error)
        }
    }

    /// The decoder's prompt-independent work on `imageEmbeddings`, to pass to `decode(imageState:...)`
    /// for every prompt on that image (see `MaskDecoderImageState`).
    public func decoderImageState(imageEmbeddings: FloatTensor) throws(SamError) -> MaskDecoderImageState {
        guard let promptEncoder else { throw .missingComponent("prompt_encoder") }
        guard let maskDecoder else { throw .missingComponent("mask_decoder") }
        do {
            return try maskDecoder.imageState(imageEmbeddings: imageEmbeddings, imagePE: promptEncoder.denseImagePositionalEncoding(),
                                              noMaskDense: promptEncoder.denseEmbedding(maskInput: nil, hasMaskInput: 0))
        } catch {
            throw .prompt(error)
        }
    }

    /// `decode` on an image whose prompt-independent decoder work was done once: the same outputs, bit for bit.
    public func decode(imageState: MaskDecoderImageState, points: FloatTensor, labels: FloatTensor, appendPaddingPoint: Bool,
                       maskInput: FloatTensor?, hasMaskInput: Float,
                       observer: ModuleObserver? = nil) throws(SamError) -> (masks: FloatTensor, iou: FloatTensor) {
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
    public static func removeOfficialPaddingPoint(points: inout FloatTensor, labels: inout FloatTensor) -> Bool {
        let count = labels.count
        guard count > 1, points.count == 2 * count, labels.data[count - 1] == -1,
              points.data[2 * count - 2] == 0, points.data[2 * count - 1] == 0 else { return false }
        points = FloatTensor(shape: [1, count - 1, 2], data: Array(points.data.prefix(2 * (count - 1))))
        labels = FloatTensor(shape: [1, count - 1], data: Array(labels.data.prefix(count - 1)))
        return true
    }
}

import SAMImage
import SAMKernels
import SAMModel
import SAMTensor

/// SAM 2's per-frame tracking step for one object: the SAM heads with object pointers, a mask
/// prompt taken as the output, the frame's features conditioned on the object's memories, and a new
/// memory from a prediction. `VideoTracker` runs it with SAM2VideoPredictor's bookkeeping.
/// ref: sam2/modeling/sam2_base.py SAM2Base (track_step, _track_step, _forward_sam_heads,
/// _use_mask_as_output, _prepare_memory_conditioned_features, _encode_new_memory)
public struct TrackingModel: Sendable {
    /// The SAM 2 model tracked with (image encoder, prompt encoder, mask decoder and video modules).
    public let sam: Sam
    package let encoder: SAM2ImageEncoder
    package let video: SAM2VideoModules
    package let promptEncoder: PromptEncoder
    package let decoder: SAM2MaskDecoder
    /// S, the square input side; low-resolution masks are S/4 a side.
    public let imageSize: Int
    /// The coarsest map's position encoding and the memories', as tokens [g*g, C] and [g*g, mem_dim]:
    /// the same for every frame, so made once.
    let currentPositionTokens: FloatTensor
    let memoryPositionTokens: FloatTensor
    /// Memory attention's rotary encoding of the grid, likewise.
    let memoryRotaryEncoding: AxialRotaryEncoding

    package var config: SAM2VideoConfig { video.config }
    /// Background holes up to this area in the low-resolution masks become foreground (0: none);
    /// the model's `fillHoleArea` unless changed.
    public var fillHoleArea: Int
    /// A correction on a tracked frame makes it a conditioning frame; the model's setting unless changed.
    public var addCorrectionsAsConditioning: Bool
    /// At each pixel of a frame's output logits only the highest-scoring object keeps its logit, the
    /// others are clamped to at most -10 (`non_overlap_masks`); the model's setting unless changed.
    /// The memories are made from the unconstrained masks, as upstream makes them.
    public var nonOverlappingMasks: Bool
    /// S/4, the side of the low-resolution mask logits (`TrackedFrame.lowResolutionLogits`).
    public var lowResolutionSide: Int { imageSize / 4 }
    package var grid: Int { encoder.config.embeddingGridSize }

    /// The tracking step of a loaded SAM 2 model (`LoadedModel.sam`); throws
    /// `TrackingError.unsupportedModel` for a model without video modules or not SAM 2.
    public init(sam: Sam) throws(TrackingError) {
        guard let video = sam.video else {
            throw .unsupportedModel("the model has no video modules (memory attention, memory encoder): convert the SAM 2 checkpoint "
                         + "(.pt, .safetensors or .h5) with this toolkit's samconvert to keep them")
        }
        guard let encoder = sam.imageEncoder as? SAM2ImageEncoder, let decoder = sam.maskDecoder as? SAM2MaskDecoder,
              let promptEncoder = sam.promptEncoder else {
            throw .unsupportedModel("tracking needs SAM 2's image encoder, prompt encoder and mask decoder; the model lacks one")
        }
        let hiera = encoder.config
        let grid = hiera.embeddingGridSize
        guard grid * video.config.maskDownsamplerTotalStride == hiera.imageSize else {
            throw .unsupportedModel("the memory encoder downsamples masks by \(video.config.maskDownsamplerTotalStride), which does not take "
                         + "the \(hiera.imageSize)-pixel input to the \(grid)x\(grid) feature grid")
        }
        guard hiera.imageSize % 4 == 0, decoder.options.highResolutionFeatures == hiera.highResolutionFeatures,
              encoder.noMemoryEmbedding != nil else {
            throw .unsupportedModel("the model's image size or features do not fit video mode")
        }
        self.sam = sam
        self.encoder = encoder
        self.video = video
        self.promptEncoder = promptEncoder
        self.decoder = decoder
        imageSize = hiera.imageSize
        let tokens = grid * grid
        currentPositionTokens = Kernels.nchwToTokens(PositionEmbeddingSine(channels: video.hiddenDim)(batch: 1, height: grid, width: grid))
            .reshaped([tokens, video.hiddenDim])
        memoryPositionTokens = Kernels.nchwToTokens(video.memoryEncoder.positionEncoding(batch: 1, height: grid, width: grid))
            .reshaped([tokens, video.config.memoryDim])
        memoryRotaryEncoding = video.memoryAttention.rotaryEncoding(width: grid, height: grid)
        fillHoleArea = video.config.fillHoleArea
        addCorrectionsAsConditioning = video.config.addCorrectionsAsConditioning
        nonOverlappingMasks = video.config.nonOverlappingMasks ?? false
    }

    /// A normalised frame [1, 3, S, S] -> its tracking features.
    package func features(_ image: FloatTensor) throws(TrackingError) -> TrackingFeatures {
        let maps: ImageFeatures
        do { maps = try encoder.trackingFeatures(image) } catch { throw .frames("image encoder: \(error)") }
        return TrackingFeatures(embedding: maps.embedding, highResolution: maps.highResolution)
    }

    /// The frame's tokens after memory attention's first self-attention, which every object tracked
    /// on the frame shares (`MemoryAttention.firstSelfAttended`).
    func firstSelfAttended(_ features: TrackingFeatures) -> FloatTensor {
        let tokens = features.grid * features.grid
        return video.memoryAttention.firstSelfAttended(current: Kernels.nchwToTokens(features.embedding).reshaped([tokens, features.channels]),
                                                       currentPosition: currentPositionTokens, rope: memoryRotaryEncoding)
    }

    /// What the SAM heads give (`_forward_sam_heads`), the best mask chosen.
    struct HeadsOutput {
        var lowResolution: FloatTensor
        var highResolution: FloatTensor
        var objectScore: Float
        var pointer: FloatTensor
    }

    /// One point in the model's input frame (box corners are labels 2 and 3).
    package struct ModelPoint: Sendable, Equatable {
        package var x: Float, y: Float, label: Float
        package init(x: Float, y: Float, label: Float) { (self.x, self.y, self.label) = (x, y, label) }
    }

    /// ref: _forward_sam_heads
    func samHeads(_ embedding: FloatTensor, highResolution: [FloatTensor], points: [ModelPoint]?, maskInput: FloatTensor?,
                  multimask: Bool) throws(TrackingError) -> HeadsOutput {
        // ref: no points: sam_point_coords = zeros(B, 1, 2), sam_point_labels = -ones(B, 1)
        let given = points ?? [ModelPoint(x: 0, y: 0, label: -1)]
        let coords = FloatTensor(shape: [1, given.count, 2], data: given.flatMap { [$0.x, $0.y] })
        let labels = FloatTensor(shape: [1, given.count], data: given.map(\.label))
        let prediction: MaskPrediction
        do {
            // ref: sam_prompt_encoder(points=..., boxes=None, masks=...): pad=(boxes is None) appends a padding point
            let sparse = try promptEncoder.embedPoints(coords: coords, labels: labels, appendPaddingPoint: true)
            let dense = try promptEncoder.denseEmbedding(maskInput: maskInput, hasMaskInput: maskInput == nil ? 0 : 1)
            prediction = try decoder.predictMasks(features: ImageFeatures(embedding: embedding, highResolution: highResolution),
                                                  imagePE: promptEncoder.denseImagePositionalEncoding(), sparse: sparse, dense: dense,
                                                  observer: nil)
        } catch {
            throw .invalidRequest("mask decoder: \(error)")
        }
        guard let tokens = prediction.maskTokenOutputs else { throw .unsupportedModel("the mask decoder gave no mask tokens") }
        let c = tokens.shape[1], plane = prediction.masks.shape[2] * prediction.masks.shape[3]
        // ref: MaskDecoder.forward — multimask: masks[:, 1:]; else the stability fallback; tokens 1: or 0:1
        let candidates = multimask ? Array(1..<decoder.numMaskTokens)
            : [decoder.singleMaskIndex(prediction, tokenCount: given.count + 1)]
        let tokenIndices = multimask && config.useMultimaskTokenForObjectPointer ? candidates : [0]
        // ref: _forward_sam_heads — best_iou_inds = argmax(ious) (the first of equal maxima)
        var best = 0
        for (position, index) in candidates.enumerated() where prediction.iou.data[index] > prediction.iou.data[candidates[best]] {
            best = position
        }
        let maskIndex = candidates[best]
        let tokenIndex = tokenIndices.count > 1 ? tokenIndices[best] : tokenIndices[0]
        let score = prediction.objectScoreLogits?.data[0] ?? 10
        let present = score > 0
        var low = Array(prediction.masks.data[(maskIndex * plane)..<((maskIndex + 1) * plane)])
        // ref: low_res_multimasks = torch.where(is_obj_appearing, low_res_multimasks, NO_OBJ_SCORE)
        if prediction.objectScoreLogits != nil, !present { low = [Float](repeating: -1024, count: plane) }
        let side = prediction.masks.shape[2]
        let lowResolution = FloatTensor(shape: [1, 1, side, side], data: low)
        let token = FloatTensor(shape: [1, c], data: Array(tokens.data[(tokenIndex * c)..<((tokenIndex + 1) * c)]))
        let pointer = video.objectPointers.pointer(token: token, objectPresent: present,
                                                   fixedNoObjectPointer: config.fixedNoObjectPointer)
        return HeadsOutput(lowResolution: lowResolution, highResolution: try upsampled(lowResolution), objectScore: score,
                           pointer: pointer)
    }

    /// [1, 1, S/4, S/4] -> [1, 1, S, S], bilinear (align_corners=False), as torch.
    func upsampled(_ lowResolution: FloatTensor) throws(TrackingError) -> FloatTensor {
        let side = lowResolution.shape[2]
        do {
            return try MaskPostprocessor(imageSize: side).upscale(lowResolution, inputSize: ImageSize(height: side, width: side),
                                                                  originalSize: ImageSize(height: imageSize, width: imageSize))
        } catch {
            throw .invalidRequest("upsampling a mask: \(error)")
        }
    }

    /// A binary mask at the input size [S * S] (0 or 1) taken as the output.
    /// ref: _use_mask_as_output
    func maskAsOutput(_ embedding: FloatTensor, highResolution: [FloatTensor], mask: [Float]) throws(TrackingError) -> HeadsOutput {
        let s = imageSize, side = lowResolutionSide
        // ref: out_scale, out_bias = 20.0, -10.0; high_res_masks = mask * out_scale + out_bias
        let high = mask.map { $0 * 20 + -10 }
        let low = AntialiasedBilinear.resize(high, count: 1, height: s, width: s, toHeight: side, width: side)
        let present = mask.contains { $0 > 0 }
        var pointer: FloatTensor
        if config.useObjectPointers {
            let downsampled = video.maskDownsample(FloatTensor(shape: [1, 1, s, s], data: mask))
            pointer = try samHeads(embedding, highResolution: highResolution, points: nil, maskInput: downsampled, multimask: false).pointer
        } else {
            pointer = FloatTensor(zeros: [1, video.hiddenDim])
        }
        video.objectPointers.applyPresence(&pointer, objectPresent: present, fixedNoObjectPointer: config.fixedNoObjectPointer)
        return HeadsOutput(lowResolution: FloatTensor(shape: [1, 1, side, side], data: low),
                           highResolution: FloatTensor(shape: [1, 1, s, s], data: high),
                           objectScore: present ? 10 : -10, pointer: pointer)
    }

    /// Whether the heads give three masks. ref: _use_multimask
    func usesMultimask(initialConditioning: Bool, pointCount: Int) -> Bool {
        config.multimaskOutputInSAM && (initialConditioning || config.multimaskOutputForTracking)
            && (config.multimaskMinPoints...config.multimaskMaxPoints).contains(pointCount)
    }

    /// The memory of a prediction: its high-resolution logits [1, 1, S, S] binarised (clicks) or
    /// squashed by a sigmoid, scaled and shifted, encoded with the frame's features; the no-object
    /// embedding added where the object is absent; rounded to bfloat16 as the predictor stores it.
    /// ref: _encode_new_memory; sam2_video_predictor.py _run_single_frame_inference (maskmem_features.to(bfloat16))
    func encodeMemory(_ features: TrackingFeatures, highResolution: FloatTensor, objectScore: Float, fromPoints: Bool) -> FloatTensor {
        let binarize = config.binarizeMaskFromPoints && fromPoints
        var mask = highResolution
        let (scale, bias) = (config.memorySigmoidScale, config.memorySigmoidBias)
        if binarize {
            mask.data = mask.data.map { logit in
                var value: Float = logit > 0 ? 1 : 0
                value *= scale
                value += bias
                return value
            }
        } else {
            Kernels.scaledSigmoid(&mask, scale: scale, bias: bias)
        }
        var memory = video.memoryEncoder(features: features.embedding, mask: mask)
        if let spatial = video.noObjectEmbedSpatial, objectScore <= 0 {
            // ref: maskmem_features += (1 - is_obj_appearing) * no_obj_embed_spatial (a present object's adds zeros)
            Kernels.addBias(&memory, channelBias: spatial.reshaped([spatial.count]))
        }
        for i in memory.data.indices { memory.data[i] = memory.data[i].roundedToBFloat16 }
        return memory
    }
}

import SAMImage
import SAMKernels
import SAMModel
import SAMTensor

/// SAM 2 video tracking with SAM2VideoPredictor's semantics: prompts (points, a box, a mask) for any
/// object on any frame, then propagation through the clip, forward or in reverse. A prompt on a frame
/// its object was not tracked on makes it a conditioning frame, predicted without memory; a
/// correction on a tracked frame starts from that frame's previous logits and its memories.
/// Objects are independent: each has its own memories, and a frame's image features are computed
/// once for all of them.
///
/// Frames are read one at a time; only the last frame's features and what later steps can attend
/// to are kept (conditioning frames, the last `max(numMaskmem - 1, maxObjectPointers - 1)` tracked
/// frames in the direction of travel, and frames near `retainedFrames`), so memory does not grow
/// with the clip. A caller that will correct tracked frames later names them in `retainedFrames`
/// before propagating (samtrack does, from its later rounds' prompts).
/// ref: sam2/sam2_video_predictor.py SAM2VideoPredictor
public struct VideoTracker: Sendable {
    /// The model's tracking step.
    public let model: TrackingModel
    /// The clip, read one frame at a time as tracking reaches it.
    public let frames: any VideoFrameSource
    /// Frames whose tracked outputs (and those they attend to) survive propagation.
    public var retainedFrames: Set<Int> = []
    /// Sees intermediate values by frame, object id and upstream's name (`vision_features`,
    /// `pix_feat_with_mem`, `obj_ptr`, `object_score_logits`, `maskmem_features`,
    /// `preflight_maskmem_features`), as the reference exporter dumps them.
    package var observer: (@Sendable (_ frame: Int, _ object: Int, _ name: String, _ value: FloatTensor) -> Void)?

    /// Per object, in the order objects were first prompted (upstream's obj_idx).
    struct Object {
        let id: Int
        var bank = ObjectMemoryBank()
        /// Prompt outputs not yet consolidated by propagation (`temp_output_dict_per_obj`), in order.
        var pendingConditioning: [(frame: Int, output: ObjectFrameOutput)] = []
        var pendingNonConditioning: [(frame: Int, output: ObjectFrameOutput)] = []
        /// Frames tracked, and whether in reverse (`frames_tracked_per_obj`).
        var tracked: [Int: Bool] = [:]
    }

    var objects: [Object] = []
    private var cachedFeatures: (frame: Int, features: TrackingFeatures)?

    /// A tracker over `frames` with no objects yet; throws `TrackingError.frames` for a clip without frames.
    public init(model: TrackingModel, frames: any VideoFrameSource) throws(TrackingError) {
        guard frames.frameCount > 0 else { throw .frames("the clip has no frames") }
        self.model = model
        self.frames = frames
    }

    /// The IDs of the objects prompted so far, in the order they were first prompted.
    public var objectIDs: [Int] { objects.map(\.id) }
    /// How many frames the clip has.
    public var frameCount: Int { frames.frameCount }

    // MARK: Prompts

    /// Points (frame pixels; labels 1 foreground, 0 background) and/or a box for `object` on
    /// `frame`, replacing that object's earlier prompt on that frame (`clear_old_points=True`).
    /// Returns the object's low-resolution logits on the frame.
    /// ref: add_new_points_or_box (normalize_coords=True, clear_old_points=True)
    @discardableResult
    public mutating func addPoints(frame: Int, object id: Int, points: [Prompt.Point], box: Prompt.Box? = nil) throws(TrackingError) -> ObjectFrameOutput {
        try checkFrame(frame, object: id)
        guard !points.isEmpty || box != nil else { throw .invalidPrompt(frame: frame, object: id, "no points and no box") }
        let size = frames.frameSize, s = Float(model.imageSize)
        // ref: points / tensor([video_W, video_H]) * image_size, in float32; the box as points labelled 2 and 3 first
        func scaled(_ x: Float, _ y: Float, _ label: Float) throws(TrackingError) -> TrackingModel.ModelPoint {
            guard x.isFinite, y.isFinite else { throw .invalidPrompt(frame: frame, object: id, "a coordinate is not finite") }
            return TrackingModel.ModelPoint(x: x / Float(size.width) * s, y: y / Float(size.height) * s, label: label)
        }
        var modelPoints: [TrackingModel.ModelPoint] = []
        if let box {
            modelPoints.append(try scaled(box.x0, box.y0, 2))
            modelPoints.append(try scaled(box.x1, box.y1, 3))
        }
        for point in points {
            guard point.label == 0 || point.label == 1 else {
                throw .invalidPrompt(frame: frame, object: id, "label \(point.label) is neither 1 (foreground) nor 0 (background)")
            }
            modelPoints.append(try scaled(point.x, point.y, Float(point.label)))
        }
        return try addPrompt(frame: frame, object: id, points: modelPoints, mask: nil)
    }

    /// A binary mask (row-major, the frame's size; nonzero is the object) for `object` on `frame`.
    /// ref: add_new_mask
    @discardableResult
    public mutating func addMask(frame: Int, object id: Int, mask: [UInt8]) throws(TrackingError) -> ObjectFrameOutput {
        try checkFrame(frame, object: id)
        let size = frames.frameSize, s = model.imageSize
        guard mask.count == size.width * size.height else {
            throw .invalidPrompt(frame: frame, object: id, "the mask has \(mask.count) pixels, the frame \(size.width)x\(size.height)")
        }
        var input = mask.map { $0 != 0 ? Float(1) : 0 }
        if size.height != s || size.width != s {
            // ref: F.interpolate(mask, (S, S), mode="bilinear", antialias=True) >= 0.5
            input = AntialiasedBilinear.resize(input, count: 1, height: size.height, width: size.width, toHeight: s, width: s)
                .map { $0 >= 0.5 ? 1 : 0 }
        }
        return try addPrompt(frame: frame, object: id, points: nil, mask: input)
    }

    private func checkFrame(_ frame: Int, object id: Int) throws(TrackingError) {
        guard (0..<frameCount).contains(frame) else {
            throw .invalidPrompt(frame: frame, object: id, "the clip has frames 0...\(frameCount - 1)")
        }
    }

    private mutating func objectIndex(_ id: Int) -> Int {
        if let index = objects.firstIndex(where: { $0.id == id }) { return index }
        objects.append(Object(id: id))
        return objects.count - 1
    }

    private mutating func addPrompt(frame: Int, object id: Int, points: [TrackingModel.ModelPoint]?, mask: [Float]?) throws(TrackingError) -> ObjectFrameOutput {
        let index = objectIndex(id)
        var object = objects[index]
        let initial = object.tracked[frame] == nil
        let reverse = object.tracked[frame] ?? false
        let conditioning = initial || model.addCorrectionsAsConditioning
        // ref: add_new_points_or_box — prev_sam_mask_logits from this frame's earlier output, clamped to ±32
        var previousLogits: FloatTensor?
        if points != nil {
            let pending = conditioning ? object.pendingConditioning : object.pendingNonConditioning
            if let previous = pending.last(where: { $0.frame == frame })?.output ?? object.bank.conditioning[frame]
                ?? object.bank.nonConditioning[frame] {
                var logits = previous.lowResolutionLogits
                for i in logits.data.indices { logits.data[i] = min(max(logits.data[i], -32), 32) }
                previousLogits = logits
            }
        }
        let features = try featuresOf(frame)
        let output = try step(frame: frame, object: id, initialConditioning: initial, features: features, points: points, mask: mask,
                              bank: object.bank, reverse: reverse, encodeMemory: false, previousLogits: previousLogits).output
        if conditioning {
            object.pendingConditioning.removeAll { $0.frame == frame }
            object.pendingConditioning.append((frame, output))
        } else {
            object.pendingNonConditioning.removeAll { $0.frame == frame }
            object.pendingNonConditioning.append((frame, output))
        }
        objects[index] = object
        return output
    }

    // MARK: Propagation

    /// Tracks every object through the clip from `start` (default: the first prompted frame, or the
    /// last one in reverse) for at most `maxFrames` frames after it, calling `body` with each frame's
    /// result in processing order. `through` stops early after that frame (a pass whose results are
    /// only needed up to a later correction). ref: propagate_in_video
    public mutating func propagate(start: Int? = nil, maxFrames: Int? = nil, reverse: Bool = false, through: Int? = nil,
                                   _ body: (TrackedFrame) throws(TrackingError) -> Void) throws(TrackingError) {
        try consolidatePrompts()
        let count = frameCount
        let conditioningFrames = objects.flatMap(\.bank.conditioningFrames)
        let first = start ?? conditioningFrames.min() ?? 0
        guard (0..<count).contains(first) else { throw .invalidRequest("start frame \(first) is outside the clip's 0...\(count - 1)") }
        let limit = maxFrames ?? count
        guard limit >= 0 else { throw .invalidRequest("--max-frames \(limit) is negative") }
        let order: [Int]
        if reverse {
            let end = max(first - limit, 0)
            order = first > 0 ? Array(stride(from: first, through: end, by: -1)) : []
        } else {
            let end = min(first + limit, count - 1)
            order = Array(first...end)
        }
        for frame in order {
            var features = try featuresOf(frame)
            // Objects tracked on the frame (not prompted there) share memory attention's first self-attention.
            if objects.count(where: { $0.bank.conditioning[frame] == nil }) > 1 {
                features.firstSelfAttended = model.firstSelfAttended(features)
            }
            var lowResolution: [Float] = [], scores: [Float] = []
            for index in objects.indices {
                var object = objects[index]
                let output: ObjectFrameOutput
                if let stored = object.bank.conditioning[frame] {
                    output = stored
                } else {
                    output = try step(frame: frame, object: object.id, initialConditioning: false, features: features, points: nil,
                                      mask: nil, bank: object.bank, reverse: reverse, encodeMemory: true, previousLogits: nil).output
                    object.bank.nonConditioning[frame] = output
                }
                object.tracked[frame] = reverse
                object.bank.dropNonConditioning { !keeps($0, at: frame, reverse: reverse) }
                objects[index] = object
                lowResolution += output.lowResolutionLogits.data
                scores.append(output.objectScore)
            }
            try body(result(frame: frame, lowResolution: lowResolution, scores: scores))
            if let through, frame == through { break }
        }
    }

    /// Whether a tracked output at `t` may still be read after tracking `frame`: later frames of this
    /// pass read up to `max(numMaskmem - 1, maxObjectPointers - 1)` strides back, and corrections on
    /// `retainedFrames` read their own frame's and as many before it.
    private func keeps(_ t: Int, at frame: Int, reverse: Bool) -> Bool {
        let config = model.config
        let reach = max(config.numMaskmem - 1, config.maxObjectPointers - 1) * max(config.memoryTemporalStride, 1) + 2
        let behind = reverse ? t - frame : frame - t
        if behind >= -1 && behind <= reach { return true }
        return retainedFrames.contains { abs($0 - t) <= reach }
    }

    /// Encodes the memories of prompted frames and moves them into the banks.
    /// ref: propagate_in_video_preflight
    private mutating func consolidatePrompts() throws(TrackingError) {
        guard !objects.isEmpty else { throw .invalidRequest("no object has a prompt: add points, a box or a mask first") }
        for index in objects.indices {
            var object = objects[index]
            for conditioning in [false, true] {
                let pending = conditioning ? object.pendingConditioning : object.pendingNonConditioning
                for (frame, var output) in pending {
                    if output.memory == nil {
                        // ref: interpolate(pred_masks, (S, S)); _run_memory_encoder(is_mask_from_pts=True)
                        let high = try model.upsampled(output.lowResolutionLogits)
                        output.memory = model.encodeMemory(try featuresOf(frame), highResolution: high, objectScore: output.objectScore,
                                                           fromPoints: true)
                        if let observer, let memory = output.memory { observer(frame, object.id, "preflight_maskmem_features", memory) }
                    }
                    if conditioning {
                        object.bank.setConditioning(frame, output)
                    } else {
                        object.bank.nonConditioning[frame] = output
                    }
                }
            }
            object.pendingConditioning = []
            object.pendingNonConditioning = []
            guard !object.bank.conditioningFrames.isEmpty else {
                throw .invalidRequest("object \(object.id) has no prompt on any frame it was not tracked on: prompt it first")
            }
            for frame in object.bank.conditioningFrames { object.bank.removeNonConditioning(frame) }
            objects[index] = object
        }
    }

    /// One object's step on one frame: the track step, then hole filling and the stored form.
    /// ref: _run_single_frame_inference, track_step
    private func step(frame: Int, object id: Int, initialConditioning: Bool, features: TrackingFeatures, points: [TrackingModel.ModelPoint]?,
                      mask: [Float]?, bank: ObjectMemoryBank, reverse: Bool, encodeMemory: Bool,
                      previousLogits: FloatTensor?) throws(TrackingError) -> (output: ObjectFrameOutput, highResolution: FloatTensor) {
        let heads: TrackingModel.HeadsOutput
        if let mask, model.config.useMaskInputAsOutput {
            heads = try model.maskAsOutput(features.embedding, highResolution: features.highResolution, mask: mask)
        } else {
            observer?(frame, id, "vision_features", features.embedding)
            let conditioned = try model.conditionedFeatures(frame: frame, initialConditioning: initialConditioning, features: features,
                                                            bank: bank, frameCount: frameCount, reverse: reverse)
            if !initialConditioning { observer?(frame, id, "pix_feat_with_mem", conditioned) }
            var maskInput = previousLogits
            if let mask {
                // Without use_mask_input_as_output: the mask resized to the decoder's mask input.
                let s = model.imageSize, side = model.lowResolutionSide
                maskInput = FloatTensor(shape: [1, 1, side, side],
                                        data: AntialiasedBilinear.resize(mask, count: 1, height: s, width: s, toHeight: side, width: side))
            }
            let multimask = model.usesMultimask(initialConditioning: initialConditioning, pointCount: points?.count ?? 0)
            heads = try model.samHeads(conditioned, highResolution: features.highResolution, points: points, maskInput: maskInput,
                                       multimask: multimask)
        }
        var output = ObjectFrameOutput(lowResolutionLogits: heads.lowResolution, objectScore: heads.objectScore, pointer: heads.pointer,
                                       memory: nil)
        if let observer {
            observer(frame, id, "obj_ptr", heads.pointer)
            observer(frame, id, "object_score_logits", FloatTensor(shape: [1, 1], data: [heads.objectScore]))
        }
        if encodeMemory {
            // ref: _encode_memory_in_output — the decoder's high-res mask, before hole filling
            output.memory = model.encodeMemory(features, highResolution: heads.highResolution, objectScore: heads.objectScore,
                                               fromPoints: points != nil)
            if let observer, let memory = output.memory { observer(frame, id, "maskmem_features", memory) }
        }
        if model.fillHoleArea > 0 {
            // ref: fill_holes_in_mask_scores(pred_masks, fill_hole_area)
            let side = model.lowResolutionSide
            do { try MaskHoles.fill(&output.lowResolutionLogits.data, width: side, height: side, maxArea: model.fillHoleArea) } catch {
                throw .frame(frame, "filling holes: \(error)")
            }
        }
        for value in output.lowResolutionLogits.data where !value.isFinite {
            throw .frame(frame, "the mask logits hold NaN or infinite values")
        }
        return (output, heads.highResolution)
    }

    /// The frame's features, computed once while it is the frame being worked on.
    private mutating func featuresOf(_ frame: Int) throws(TrackingError) -> TrackingFeatures {
        if let cachedFeatures, cachedFeatures.frame == frame { return cachedFeatures.features }
        let image: RGBImage
        do { image = try frames.frame(at: frame) } catch { throw .frames("\(error)") }
        guard image.size == frames.frameSize else {
            throw .frame(frame, "is \(image.size), the clip's frames are \(frames.frameSize)")
        }
        let features = try model.features(VideoFramePreprocessing.normalized(image, side: model.imageSize))
        cachedFeatures = (frame, features)
        return features
    }

    /// Objects in ascending id order, their logits at the frame's size.
    private func result(frame: Int, lowResolution: [Float], scores: [Float]) throws(TrackingError) -> TrackedFrame {
        let side = model.lowResolutionSide, plane = side * side
        let order = objects.indices.sorted { objects[$0].id < objects[$1].id }
        var sorted: [Float] = []
        sorted.reserveCapacity(lowResolution.count)
        for index in order { sorted += lowResolution[(index * plane)..<((index + 1) * plane)] }
        let low = FloatTensor(shape: [objects.count, 1, side, side], data: sorted)
        let size = frames.frameSize
        // ref: _get_orig_video_res_output — interpolate(pred_masks, (video_H, video_W), bilinear)
        var logits: FloatTensor
        do {
            logits = try MaskPostprocessor(imageSize: side).upscale(low, inputSize: ImageSize(height: side, width: side), originalSize: size)
        } catch {
            throw .frame(frame, "resizing the masks: \(error)")
        }
        if model.nonOverlappingMasks {
            // Ties go to the object prompted first (upstream's obj_idx order), not the lowest id.
            var planeOf = [Int](repeating: 0, count: objects.count)
            for (plane, index) in order.enumerated() { planeOf[index] = plane }
            Self.keepHighestObject(&logits.data, objects: planeOf, plane: size.width * size.height)
        }
        return TrackedFrame(frameIndex: frame, objectIDs: order.map { objects[$0].id }, logits: logits, lowResolutionLogits: low,
                            objectScores: order.map { scores[$0] })
    }

    /// At each pixel, every object but the one with the highest logit is clamped to at most -10; the
    /// first of equal highest wins, objects taken in `precedence` (indices of the planes in `logits`).
    /// ref: sam2/modeling/sam2_base.py _apply_non_overlapping_constraints (argmax over objects, then
    /// torch.where(keep, pred_masks, clamp(pred_masks, max=-10)))
    static func keepHighestObject(_ logits: inout [Float], objects precedence: [Int], plane: Int) {
        guard precedence.count > 1 else { return }  // upstream returns a single object's masks unchanged
        for pixel in 0..<plane {
            var best = precedence[0]
            for object in precedence.dropFirst() where logits[object * plane + pixel] > logits[best * plane + pixel] {
                best = object
            }
            for object in precedence where object != best {
                logits[object * plane + pixel] = min(logits[object * plane + pixel], -10)
            }
        }
    }
}

import Foundation
import SAMImage
import SAMModel
import SAMPipeline
import SAMTensor

/// Segment everything: upstream's automatic mask generators on the native decoder. A grid of
/// single-point prompts is decoded on the image (and on crops of it), masks are kept by predicted IoU
/// and stability, those touching a crop's inner edge dropped, duplicates removed by box NMS within a
/// crop and across crops, small holes and islands optionally removed, and every mask returned as
/// run-length counts at the image's size.
/// ref: segment_anything/automatic_mask_generator.py SamAutomaticMaskGenerator (SAM, MobileSAM);
/// sam2/automatic_mask_generator.py SAM2AutomaticMaskGenerator (SAM 2 / 2.1)
public final class AutomaticMaskGenerator {
    /// Which upstream generator the steps follow: SAM's, or SAM 2's (its own threshold, the optional
    /// mask-to-mask refinement and single-mask output, normalised point coordinates).
    public enum Rule: String, Sendable {
        /// SAM's and MobileSAM's `SamAutomaticMaskGenerator`.
        case sam
        /// SAM 2's `SAM2AutomaticMaskGenerator`.
        case sam2
    }

    /// The model the prompts are decoded with; the generator sets each image (and crop) on it.
    public let segmenter: SegmentAnything
    /// The generator's parameters, upstream's defaults where none were given.
    public let settings: AutomaticMaskSettings
    /// Which upstream generator the steps follow.
    public let rule: Rule
    /// One grid per crop layer, points in [0, 1] as (x, y).
    let grids: [[SIMD2<Double>]]

    /// `settings` nil: the model family's upstream defaults. A SAM-family model refuses SAM 2's
    /// parameters (mask threshold, refinement, single-mask output), which its generator does not have.
    public init(segmenter: SegmentAnything, settings: AutomaticMaskSettings? = nil) throws(EverythingError) {
        let rule = Self.rule(for: segmenter)
        let settings = settings ?? (rule == .sam2 ? .sam2 : .sam)
        var problems = settings.problems
        if rule == .sam, settings.maskThreshold != 0 || settings.useM2M || !settings.multimaskOutput {
            problems.append("--mask-threshold, --use-m2m and --no-multimask-output are SAM 2's generator's; "
                            + "this \(segmenter.model.metadata.modelFamily) model's generator has none of them")
        }
        guard problems.isEmpty else { throw .invalidSettings(problems) }
        self.segmenter = segmenter
        self.settings = settings
        self.rule = rule
        if let side = settings.pointsPerSide {
            do {
                grids = try buildAllLayerPointGrids(pointsPerSide: side, layerCount: settings.cropNLayers,
                                                    scalePerLayer: settings.cropNPointsDownscaleFactor)
            } catch {
                throw .invalidSettings([error.message])
            }
        } else {
            grids = (settings.pointGrids ?? []).map { $0.map { SIMD2($0[0], $0[1]) } }
        }
    }

    /// The generator upstream pairs with the model's family.
    public static func rule(for segmenter: SegmentAnything) -> Rule {
        segmenter.model.metadata.modelFamily == "sam2" ? .sam2 : .sam
    }

    /// How many prompts `generate` decodes on `image` (every crop's grid).
    public func promptCount(for image: RGBImage) -> Int {
        let crops = try? cropBoxes(for: image.size)
        return crops?.reduce(0) { $0 + grids[$1.layer].count } ?? 0
    }

    /// The crops of every layer, the whole image first. ref: amg.py generate_crop_boxes
    func cropBoxes(for size: ImageSize) throws(EverythingError) -> [(box: PixelBox, layer: Int)] {
        do {
            let (boxes, layers) = try generateCropBoxes(imageHeight: size.height, imageWidth: size.width,
                                                        layerCount: settings.cropNLayers, overlapRatio: settings.cropOverlapRatio)
            return Array(zip(boxes, layers)).map { (box: $0.0, layer: $0.1) }
        } catch {
            throw .invalidSettings([error.message])
        }
    }

    /// Every mask the generator keeps on `image`, in upstream's order. `progress` hears the prompts
    /// decoded so far and their total after each batch.
    /// ref: automatic_mask_generator.py SamAutomaticMaskGenerator.generate, _generate_masks
    public func generate(_ image: RGBImage, progress: ((Int, Int) -> Void)? = nil) throws(EverythingError) -> [MaskAnnotation] {
        let original = image.size
        let crops = try cropBoxes(for: original)
        let total = crops.reduce(0) { $0 + grids[$1.layer].count }
        var done = 0
        var records: [MaskRecord] = []
        for crop in crops {
            records += try processCrop(image, crop: crop.box, layer: crop.layer) { finished in
                progress?(done + finished, total)
            }
            done += grids[crop.layer].count
        }
        // ref: _generate_masks — across crops, the mask of the smaller crop is preferred.
        if crops.count > 1 {
            records = try Self.deduplicated(records, scores: records.map(\.cropBox.reciprocalArea), threshold: settings.cropNMSThresh)
        }
        // SAM 2's generator never calls postprocess_small_regions: it hands min_mask_region_area to its
        // predictor's hole and sprinkle removal, which needs sam2's compiled extension; a CPU install
        // (the reference sets') skips that with a warning, and so does this generator.
        // ref: sam2/automatic_mask_generator.py SAM2AutomaticMaskGenerator.__init__ (max_hole_area), generate
        if settings.minMaskRegionArea > 0, rule == .sam {
            records = try SmallRegionCleanup.apply(to: records, minArea: settings.minMaskRegionArea,
                                                   nmsThreshold: max(settings.boxNMSThresh, settings.cropNMSThresh))
        }
        return records.map(\.annotation)
    }

    /// Box NMS over `records` with zero categories, as upstream calls torchvision's `batched_nms`;
    /// the kept records by decreasing score.
    static func deduplicated(_ records: [MaskRecord], scores: [Float], threshold: Double) throws(EverythingError) -> [MaskRecord] {
        do {
            return try batchedNMS(boxes: records.map(\.box.floatBox), scores: scores, categories: Array(repeating: 0, count: records.count),
                                  iouThreshold: threshold).map { records[$0] }
        } catch {
            throw .invalidSettings([error.message])
        }
    }

    /// ref: automatic_mask_generator.py _process_crop
    func processCrop(_ image: RGBImage, crop: PixelBox, layer: Int, progress: (Int) -> Void) throws(EverythingError) -> [MaskRecord] {
        let cropped: RGBImage
        do { cropped = try image.cropped(to: crop) } catch { throw .image(error) }
        do { try segmenter.setImage(cropped) } catch { throw .pipeline(error) }
        // ref: points_scale = np.array(cropped_im_size)[None, ::-1]: (x, y) times (width, height), in float64.
        let scale = SIMD2(Double(cropped.width), Double(cropped.height))
        var points = grids[layer].map { $0 * scale }
        // ref: sam2 _process_batch — points = torch.as_tensor(points, dtype=torch.float32)
        if rule == .sam2 { points = points.map { SIMD2(Double(Float($0.x)), Double(Float($0.y))) } }
        var records: [MaskRecord] = []
        var start = 0
        while start < points.count {
            let batch = points[start..<min(start + settings.pointsPerBatch, points.count)]
            records += try processBatch(batch, cropSize: cropped.size, crop: crop, original: image.size)
            start += batch.count
            progress(start)
        }
        // ref: _process_crop — duplicates within the crop, by predicted IoU.
        records = try Self.deduplicated(records, scores: records.map(\.predictedIoU), threshold: settings.boxNMSThresh)
        return records.map { $0.uncropped(from: crop, float32Points: rule == .sam2) }
    }

    /// ref: automatic_mask_generator.py _process_batch (SAM's and SAM 2's)
    func processBatch(_ points: ArraySlice<SIMD2<Double>>, cropSize: ImageSize, crop: PixelBox,
                      original: ImageSize) throws(EverythingError) -> [MaskRecord] {
        guard let inputSize = segmenter.inputSize else { throw .pipeline(.invalidState("no image set")) }
        var candidates = try decodeCandidates(points)
        // ref: _process_batch — keep_mask = iou_preds > pred_iou_thresh (float32 against the threshold cast to float32).
        if settings.predIoUThresh > 0 {
            let cutoff = Float(settings.predIoUThresh)
            candidates.removeAll { !($0.iou > cutoff) }
        }
        guard let first = candidates.first else { return [] }
        let plane = first.logits.count
        let side = Int(Double(plane).squareRoot())
        let stacked = FloatTensor(shape: [1, candidates.count, side, side], data: candidates.flatMap(\.logits))
        let upscaled: (masks: BinaryMasks, stability: [StabilityCounts])
        do {
            upscaled = try segmenter.transform.masksWithStability(stacked, inputSize: inputSize, originalSize: cropSize,
                                                                  threshold: settings.maskThreshold,
                                                                  offset: settings.stabilityScoreOffset)
        } catch {
            throw .image(error)
        }
        let cutoff = Float(settings.stabilityScoreThresh)
        let originalBox = PixelBox(x0: 0, y0: 0, x1: original.width, y1: original.height)
        var records: [MaskRecord] = []
        for (index, candidate) in candidates.enumerated() {
            let stability = upscaled.stability[index].score
            // ref: keep_mask = stability_score >= stability_score_thresh (NaN, from an empty mask, is dropped)
            if settings.stabilityScoreThresh > 0, !(stability >= cutoff) { continue }
            let mask: BinaryMask, rle: UncompressedRLE
            do {
                mask = try BinaryMask(width: cropSize.width, height: cropSize.height, pixels: Array(upscaled.masks.mask(index)))
            } catch {
                throw .invalidSettings([error.message])
            }
            let box = maskToBox(mask)
            // ref: keep_mask = ~is_box_near_crop_edge(boxes, crop_box, [0, 0, orig_w, orig_h])
            if isBoxNearCropEdge(box, cropBox: crop, originalBox: originalBox) { continue }
            do {
                rle = try UncompressedRLE(mask: mask, uncroppedFrom: crop, originalHeight: original.height, originalWidth: original.width)
            } catch {
                throw .invalidSettings([error.message])
            }
            records.append(MaskRecord(rle: rle, box: box, predictedIoU: candidate.iou, point: candidate.point,
                                      stabilityScore: stability, cropBox: crop))
        }
        return records
    }

    /// A decoded mask before filtering: its low-resolution logits, predicted IoU and prompt point.
    struct Candidate {
        var logits: [Float]
        var iou: Float
        var point: SIMD2<Double>
    }

    /// Every point's masks (multimask: the three masks after the first; SAM 2 single: the decoder's
    /// choice), each refined once with its own logits as the mask prompt under SAM 2's `use_m2m`.
    /// The batch's points are decoded together (`SegmentAnything.predictLowResolution(_:)` on a
    /// batch), and so are their refinements.
    /// ref: _process_batch (predict_torch / _predict with multimask_output, return_logits); refine_with_m2m
    func decodeCandidates(_ points: ArraySlice<SIMD2<Double>>) throws(EverythingError) -> [Candidate] {
        let selection: MaskSelection = settings.multimaskOutput ? .multimask : .single
        // ref: in_labels = torch.ones(...): every grid point is a foreground click.
        let prompts = points.map { Prompt(points: [Prompt.Point(x: Float($0.x), y: Float($0.y), label: 1)]) }
        let decoded: [LowResolutionPrediction]
        do { decoded = try segmenter.predictLowResolution(prompts, selection: selection) } catch { throw .pipeline(error) }
        var candidates: [Candidate] = []
        var refinements: [Prompt] = []
        for (point, (prompt, prediction)) in zip(points, zip(prompts, decoded)) {
            for index in prediction.selected {
                candidates.append(Candidate(logits: prediction.logits.plane(index), iou: prediction.iouPredictions[index], point: point))
                if rule == .sam2, settings.useM2M {
                    // ref: refine_with_m2m — the clamped low-res logits as the mask input, one mask out.
                    let plane = prediction.returnedLogits.plane(index)
                    let side = Int(Double(plane.count).squareRoot())
                    var refinement = prompt
                    refinement.maskInput = FloatTensor(shape: [1, 1, side, side], data: plane)
                    refinements.append(refinement)
                }
            }
        }
        guard !refinements.isEmpty else { return candidates }
        let refined: [LowResolutionPrediction]
        do { refined = try segmenter.predictLowResolution(refinements, selection: .single) } catch { throw .pipeline(error) }
        for (index, prediction) in refined.enumerated() {
            let chosen = prediction.selected[0]
            candidates[index].logits = prediction.logits.plane(chosen)
            candidates[index].iou = prediction.iouPredictions[chosen]
        }
        return candidates
    }
}

/// Why the generator could not run.
public enum EverythingError: Error, CustomStringConvertible {
    /// Settings the generator refuses, one line per problem.
    case invalidSettings([String])
    /// The model failed on an image or a prompt batch.
    case pipeline(PipelineError)
    /// An image could not be cropped, resized or post-processed.
    case image(ImageError)
    /// A segment-everything reference set or masks file that cannot be read.
    case referenceSet(String)
    /// A dataset run that cannot go on: an image list or folder, a shard, an output name, a merge.
    case dataset(String)

    /// A one-line message for a person.
    public var description: String {
        switch self {
        case .invalidSettings(let lines): "automatic mask settings: " + lines.joined(separator: "; ")
        case .referenceSet(let message), .dataset(let message): message
        case .pipeline(let error): "\(error)"
        case .image(let error): "\(error)"
        }
    }
}

extension FloatTensor {
    /// Plane `index` of a [1, K, h, w] tensor.
    func plane(_ index: Int) -> [Float] {
        let size = shape[shape.count - 2] * shape[shape.count - 1]
        return Array(data[(index * size)..<((index + 1) * size)])
    }
}

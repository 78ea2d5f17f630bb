import SAMImage
import SAMTensor

/// Native and reference decoder outputs of one prompt brought to full size the way the predictor
/// does it, thresholded, and compared as masks.
enum TaskComparison {
    /// The decoder outputs of one run: all four low-res logits [1, 4, h, w] and IoU predictions [1, 4].
    struct DecoderOutputs {
        var masks: FloatTensor
        var iou: FloatTensor
    }

    /// The figures, and the full-size masks they came from (for pictures and determinism digests).
    struct Outcome {
        var parity: PromptParity
        var native: BinaryMasks
        var reference: BinaryMasks
    }

    /// Compares `native` with `reference` (same shapes, checked by the caller). `tokenCount` is the number
    /// of sparse prompt tokens (points, box corners, padding), which the single-mask rule counts.
    static func compare(name: String, native: DecoderOutputs, reference: DecoderOutputs, frame: MaskFrame,
                        maskThreshold: Float, thresholds: TaskThresholds, tokenCount: Int) throws(ImageError) -> Outcome {
        let postprocessor = MaskPostprocessor(imageSize: frame.imageSize, maskThreshold: maskThreshold)
        let nativeMasks = try postprocessor.masks(native.masks, inputSize: frame.inputSize, originalSize: frame.originalSize)
        let referenceMasks = try postprocessor.masks(reference.masks, inputSize: frame.inputSize, originalSize: frame.originalSize)
        let nativeScores = native.iou.data.map(Double.init), referenceScores = reference.iou.data.map(Double.init)
        let count = min(nativeMasks.count, referenceMasks.count, nativeScores.count, referenceScores.count)
        let referenceSelection = select(thresholds.masks, scores: Array(referenceScores.prefix(count)), tokenCount: tokenCount)
        let nativeSelection = select(thresholds.masks, scores: Array(nativeScores.prefix(count)), tokenCount: tokenCount)

        var masks: [MaskAgreement] = []
        for index in 0..<count {
            let (intersection, union, nativeArea, referenceArea) = overlap(nativeMasks.mask(index), referenceMasks.mask(index))
            masks.append(MaskAgreement(
                index: index, selected: referenceSelection.contains(index),
                iou: union == 0 ? 1 : Double(intersection) / Double(union),
                nativeArea: nativeArea, referenceArea: referenceArea,
                areaDifference: Double(abs(nativeArea - referenceArea)) / Double(max(referenceArea, 1)),
                nativeScore: nativeScores[index], referenceScore: referenceScores[index]))
        }
        let selected = masks.filter(\.selected)
        let referenceBest = best(referenceSelection, referenceScores)
        let nativeBest = best(nativeSelection, nativeScores)
        let ranked = referenceSelection.map { referenceScores[$0] }.sorted(by: >)
        var parity = PromptParity(
            name: name, masks: masks, selected: referenceSelection, nativeBest: nativeBest, referenceBest: referenceBest,
            bestAgrees: nativeBest == referenceBest, referenceMargin: ranked.count >= 2 ? ranked[0] - ranked[1] : nil,
            minMaskIoU: selected.map(\.iou).min() ?? 1,
            maxIoUPredictionError: selected.map { abs($0.nativeScore - $0.referenceScore) }.max() ?? 0,
            maxAreaDifference: selected.map(\.areaDifference).max() ?? 0, failures: [])
        parity.failures = failures(parity, thresholds)
        return Outcome(parity: parity, native: nativeMasks, reference: referenceMasks)
    }

    /// Every threshold `parity` misses, in words. NaN figures miss every bar.
    static func failures(_ parity: PromptParity, _ thresholds: TaskThresholds) -> [String] {
        var failures: [String] = []
        for mask in parity.masks where mask.selected && !(mask.iou >= thresholds.minMaskIoU) {
            failures.append("mask \(mask.index) IoU \(formatIoU(mask.iou)) < \(thresholds.minMaskIoU) (native \(mask.nativeArea) "
                            + "pixels, reference \(mask.referenceArea))")
        }
        if thresholds.requireBestMask && !parity.bestAgrees {
            failures.append("best mask differs: native \(parity.nativeBest), reference \(parity.referenceBest)"
                            + (parity.referenceMargin.map { " (reference margin \(formatFigure($0)))" } ?? ""))
        }
        if let limit = thresholds.maxIoUPredictionError, !(parity.maxIoUPredictionError <= limit) {
            failures.append("IoU prediction error \(formatFigure(parity.maxIoUPredictionError)) > \(formatFigure(limit))")
        }
        if let limit = thresholds.maxAreaDifference, !(parity.maxAreaDifference <= limit) {
            failures.append("area difference \(formatFigure(parity.maxAreaDifference)) > \(formatFigure(limit))")
        }
        return failures
    }

    /// The masks `choice` selects, by the decoder's rules.
    /// ref: mask_decoder.py MaskDecoder.forward (mask_slice); utils/onnx.py SamOnnxModel.select_masks
    static func select(_ choice: MaskChoice, scores: [Double], tokenCount: Int) -> [Int] {
        switch choice {
        case .multimask: return scores.count > 1 ? Array(1..<scores.count) : Array(scores.indices)
        case .all: return Array(scores.indices)
        case .single:
            // score_reweight = [1000] + [0] * (num_mask_tokens - 1); score = iou + (num_points - 2.5) * score_reweight
            let weighted = scores.enumerated().map { $0.offset == 0 ? $0.element + (Double(tokenCount) - 2.5) * 1000 : $0.element }
            return weighted.isEmpty ? [] : [best(Array(weighted.indices), weighted)]
        }
    }

    /// The index among `indices` with the highest score; the first of equal scores, as argmax.
    static func best(_ indices: [Int], _ scores: [Double]) -> Int {
        var chosen = indices.first ?? 0
        for index in indices.dropFirst() where scores[index] > scores[chosen] { chosen = index }
        return chosen
    }

    /// Pixel counts of two 0/1 masks of one size.
    static func overlap(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> (intersection: Int, union: Int, areaA: Int, areaB: Int) {
        var intersection = 0, areaA = 0, areaB = 0
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for index in 0..<min(a.count, b.count) {
                    let x = Int(a[index]), y = Int(b[index])
                    areaA += x
                    areaB += y
                    intersection += x & y
                }
            }
        }
        return (intersection, areaA + areaB - intersection, areaA, areaB)
    }
}

import SAMImage
import SAMTensor

/// Whether a frame's logits differ from upstream's only because hole filling decided differently
/// around a low-resolution logit within rounding of 0.
///
/// Hole filling (`fill_hole_area`) is a discontinuous step: a background component of at most
/// `maxArea` low-resolution pixels becomes foreground with the score 0.1. When one logit next to
/// such a component lies within rounding of 0, the two runs can put it on either side, the
/// component's area crosses the limit on one side only, and the whole component (a few low-res
/// pixels, a few dozen full-resolution ones after upscaling) differs by about the logits' magnitude.
/// That is rounding, not a wrong port; everything else about the frame must still hold.
///
/// A frame's excess is explained when every condition holds, per object:
/// - every low-res pixel beyond the tolerance (a *disagreement*) holds the filled score on exactly
///   one side and, on the other, a logit at most the tolerance (background, or foreground within
///   rounding of 0);
/// - the disagreements form 8-connected groups of at most `maxArea` pixels (a filled hole has no more);
/// - each group touches (8-neighbourhood, itself included) a *flip*: a pixel that is background on
///   one side and foreground on the other with both unfilled logits within the tolerance of 0, or a
///   disagreement whose unfilled logit is foreground within the tolerance (the flipped pixel itself
///   was filled on the other side);
/// - every full-resolution logit beyond the tolerance is upscaled from a disagreement (one of its
///   bilinear sources, align_corners=False as `_get_orig_video_res_output` interpolates); with
///   non-overlapping masks, a disagreement of any object counts (the constraint couples objects).
///
/// A filled pixel's own logit is not known on the side that filled it; the rule relies on every
/// unfilled pixel around it agreeing within the tolerance.
struct HoleFillingFlips {
    /// Low-resolution pixels (all objects) whose filling differs, explained.
    var disagreements = 0
    /// Why the frame's excess is not explained; nil when it is.
    var unexplained: String?
    /// Whether the excess involves a hole filled on one side (otherwise the logits simply differ, and
    /// hole filling has nothing to say about it).
    var involvesHoleFilling = true

    /// Compares `native` with `reference` low-res logits ([objects, 1, s, s], holes filled) and the
    /// full-resolution `nativeLogits` with `referenceLogits` ([objects, 1, H, W]).
    init(native: FloatTensor, reference: FloatTensor, nativeLogits: FloatTensor, referenceLogits: FloatTensor,
         maxArea: Int, tolerance: Double, objectsCoupled: Bool) {
        guard native.shape == reference.shape, native.shape.count == 4, native.shape[1] == 1,
              nativeLogits.shape == referenceLogits.shape, nativeLogits.shape.count == 4,
              nativeLogits.shape[0] == native.shape[0], maxArea > 0 else {
            unexplained = "low-res logits \(native.shape) and \(reference.shape) do not pair with logits \(nativeLogits.shape)"
            return
        }
        let objects = native.shape[0], side = (height: native.shape[2], width: native.shape[3])
        let plane = side.height * side.width
        var disagreeing = [Bool](repeating: false, count: native.count)
        for object in 0..<objects {
            let range = (object * plane)..<((object + 1) * plane)
            let found = Self.disagreements(native: native.data[range], reference: reference.data[range],
                                           width: side.width, maxArea: maxArea, tolerance: tolerance)
            if let problem = found.problem {
                unexplained = "object index \(object): \(problem)"
                involvesHoleFilling = found.involvesHoleFilling
                return
            }
            for (offset, flag) in found.mask.enumerated() where flag { disagreeing[range.lowerBound + offset] = true }
            disagreements += found.mask.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        unexplained = Self.unexplainedFullResolution(nativeLogits, referenceLogits, disagreeing: disagreeing,
                                                     lowRes: side, tolerance: tolerance, objectsCoupled: objectsCoupled)
    }

    /// One object's disagreements as a mask, or why they are not hole filling's.
    private static func disagreements(native: ArraySlice<Float>, reference: ArraySlice<Float>, width: Int, maxArea: Int,
                                      tolerance: Double) -> (mask: [Bool], problem: String?, involvesHoleFilling: Bool) {
        let n = Array(native), r = Array(reference)
        let height = n.count / width
        let filled = MaskHoles.filledScore
        var mask = [Bool](repeating: false, count: n.count)
        var flip = [Bool](repeating: false, count: n.count)
        func nearZero(_ value: Float) -> Bool { Double(abs(value)) <= tolerance }
        for i in 0..<n.count {
            let (a, b) = (n[i], r[i])
            if Double(abs(a - b)) <= tolerance || (a.isNaN && b.isNaN) {
                // Agreeing; a flip when the sides are background and foreground, both unfilled.
                if a != filled, b != filled, (a <= 0) != (b <= 0), nearZero(a), nearZero(b) { flip[i] = true }
                continue
            }
            guard (a == filled) != (b == filled) else {
                return (mask, "low-res pixel (\(i % width), \(i / width)) differs (\(a) against \(b)) and is not a hole filled on one side", false)
            }
            let unfilled = a == filled ? b : a
            guard Double(unfilled) <= tolerance else {
                return (mask, "low-res pixel (\(i % width), \(i / width)) is filled on one side and foreground (\(unfilled)) on the other", true)
            }
            mask[i] = true
            if unfilled > 0 { flip[i] = true }
        }
        // Groups of disagreements: bounded by the hole area, each next to a flip.
        var seen = [Bool](repeating: false, count: n.count)
        for start in 0..<n.count where mask[start] && !seen[start] {
            var group = [start], touchesFlip = false, next = 0
            seen[start] = true
            while next < group.count {
                let (x, y) = (group[next] % width, group[next] / width)
                next += 1
                for dy in -1...1 {
                    for dx in -1...1 {
                        let (nx, ny) = (x + dx, y + dy)
                        guard nx >= 0, nx < width, ny >= 0, ny < height else { continue }
                        let j = ny * width + nx
                        if flip[j] { touchesFlip = true }
                        if mask[j], !seen[j] {
                            seen[j] = true
                            group.append(j)
                        }
                    }
                }
            }
            if group.count > maxArea {
                return (mask, "\(group.count) neighbouring low-res pixels from (\(start % width), \(start / width)) differ, more than a hole of \(maxArea)", true)
            }
            if !touchesFlip {
                return (mask, "low-res pixels from (\(start % width), \(start / width)) were filled on one side only, with no logit within rounding of 0 beside them", true)
            }
        }
        return (mask, nil, true)
    }

    /// nil when every full-resolution logit beyond the tolerance is upscaled from a disagreement.
    private static func unexplainedFullResolution(_ native: FloatTensor, _ reference: FloatTensor, disagreeing: [Bool],
                                                  lowRes: (height: Int, width: Int), tolerance: Double,
                                                  objectsCoupled: Bool) -> String? {
        let objects = native.shape[0], height = native.shape[2], width = native.shape[3]
        let lowPlane = lowRes.height * lowRes.width
        // Any object's disagreement, for objects coupled by the non-overlap constraint.
        var anyObject = [Bool](repeating: false, count: lowPlane)
        for (i, flag) in disagreeing.enumerated() where flag { anyObject[i % lowPlane] = true }
        // The taps the upscaling itself reads (`TorchBilinear`, as torch's upsample_bilinear2d).
        let (rows, columns) = TorchBilinear.axes(inRows: lowRes.height, inCols: lowRes.width, outRows: height, outCols: width)
        for object in 0..<objects {
            for y in 0..<height {
                for x in 0..<width {
                    let i = (object * height + y) * width + x
                    let error = Double(abs(native.data[i] - reference.data[i]))
                    guard !(error <= tolerance) else { continue }
                    var sourced = false
                    for sy in [rows.index0[y], rows.index1[y]] {
                        for sx in [columns.index0[x], columns.index1[x]] {
                            let low = sy * lowRes.width + sx
                            if objectsCoupled ? anyObject[low] : disagreeing[object * lowPlane + low] { sourced = true }
                        }
                    }
                    if !sourced {
                        return "logit (\(x), \(y)) of object index \(object) differs by \(error), away from any hole filled on one side"
                    }
                }
            }
        }
        return nil
    }
}

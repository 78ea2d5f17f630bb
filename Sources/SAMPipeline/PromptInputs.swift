import SAMImage
import SAMModel
import SAMTensor

/// A `Prompt` checked and mapped to the decoder's inputs: coordinates in the model's input frame,
/// box corners as points labelled 2 and 3 after the points and the padding point only without a
/// box (SAM), or the corners before the points and the padding point always (SAM 2), as the decoder
/// family's `PromptLayout` says.
/// ref: mobile_sam/predictor.py SamPredictor.predict (apply_coords, apply_boxes); prompt_encoder.py forward;
/// sam2/sam2_image_predictor.py SAM2ImagePredictor._prep_prompts, _predict (concat_points)
struct PromptInputs {
    let points: FloatTensor
    let labels: FloatTensor
    let appendPaddingPoint: Bool
    let maskInput: FloatTensor?
    /// Sparse tokens the decoder sees (points, box corners, padding): the single-mask rule counts these.
    let tokenCount: Int

    init(_ prompt: Prompt, originalSize: ImageSize, transform: InputTransform, layout: PromptLayout,
         config: SAMConfig) throws(PipelineError) {
        guard !prompt.points.isEmpty || prompt.box != nil else {
            throw .invalidPrompt("give at least one point or a box")
        }
        let width = Float(originalSize.width), height = Float(originalSize.height)
        for (index, point) in prompt.points.enumerated() {
            guard point.x.isFinite, point.y.isFinite else { throw .invalidPrompt("point \(index) is not a finite coordinate") }
            guard point.x >= 0, point.y >= 0, point.x < width, point.y < height else {
                throw .invalidPrompt("point \(index) (\(point.x), \(point.y)) is outside the \(originalSize.width)x\(originalSize.height) image")
            }
            guard point.label == 0 || point.label == 1 else {
                throw .invalidPrompt("point \(index) has label \(point.label); use 1 (foreground) or 0 (background)")
            }
        }
        let pointCount = prompt.points.count + (prompt.box == nil ? 0 : 2)
        guard pointCount >= config.minPoints, pointCount <= config.maxPoints else {
            throw .invalidPrompt("\(pointCount) points (a box counts as 2); this model accepts \(config.minPoints)...\(config.maxPoints)")
        }
        var coordinates = prompt.points.flatMap { [$0.x, $0.y] }
        var labels = prompt.points.map { Float($0.label) }
        var corners: [Float] = []
        if let box = prompt.box {
            guard [box.x0, box.y0, box.x1, box.y1].allSatisfy(\.isFinite) else { throw .invalidPrompt("the box has a non-finite corner") }
            guard box.x1 >= box.x0, box.y1 >= box.y0 else {
                throw .invalidPrompt("box (\(box.x0), \(box.y0), \(box.x1), \(box.y1)) has x1 < x0 or y1 < y0")
            }
            guard box.x0 >= 0, box.y0 >= 0, box.x1 <= width, box.y1 <= height else {
                throw .invalidPrompt("box (\(box.x0), \(box.y0), \(box.x1), \(box.y1)) reaches outside the \(originalSize.width)x\(originalSize.height) image")
            }
            // ref: prompt_encoder.py _embed_boxes — corners get point_embeddings[2] and [3]
            corners = [box.x0, box.y0, box.x1, box.y1]
        }
        // ref: sam2_image_predictor.py _predict — concat_coords = torch.cat([box_coords, point_coords], dim=1)
        if layout.boxFirst {
            coordinates = corners + coordinates
            labels = (corners.isEmpty ? [] : [2, 3]) + labels
        } else {
            coordinates += corners
            labels += corners.isEmpty ? [] : [2, 3]
        }
        let mapped: [Float]
        do { mapped = try transform.applyCoords(coordinates, originalSize: originalSize) } catch { throw .image(error) }
        points = FloatTensor(shape: [1, pointCount, 2], data: mapped)
        self.labels = FloatTensor(shape: [1, pointCount], data: labels)
        // ref: predictor.py predict_torch -> prompt_encoder(points, boxes, masks): _embed_points(pad=(boxes is None));
        // SAM 2 passes the box as points, so its prompt encoder always pads
        appendPaddingPoint = layout.appendsPaddingPoint(hasBox: prompt.box != nil)
        tokenCount = pointCount + (appendPaddingPoint ? 1 : 0)

        let maskSide = 4 * config.promptEncoder.imageEmbeddingSize
        if let mask = prompt.maskInput {
            guard mask.shape == [1, 1, maskSide, maskSide] else {
                throw .invalidPrompt("mask input has shape \(Shape.text(mask.shape)), this model takes [1,1,\(maskSide),\(maskSide)]")
            }
            guard mask.data.allSatisfy(\.isFinite) else { throw .invalidPrompt("mask input contains NaN or infinite values") }
        }
        maskInput = prompt.maskInput
    }
}

import SAMTensor

extension PromptEncoder {
    /// Sparse embeddings of points given in input-image pixels (the 1024 space, after
    /// `ResizeLongestSide`), [1, N, 2] with labels [1, N] → [1, N, C] (or N + 1 tokens with padding).
    ///
    /// Labels: -1 not a point (encoding replaced by `not_a_point_embed`), 0 background, 1 foreground,
    /// 2 and 3 the top-left and bottom-right corners of a box. Boxes go through here as two points
    /// labelled 2 and 3, as the official ONNX decoder does; that equals the predictor's `_embed_boxes`.
    ///
    /// `appendPaddingPoint` appends one (0, 0) point labelled -1 after the given points: what
    /// `SamPredictor` does when there is no box, and what the official export scripts feed the
    /// ONNX decoder. Off by default (the split path adds no padding).
    ///
    /// Throws when N is outside `pointCountRange` (the padding point is not counted), when a
    /// coordinate is NaN or infinite, or when a label is not one of -1, 0, 1, 2, 3.
    /// ref: prompt_encoder.py PromptEncoder._embed_points; onnx.py SamOnnxModel._embed_points
    package func embedPoints(coords: FloatTensor, labels: FloatTensor, appendPaddingPoint: Bool = false,
                            observer: ModuleObserver? = nil) throws(PromptError) -> FloatTensor {
        guard coords.shape.count == 3, coords.shape[0] == 1, coords.shape[2] == 2 else {
            throw .shape(input: "point coords", expected: "[1,N,2]", actual: coords.shape)
        }
        let pointCount = coords.shape[1]
        guard labels.shape == [1, pointCount] else {
            throw .shape(input: "point labels", expected: "[1,\(pointCount)]", actual: labels.shape)
        }
        guard pointCountRange.contains(pointCount) else {
            throw .pointCount(pointCount, allowed: pointCountRange, what: "number of points")
        }
        var labelIndices: [Int] = []
        labelIndices.reserveCapacity(pointCount + 1)
        for point in 0..<pointCount {
            let x = coords.data[2 * point], y = coords.data[2 * point + 1]
            guard x.isFinite, y.isFinite else { throw .nonFiniteCoordinate(point: point, x: x, y: y) }
            let label = labels.data[point]
            guard let index = Self.labelIndex(label) else { throw .invalidLabel(point: point, value: label) }
            labelIndices.append(index)
        }

        // ref: _embed_points — points = points + 0.5  (shift to the pixel centre)
        var pixels = coords.data.map { $0 + 0.5 }
        if appendPaddingPoint {
            // ref: _embed_points — pad: a zero point labelled -1, appended after the shift
            pixels += [0, 0]
            labelIndices.append(-1)
        }
        // ref: _embed_points — self.pe_layer.forward_with_coords(points, self.input_image_size)
        var embedding = peLayer.encode(pixels: pixels, width: inputImageSize, height: inputImageSize)
        observer?("\(peLayer.path):points", embedding)

        let c = embedDim, notAPoint = notAPointEmbed.weight.data
        embedding.data.withUnsafeMutableBufferPointer { out in
            for (token, label) in labelIndices.enumerated() {
                let row = out.baseAddress! + token * c
                if label == -1 {
                    // ref: _embed_points — point_embedding[labels == -1] = 0.0; += self.not_a_point_embed.weight
                    // (onnx.py: point_embedding * (labels != -1) + not_a_point_embed.weight * (labels == -1))
                    for j in 0..<c { row[j] = 0 + notAPoint[j] }
                } else {
                    // ref: _embed_points — point_embedding[labels == i] += self.point_embeddings[i].weight
                    // (labels 2 and 3 as in onnx.py SamOnnxModel._embed_points / _embed_boxes)
                    let added = pointEmbeddings[label].weight.data
                    for j in 0..<c { row[j] += added[j] }
                }
            }
        }
        observer?("\(path):sparse", embedding)
        return embedding
    }

    /// The point-embedding index for a label value, -1 for "not a point", nil if invalid.
    static func labelIndex(_ label: Float) -> Int? {
        switch label {
        case -1: -1
        case 0: 0
        case 1: 1
        case 2: 2
        case 3: 3
        default: nil
        }
    }
}

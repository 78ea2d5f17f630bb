import SAMFormats
import SAMTensor

/// Float tensors of an export that are not weights and say so verifiably.
extension ONNXWeightMapper {
    mutating func recogniseNonWeight(_ stored: ONNXInitializer, uses: [ONNXUse]) throws(ImportError) -> ImportRule? {
        if !uses.isEmpty, uses.allSatisfy(Self.isShapeArgument) { return .shapeArithmetic }
        if try isPECoordinateGrid(stored, uses: uses) { return .peCoordinateGrid }
        if try isSinePositionFrequencies(stored, uses: uses) { return .sinePositionFrequencies }
        if try isPaddingPointCoordinates(stored, uses: uses) { return .paddingPointCoordinates }
        if try recognisePixelNormalization(stored, uses: uses) { return .inGraphPixelNormalization }
        return nil
    }

    /// A prompt encoder exported without a mask input returns `no_mask_embed.weight` broadcast to
    /// [1, C, g, g] as its dense embedding; constant folding can make that output a stored tensor
    /// no node reads. Taken as `prompt_encoder.no_mask_embed.weight` [1, C] when every position of
    /// each channel holds the same value (else it is not that broadcast, and stays unmapped).
    /// ref: segment_anything/modeling/prompt_encoder.py PromptEncoder.forward (no masks branch)
    mutating func importConstantDenseEmbedding(_ stored: ONNXInitializer, uses: [ONNXUse]) throws(ImportError) -> Bool {
        let shape = stored.shape
        guard uses.isEmpty, model.graph.outputs.contains(where: { $0.name == stored.name }), components.contains(.promptEncoder),
              shape.count == 4, shape[0] == 1, shape[1] >= 1, shape[2] >= 1, shape[3] >= 1 else { return false }
        let tensor = try read(stored.name)
        let (channels, positions) = (shape[1], shape[2] * shape[3])
        for channel in 0..<channels {
            let first = channel * positions
            for position in 1..<positions where !tensor.elementBitsEqual(first, first + position) { return false }
        }
        let embedding = tensor.gathered(shape: [1, channels], count: channels) { $0 * positions }
        try result.insert("prompt_encoder.no_mask_embed.weight", embedding, origin: origin(stored, .noMaskEmbedFromDenseOutput))
        return true
    }

    /// Inputs that carry sizes, scales or ranges, never weights.
    static func isShapeArgument(_ use: ONNXUse) -> Bool {
        switch use.node.opType {
        case "ConstantOfShape", "Range": true
        case "Resize", "Upsample", "Reshape", "Expand", "Tile", "Slice", "Pad": use.input >= 1
        default: false
        }
    }

    /// `PositionEmbeddingRandom.forward` builds a [g,g,2] grid of pixel centres, (x+0.5)/g and
    /// (y+0.5)/g, maps it to 2c-1 and multiplies by the Gaussian matrix; TorchScript folds the grid
    /// (with or without the 2c-1) into a Constant. Accepted only if every value matches the formula.
    /// ref: mobile_sam/modeling/prompt_encoder.py PositionEmbeddingRandom.forward, _pe_encoding.
    mutating func isPECoordinateGrid(_ stored: ONNXInitializer, uses: [ONNXUse]) throws(ImportError) -> Bool {
        let shape = stored.shape
        guard shape.count == 3, shape[0] == shape[1], shape[2] == 2, shape[0] >= 1 else { return false }
        // Read by the Gaussian-matrix product, or quantized first to be read by its integer form.
        let inPELayer = uses.contains { use in
            ["MatMul", "DynamicQuantizeLinear", "QuantizeLinear"].contains(use.node.opType) && use.input == 0
                && (use.canonicalScope.map { CanonicalNames.leaf($0.path) == "pe_layer" } ?? false
                    || use.node.inputs.dropFirst().first.flatMap(CanonicalNames.resolveParameter)?.path.hasSuffix(".positional_encoding_gaussian_matrix") == true)
        }
        guard inPELayer else { return false }
        let grid = try read(stored.name)
        let side = shape[0]
        func matches(_ transform: (Double) -> Double) -> Bool {
            for y in 0..<side {
                for x in 0..<side {
                    let base = (y * side + x) * 2
                    let expectedX = transform((Double(x) + 0.5) / Double(side)), expectedY = transform((Double(y) + 0.5) / Double(side))
                    if abs(grid.value(at: base) - expectedX) > 1e-6 || abs(grid.value(at: base + 1) - expectedY) > 1e-6 { return false }
                }
            }
            return true
        }
        guard matches({ 2 * $0 - 1 }) || matches({ $0 }) else { return false }
        try learn(embeddingDim: nil, imageEmbeddingSize: side, from: stored.name)
        return true
    }
}

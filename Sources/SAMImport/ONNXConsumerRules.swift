import SAMFormats
import SAMTensor

/// What a stored ONNX tensor becomes, and which layout rule turns it into that.
enum ONNXTarget: Equatable {
    /// One canonical tensor.
    case tensor(name: String, layout: Layout, rule: ImportRule)
    /// `cat(iou_token, mask_tokens)`: two canonical tensors.
    case outputTokens(iouToken: String, maskTokens: String)

    enum Layout: Equatable, Sendable {
        case asStored
        case linearWeightFromMatMul
        case channelAffine
        case batchedChannelAffine
        case noMaskEmbedding
        case attentionBiasTable
        case gatheredRelativePositions

        /// The canonical tensor made from the stored one.
        func apply(to tensor: Tensor) throws(LayoutRuleError) -> Tensor {
            switch self {
            case .asStored: tensor
            case .linearWeightFromMatMul: try LayoutRules.linearWeightFromMatMul(tensor)
            case .channelAffine: try LayoutRules.channelAffine(tensor)
            case .batchedChannelAffine: try LayoutRules.batchedChannelAffine(tensor)
            case .noMaskEmbedding: try LayoutRules.noMaskEmbedding(tensor)
            case .attentionBiasTable: try LayoutRules.attentionBiasesFromTable(tensor)
            case .gatheredRelativePositions: try LayoutRules.relativePositionsFromGathered(tensor)
            }
        }
    }
}

/// Canonical names for tensors that lost theirs (`onnx::MatMul_2553`, `val_118`, `unsqueeze_1`),
/// from the node that reads them: its op, which input, and its module scope.
enum ONNXConsumerRules {
    /// The target one use implies, or nil when this use says nothing.
    /// - Parameters:
    ///   - shape: the stored tensor's shape.
    ///   - components: components the file holds (root-scope rules need theirs).
    static func target(for use: ONNXUse, shape: [Int], components: Set<SAMComponent>) -> ONNXTarget? {
        let node = use.node
        guard let scope = use.canonicalScope?.path else {
            return rootTarget(for: use, shape: shape, components: components)
        }
        switch (node.opType, use.input) {
        case ("Conv", 1), ("ConvTranspose", 1), ("ConvInteger", 1):
            return .tensor(name: convModule(scope) + ".weight", layout: .asStored, rule: .convWeightByScope)
        case ("Conv", 2), ("ConvTranspose", 2):
            // The bias belongs to whatever module the weight belongs to.
            if let weight = node.inputs.dropFirst().first, let named = CanonicalNames.resolveParameter(weight), named.path.hasSuffix(".weight") {
                return .tensor(name: String(named.path.dropLast(".weight".count)) + ".bias", layout: .asStored, rule: .convBiasByScope)
            }
            return .tensor(name: convModule(scope) + ".bias", layout: .asStored, rule: .convBiasByScope)
        case ("MatMul", 1) where shape.count == 2, ("MatMulInteger", 1) where shape.count == 2:
            // PositionEmbeddingRandom multiplies by its matrix as is: coords @ G.
            if CanonicalNames.leaf(scope) == "pe_layer" {
                return .tensor(name: scope + ".positional_encoding_gaussian_matrix", layout: .asStored, rule: .gaussianMatrixByScope)
            }
            return .tensor(name: scope + ".weight", layout: .linearWeightFromMatMul, rule: .linearWeightTransposed)
        case ("Gemm", 1) where shape.count == 2:
            return .tensor(name: scope + ".weight", layout: gemmTransposesB(node) ? .asStored : .linearWeightFromMatMul, rule: .gemmWeight)
        case ("Gemm", 2):
            return .tensor(name: scope + ".bias", layout: .asStored, rule: .gemmWeight)
        case ("Reshape", 0) where shape.count == 1 && use.scopeEvidence == .quantizedConvBias:
            return .tensor(name: scope + ".bias", layout: .asStored, rule: .quantizedConvBias)
        case ("LayerNormalization", 1):
            return .tensor(name: scope + ".weight", layout: .asStored, rule: .layerNormAffineByScope)
        case ("LayerNormalization", 2):
            return .tensor(name: scope + ".bias", layout: .asStored, rule: .layerNormAffineByScope)
        case ("Mul", _) where shape.count == 1 && CanonicalNames.leaf(scope).hasPrefix("norm"):
            // LayerNorm decomposed below opset 17: x_hat * weight + bias.
            return .tensor(name: scope + ".weight", layout: .asStored, rule: .layerNormAffineByScope)
        case (_, _) where shape.count == 2 && isPointEmbedding(scope):
            // point_embedding + weight * (labels == i), + weight where labels == i, or = weight there.
            return .tensor(name: scope + ".weight", layout: .asStored, rule: .embeddingRowByScope)
        case ("Mul", _) where isChannelColumn(shape):
            // LayerNorm2d: weight[:, None, None] * x
            return .tensor(name: scope + ".weight", layout: .channelAffine, rule: .channelAffineReshaped)
        case ("Add", _) where isChannelColumn(shape):
            // LayerNorm2d: ... + bias[:, None, None]
            return .tensor(name: scope + ".bias", layout: .channelAffine, rule: .channelAffineReshaped)
        case ("Add", _) where shape.count == 1:
            // MatMul + Add is a Linear.
            return .tensor(name: scope + ".bias", layout: .asStored, rule: .linearBiasByScope)
        case ("Einsum", 1) where shape.count == 3 && shape[0] == shape[1] && CanonicalNames.leaf(scope) == "attn":
            // rel_h = einsum("bhwc,hkc->bhwk", q, Rh), rel_w = einsum("bhwc,wkc->bhwk", q, Rw): the
            // table's first index is the query grid's height or width axis.
            guard let axis = relativePositionAxis(use.node) else { return nil }
            return .tensor(name: scope + (axis == 1 ? ".rel_pos_h" : ".rel_pos_w"), layout: .gatheredRelativePositions,
                           rule: .relativePositionsUngathered)
        case ("Gather", 0) where shape.count == 2 && ["rel_pos_h", "rel_pos_w"].contains(CanonicalNames.leaf(scope)):
            // get_rel_pos: rel_pos[q_coords - k_coords + (k_size - 1)], indices computed in the graph;
            // the scope (from the structure) already says which table the einsum reads.
            return .tensor(name: scope, layout: .asStored, rule: .relativePositionsGatheredByComputedIndices)
        case ("Add", _) where shape.count == 4 && shape[0] == 1 && shape[1] == shape[2] && scope == "image_encoder":
            // ImageEncoderViT.forward: x = x + self.pos_embed.
            return .tensor(name: "image_encoder.pos_embed", layout: .asStored, rule: .positionEmbeddingByScope)
        case ("Add", _) where shape.count == 4 && shape[0] == 1 && scope == SAM2Names.hieraTrunk:
            // Hiera: x + _get_pos_embed(...), which dynamo folds into one [1, H, W, C] constant.
            return .tensor(name: SAM2Names.foldedPositionEmbedding, layout: .asStored, rule: .hieraPositionEmbeddingFolded)
        case ("Add", _) where shape.count == 3 && shape[1] == shape[2] && isTinyViTAttention(scope):
            // TinyViT Attention: (q @ k^T) * scale + attention_biases[:, attention_bias_idxs]. Only
            // there: another family's constant [H, N, N] is not this table.
            return .tensor(name: scope + ".attention_biases", layout: .attentionBiasTable, rule: .attentionBiasTableInverted)
        default:
            return familyRules.lazy.compactMap { $0(use, shape, scope) }.first
        }
    }

    /// A family's rule for a use in a canonical scope that SAM's rules leave unnamed.
    typealias FamilyRule = @Sendable (_ use: ONNXUse, _ shape: [Int], _ scope: String) -> ONNXTarget?

    /// The families whose modules store tensors SAM's modules do not: tried after SAM's rules.
    static let familyRules: [FamilyRule] = [EfficientViTONNXNames.target]

    /// Uses in the exported module's own forward (no module scope): the few SAM tensors that
    /// wrapper code touches directly.
    static func rootTarget(for use: ONNXUse, shape: [Int], components: Set<SAMComponent>) -> ONNXTarget? {
        let op = use.node.opType
        // no_mask_embed.weight.reshape(1, -1, 1, 1), expanded (PromptEncoder.forward) or scaled by
        // (1 - has_mask_input) (SamOnnxModel._embed_masks).
        if (op == "Expand" || op == "Mul"), shape.count == 4, shape[0] == 1, shape[2] == 1, shape[3] == 1,
           components.contains(.promptEncoder) {
            return .tensor(name: "prompt_encoder.no_mask_embed.weight", layout: .noMaskEmbedding, rule: .noMaskEmbedReshaped)
        }
        // cat([iou_token.weight, mask_tokens.weight]).unsqueeze(0).expand(...), then cat with the
        // sparse prompts (MaskDecoder.predict_masks); dynamo folds the expand and feeds Concat.
        if (op == "Expand" || op == "Concat"), use.input == 0, shape.count == 3, shape[0] == 1, shape[1] >= 2,
           components.contains(.maskDecoder) {
            return .outputTokens(iouToken: "mask_decoder.iou_token.weight", maskTokens: "mask_decoder.mask_tokens.weight")
        }
        return nil
    }

    /// `prompt_encoder.not_a_point_embed` or `prompt_encoder.point_embeddings.N`.
    static func isPointEmbedding(_ scope: String) -> Bool {
        scope == "prompt_encoder.not_a_point_embed" || scope.hasPrefix("prompt_encoder.point_embeddings.")
    }

    /// `image_encoder.layers.S.blocks.B.attn`: an attention inside a TinyViT stage (ref:
    /// tiny_vit_sam.py BasicLayer.blocks, TinyViTBlock.attn).
    static func isTinyViTAttention(_ scope: String) -> Bool {
        let parts = scope.split(separator: ".")
        return parts.count == 6 && parts[0] == "image_encoder" && parts[1] == "layers" && parts[3] == "blocks" && parts[5] == "attn"
    }

    /// A Conv whose scope is a BatchNorm's is a conv + BatchNorm module after the exporter fused the
    /// BatchNorm into the conv (the dynamo optimizer keeps the BatchNorm's scope): TinyViT's Conv2d_BN
    /// `X.bn` is conv `X.c`; a family adds its own pair (`familyFusedBatchNorms`).
    static func convModule(_ scope: String) -> String {
        for (norm, conv) in fusedBatchNorms where scope.hasSuffix("." + norm) {
            return String(scope.dropLast(norm.count)) + conv
        }
        return scope
    }

    /// (BatchNorm child, conv child) of the conv + BatchNorm modules: SAM's (TinyViT's Conv2d_BN) and the families'.
    static let fusedBatchNorms: [(norm: String, conv: String)] = [("bn", "c")] + familyFusedBatchNorms

    /// The families' conv + BatchNorm modules, named as `fusedBatchNorms`.
    static let familyFusedBatchNorms: [(norm: String, conv: String)] = [EfficientViTONNXNames.convLayerBatchNorm]

    /// Which axis of the first Einsum operand (b h w c) the second operand's first index names:
    /// 1 (height) or 2 (width); nil for any other equation.
    static func relativePositionAxis(_ node: ONNXNode) -> Int? {
        guard case .string(let equation)? = node.attribute("equation") else { return nil }
        let operands = equation.replacingOccurrences(of: " ", with: "").split(separator: "-").first?.split(separator: ",") ?? []
        guard operands.count == 2, operands[0].count == 4, operands[1].count == 3, let index = operands[1].first,
              let axis = operands[0].firstIndex(of: index).map({ operands[0].distance(from: operands[0].startIndex, to: $0) }),
              axis == 1 || axis == 2 else { return nil }
        return axis
    }

    /// [C,1,1], the broadcast form of a per-channel affine.
    static func isChannelColumn(_ shape: [Int]) -> Bool {
        shape.count == 3 && shape[1] == 1 && shape[2] == 1
    }

    static func gemmTransposesB(_ node: ONNXNode) -> Bool {
        if case .int(let value)? = node.attribute("transB") { return value != 0 }
        return false
    }
}

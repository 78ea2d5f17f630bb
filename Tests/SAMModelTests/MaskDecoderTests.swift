import Foundation
import SAMFormats
import SAMKernels
import SAMTensor
import SAMTestSupport
import Testing
@testable import SAMModel

/// A reference set laid out like the full-size set (`mobile_sam.h5`, `references/<case>/*.npy`,
/// `references/image_embeddings.npy`), shared by the full-size set tests and the committed tiny set.
struct DecoderReferences: Sendable {
    let root: String
    let config: SAMConfig
    let weightsSource: String

    var casesRoot: String { root + "/references" }

    func path(_ relative: String) -> String { root + "/" + relative }

    /// Case folders that hold the official decoder's inputs, sorted.
    var caseNames: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: casesRoot)) ?? []
        return names.filter { FileManager.default.fileExists(atPath: "\(casesRoot)/\($0)/onnx_point_coords.npy") }.sorted()
    }

    func has(_ caseName: String, _ name: String) -> Bool {
        FileManager.default.fileExists(atPath: "\(casesRoot)/\(caseName)/\(name).npy")
    }

    func tensor(_ caseName: String, _ name: String) throws -> FloatTensor {
        FloatTensor(try NPY.read("\(casesRoot)/\(caseName)/\(name).npy"))
    }

    func imageEmbeddings() throws -> FloatTensor {
        FloatTensor(try NPY.read(casesRoot + "/image_embeddings.npy"))
    }

    /// The `prompt_encoder.*` and `mask_decoder.*` tensors of mobile_sam.h5.
    func decoderWeights() throws -> [String: Tensor] {
        try HDF5File(path: path("mobile_sam.h5")).readAll()
            .filter { $0.key.hasPrefix("prompt_encoder.") || $0.key.hasPrefix("mask_decoder.") }
    }

    /// Both modules, loaded strictly (every decoder tensor of the file used).
    func model(tensors: [String: Tensor]? = nil, densePE: FloatTensor? = nil) throws -> (PromptEncoder, MaskDecoder) {
        let weights = WeightStore(try tensors ?? decoderWeights(), source: weightsSource)
        let promptEncoder = try PromptEncoder(weights: weights, prefix: "prompt_encoder", config: config,
                                              densePositionalEncoding: densePE)
        let maskDecoder = try MaskDecoder(weights: weights, prefix: "mask_decoder", config: config)
        try weights.finish()
        return (promptEncoder, maskDecoder)
    }

    struct Comparison {
        var masks: Difference
        var iou: Difference
        var tokens: Int
        /// `predictMasks` alone (prompt encoding excluded).
        var decoderTime: Duration
    }

    /// The official ONNX decoder's path (`SamOnnxModel.forward` without post-processing) on a case's
    /// `onnx_*` inputs, compared with `onnx_low_res_masks` / `onnx_iou_predictions`. The trailing
    /// (0, 0, -1) padding point the export appends is re-created with `appendPaddingPoint`, so the
    /// 100-point case stays inside the 1...100 prompt range.
    func runOfficial(_ caseName: String, model: (PromptEncoder, MaskDecoder)) throws -> Comparison {
        let (promptEncoder, maskDecoder) = model
        var coords = try tensor(caseName, "onnx_point_coords")
        var labels = try tensor(caseName, "onnx_point_labels")
        let padded = Self.stripPaddingPoint(&coords, &labels)
        let sparse = try promptEncoder.embedPoints(coords: coords, labels: labels, appendPaddingPoint: padded)
        let hasMask = try tensor(caseName, "onnx_has_mask_input").data[0]
        let dense = try promptEncoder.denseEmbedding(maskInput: try tensor(caseName, "onnx_mask_input"), hasMaskInput: hasMask)
        let image = try imageEmbeddings()
        let start = ContinuousClock.now
        let (masks, iou) = try maskDecoder.predictMasks(imageEmbeddings: image, imagePE: promptEncoder.denseImagePositionalEncoding(),
                                                        sparse: sparse, dense: dense)
        let elapsed = ContinuousClock.now - start
        let expectedMasks = try tensor(caseName, "onnx_low_res_masks")
        let expectedIoU = try tensor(caseName, "onnx_iou_predictions")
        #expect(masks.shape == expectedMasks.shape)
        #expect(iou.shape == expectedIoU.shape)
        return Comparison(masks: Difference(masks.data, expectedMasks.data), iou: Difference(iou.data, expectedIoU.data),
                          tokens: sparse.shape[1], decoderTime: elapsed)
    }

    /// Removes a trailing (0, 0) point labelled -1 (the export's padding point); true if removed.
    static func stripPaddingPoint(_ coords: inout FloatTensor, _ labels: inout FloatTensor) -> Bool {
        let count = labels.count
        guard count > 1, labels.data[count - 1] == -1, coords.data[2 * count - 2] == 0, coords.data[2 * count - 1] == 0 else {
            return false
        }
        coords = FloatTensor(shape: [1, count - 1, 2], data: Array(coords.data.prefix(2 * (count - 1))))
        labels = FloatTensor(shape: [1, count - 1], data: Array(labels.data.prefix(count - 1)))
        return true
    }
}

/// Seeded random weights for a small prompt encoder + mask decoder (C = 16, g = 4, 2 heads),
/// every key and shape as upstream names them, for the unit tests.
enum SyntheticDecoder {
    static let config = config(numHeads: 2, attentionDownsampleRate: 2)
    /// One 16-wide head in the cross attentions: a few prompt tokens are fewer than the head's
    /// width, so the decoder folds the image-side projections (`TwoWayTransformer.Attention.Folding`)
    /// as MobileSAM's does for a click (8 heads of 16).
    static let foldingConfig = config(numHeads: 1, attentionDownsampleRate: 1)

    static func config(numHeads: Int, attentionDownsampleRate: Int) -> SAMConfig {
        var config = SAMConfig.mobileSAM
        config.promptEncoder = PromptEncoderConfig(embedDim: 16, imageEmbeddingSize: 4, inputImageSize: 32, maskInChannels: 8)
        config.maskDecoder = MaskDecoderConfig(transformerDim: 16, depth: 2, numHeads: numHeads, mlpDim: 24,
                                               attentionDownsampleRate: attentionDownsampleRate,
                                               numMultimaskOutputs: 3, iouHeadDepth: 3, iouHeadHiddenDim: 12)
        config.minPoints = 1
        config.maxPoints = 6
        return config
    }

    /// Uniform floats from SplitMix64, so the values are the same on every platform.
    struct Random {
        var generator: SplitMix64
        init(state: UInt64) { generator = SplitMix64(seed: state) }
        mutating func next() -> Float {
            Float(generator.next() >> 40) / Float(1 << 24) * 2 - 1  // uniform in [-1, 1)
        }
        mutating func tensor(_ shape: [Int], scale: Float = 0.5, offset: Float = 0) -> FloatTensor {
            FloatTensor(shape: shape, data: (0..<shape.reduce(1, *)).map { _ in offset + scale * next() })
        }
    }

    static func tensors(seed: UInt64 = 7, config: SAMConfig = config) -> [String: Tensor] {
        var random = Random(state: seed)
        var out: [String: Tensor] = [:]
        func put(_ key: String, _ shape: [Int], scale: Float = 0.5, offset: Float = 0) {
            out[key] = random.tensor(shape, scale: scale, offset: offset).tensor
        }
        func linear(_ path: String, _ inFeatures: Int, _ outFeatures: Int) {
            put("\(path).weight", [outFeatures, inFeatures], scale: 1 / Float(inFeatures).squareRoot())
            put("\(path).bias", [outFeatures], scale: 0.1)
        }
        func norm(_ path: String, _ dim: Int) {
            put("\(path).weight", [dim], scale: 0.2, offset: 1)
            put("\(path).bias", [dim], scale: 0.1)
        }
        let c = config.promptEncoder.embedDim, m = config.promptEncoder.maskInChannels
        put("prompt_encoder.pe_layer.positional_encoding_gaussian_matrix", [2, c / 2], scale: 1.5)
        for index in 0..<4 { put("prompt_encoder.point_embeddings.\(index).weight", [1, c]) }
        put("prompt_encoder.not_a_point_embed.weight", [1, c])
        put("prompt_encoder.no_mask_embed.weight", [1, c])
        put("prompt_encoder.mask_downscaling.0.weight", [m / 4, 1, 2, 2])
        put("prompt_encoder.mask_downscaling.0.bias", [m / 4], scale: 0.1)
        norm("prompt_encoder.mask_downscaling.1", m / 4)
        put("prompt_encoder.mask_downscaling.3.weight", [m, m / 4, 2, 2])
        put("prompt_encoder.mask_downscaling.3.bias", [m], scale: 0.1)
        norm("prompt_encoder.mask_downscaling.4", m)
        put("prompt_encoder.mask_downscaling.6.weight", [c, m, 1, 1])
        put("prompt_encoder.mask_downscaling.6.bias", [c], scale: 0.1)

        let d = config.maskDecoder
        let crossDim = c / d.attentionDownsampleRate
        put("mask_decoder.iou_token.weight", [1, c])
        put("mask_decoder.mask_tokens.weight", [d.numMultimaskOutputs + 1, c])
        func attention(_ path: String, _ internalDim: Int) {
            for projection in ["q_proj", "k_proj", "v_proj"] { linear("\(path).\(projection)", c, internalDim) }
            linear("\(path).out_proj", internalDim, c)
        }
        for layer in 0..<d.depth {
            let path = "mask_decoder.transformer.layers.\(layer)"
            attention("\(path).self_attn", c)
            attention("\(path).cross_attn_token_to_image", crossDim)
            attention("\(path).cross_attn_image_to_token", crossDim)
            for index in 1...4 { norm("\(path).norm\(index)", c) }
            linear("\(path).mlp.lin1", c, d.mlpDim)
            linear("\(path).mlp.lin2", d.mlpDim, c)
        }
        attention("mask_decoder.transformer.final_attn_token_to_image", crossDim)
        norm("mask_decoder.transformer.norm_final_attn", c)
        put("mask_decoder.output_upscaling.0.weight", [c, c / 4, 2, 2])
        put("mask_decoder.output_upscaling.0.bias", [c / 4], scale: 0.1)
        norm("mask_decoder.output_upscaling.1", c / 4)
        put("mask_decoder.output_upscaling.3.weight", [c / 4, c / 8, 2, 2])
        put("mask_decoder.output_upscaling.3.bias", [c / 8], scale: 0.1)
        for token in 0...d.numMultimaskOutputs {
            let path = "mask_decoder.output_hypernetworks_mlps.\(token).layers"
            linear("\(path).0", c, c)
            linear("\(path).1", c, c)
            linear("\(path).2", c, c / 8)
        }
        linear("mask_decoder.iou_prediction_head.layers.0", c, d.iouHeadHiddenDim)
        linear("mask_decoder.iou_prediction_head.layers.1", d.iouHeadHiddenDim, d.iouHeadHiddenDim)
        linear("mask_decoder.iou_prediction_head.layers.2", d.iouHeadHiddenDim, d.numMultimaskOutputs + 1)
        return out
    }

    static func promptEncoder(_ tensors: [String: Tensor] = tensors(), densePE: FloatTensor? = nil) throws -> PromptEncoder {
        try PromptEncoder(weights: WeightStore(tensors, source: "synthetic"), config: config, densePositionalEncoding: densePE)
    }

    static func maskDecoder(_ tensors: [String: Tensor] = tensors()) throws -> MaskDecoder {
        try MaskDecoder(weights: WeightStore(tensors, source: "synthetic"), config: config)
    }

    /// The decoder of `foldingConfig`.
    static func foldingMaskDecoder() throws -> MaskDecoder {
        try MaskDecoder(weights: WeightStore(tensors(config: foldingConfig), source: "synthetic"), config: foldingConfig)
    }

    /// Expects `body` to throw exactly `expected`.
    static func expectError<E: Error & Equatable>(_ expected: E, _ body: () throws -> Void,
                                                  sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("expected \(expected), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as E {
            #expect(error == expected, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation)
        }
    }
}

/// The mask decoder's contracts on small seeded weights; its numbers against PyTorch are checked
/// on the tiny reference set (below) and the full-size set (FullSizeSetDecoderTests).
@Suite("MaskDecoder")
struct MaskDecoderTests {
    let tensors = SyntheticDecoder.tensors()

    /// Random decoder inputs for the synthetic model: C = 16, g = 4, `tokens` sparse tokens.
    func inputs(tokens: Int, seed: UInt64 = 11) -> (image: FloatTensor, pe: FloatTensor, sparse: FloatTensor, dense: FloatTensor) {
        var random = SyntheticDecoder.Random(state: seed)
        return (random.tensor([1, 16, 4, 4]), random.tensor([1, 16, 4, 4]), random.tensor([1, tokens, 16]), random.tensor([1, 16, 4, 4]))
    }

    @Test("returns all four masks [1, 4, 4g, 4g] and four IoU scores, for 1 to maxPoints + 1 tokens")
    func outputShapes() throws {
        let decoder = try SyntheticDecoder.maskDecoder(tensors)
        #expect(decoder.sparseTokenRange == 1...7)
        #expect(decoder.transformer.depth == 2 && decoder.numMaskTokens == 4 && decoder.transformerDim == 16)
        #expect(decoder.transformer.layers.map(\.skipFirstLayerPE) == [true, false])
        for tokens in [1, 7] {
            let x = inputs(tokens: tokens)
            let (masks, iou) = try decoder.predictMasks(imageEmbeddings: x.image, imagePE: x.pe, sparse: x.sparse, dense: x.dense)
            #expect(masks.shape == [1, 4, 16, 16])
            #expect(iou.shape == [1, 4])
            #expect(masks.data.allSatisfy(\.isFinite) && iou.data.allSatisfy(\.isFinite))
        }
    }

    @Test("sparse token counts and input shapes are checked")
    func inputValidation() throws {
        let decoder = try SyntheticDecoder.maskDecoder(tensors)
        for tokens in [0, 8] {
            let x = inputs(tokens: tokens)
            SyntheticDecoder.expectError(PromptError.pointCount(tokens, allowed: 1...7, what: "number of sparse prompt tokens")) {
                _ = try decoder.predictMasks(imageEmbeddings: x.image, imagePE: x.pe, sparse: x.sparse, dense: x.dense)
            }
        }
        let x = inputs(tokens: 2)
        SyntheticDecoder.expectError(PromptError.shape(input: "image embeddings", expected: "[1,16,H,W]", actual: [1, 8, 4, 4])) {
            _ = try decoder.predictMasks(imageEmbeddings: FloatTensor(zeros: [1, 8, 4, 4]), imagePE: x.pe, sparse: x.sparse, dense: x.dense)
        }
        SyntheticDecoder.expectError(PromptError.shape(input: "image positional encoding", expected: "[1,16,4,4]", actual: [1, 16, 4, 5])) {
            _ = try decoder.predictMasks(imageEmbeddings: x.image, imagePE: FloatTensor(zeros: [1, 16, 4, 5]), sparse: x.sparse, dense: x.dense)
        }
        SyntheticDecoder.expectError(PromptError.shape(input: "sparse prompt embeddings", expected: "[1,N,16]", actual: [1, 2, 8])) {
            _ = try decoder.predictMasks(imageEmbeddings: x.image, imagePE: x.pe, sparse: FloatTensor(zeros: [1, 2, 8]), dense: x.dense)
        }
    }

    @Test("Attention equals softmax(q kᵀ / sqrt(d)) v per head, with downsampled projections")
    func attentionMatchesDefinition() throws {
        let decoder = try SyntheticDecoder.maskDecoder(tensors)
        let attention = decoder.transformer.layers[1].crossAttnTokenToImage
        #expect(attention.internalDim == 8 && attention.numHeads == 2)
        var random = SyntheticDecoder.Random(state: 3)
        let q = random.tensor([1, 3, 16]), k = random.tensor([1, 5, 16]), v = random.tensor([1, 5, 16])
        let actual = attention(q: q, k: k, v: v)

        func project(_ x: FloatTensor, _ layer: NN.Linear) -> [[Double]] {
            let rows = x.count / layer.inFeatures
            let weight = layer.weight.floatTensor().data
            return (0..<rows).map { r in
                (0..<layer.outFeatures).map { o in
                    Double(layer.bias.data[o]) + (0..<layer.inFeatures).reduce(0.0) {
                        $0 + Double(x.data[r * layer.inFeatures + $1]) * Double(weight[o * layer.inFeatures + $1])
                    }
                }
            }
        }
        let pq = project(q, attention.qProj), pk = project(k, attention.kProj), pv = project(v, attention.vProj)
        let headDim = 4
        var mixed = [[Double]](repeating: [Double](repeating: 0, count: 8), count: 3)
        for head in 0..<2 {
            let lanes = (head * headDim)..<((head + 1) * headDim)
            for i in 0..<3 {
                let scores = (0..<5).map { j in lanes.reduce(0.0) { $0 + pq[i][$1] * pk[j][$1] } / Double(headDim).squareRoot() }
                let top = scores.max()!
                let weights = scores.map { exp($0 - top) }
                let total = weights.reduce(0, +)
                for lane in lanes { mixed[i][lane] = (0..<5).reduce(0.0) { $0 + weights[$1] / total * pv[$1][lane] } }
            }
        }
        let expected = project(FloatTensor(shape: [1, 3, 8], data: mixed.flatMap { $0.map(Float.init) }), attention.outProj)
        let worst = zip(actual.data, expected.flatMap { $0 }).map { abs(Double($0) - $1) }.max()!
        #expect(actual.shape == [1, 3, 16])
        #expect(worst < 1e-5, "max error \(worst)")
    }

    @Test("depth, MLP width and token counts come from the weights and must agree with the config")
    func loadingChecks() throws {
        let store = WeightStore(tensors.filter { $0.key.hasPrefix("mask_decoder.") }, source: "synthetic")
        _ = try MaskDecoder(weights: store, config: SyntheticDecoder.config)
        try store.finish()

        func expectInvalid(_ tensors: [String: Tensor], config: SAMConfig = SyntheticDecoder.config, key: String, mentioning text: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                _ = try MaskDecoder(weights: WeightStore(tensors, source: "synthetic"), config: config)
                Issue.record("accepted", sourceLocation: sourceLocation)
            } catch {
                guard case .invalid(let errorKey, let reason, _) = error else {
                    Issue.record("wrong error \(error)", sourceLocation: sourceLocation)
                    return
                }
                #expect(errorKey == key, sourceLocation: sourceLocation)
                #expect(reason.contains(text), "\(reason)", sourceLocation: sourceLocation)
            }
        }
        var config = SyntheticDecoder.config
        config.maskDecoder.depth = 3
        expectInvalid(tensors, config: config, key: "mask_decoder.transformer.layers", mentioning: "config.maskDecoder.depth is 3")
        config = SyntheticDecoder.config
        config.maskDecoder.mlpDim = 32
        expectInvalid(tensors, config: config, key: "mask_decoder.transformer.layers.0.mlp.lin1.weight", mentioning: "config.maskDecoder.mlpDim")
        config = SyntheticDecoder.config
        config.maskDecoder.numHeads = 3
        expectInvalid(tensors, config: config, key: "mask_decoder.transformer.layers.0.self_attn.q_proj.weight", mentioning: "3 heads")
        config = SyntheticDecoder.config
        config.maskDecoder.iouHeadDepth = 2
        expectInvalid(tensors, config: config, key: "mask_decoder.iou_prediction_head.layers", mentioning: "config.maskDecoder.iouHeadDepth")
        config = SyntheticDecoder.config
        config.maskDecoder.numMultimaskOutputs = 2
        expectInvalid(tensors, config: config, key: "mask_decoder.mask_tokens.weight", mentioning: "config.maskDecoder.numMultimaskOutputs")

        config = SyntheticDecoder.config
        config.maskDecoder.attentionDownsampleRate = 4
        SyntheticDecoder.expectError(WeightError.shapeMismatch(key: "mask_decoder.transformer.layers.0.cross_attn_token_to_image.q_proj.weight",
                                                                expected: [4, 16], actual: [8, 16], source: "synthetic")) {
            _ = try MaskDecoder(weights: WeightStore(tensors, source: "synthetic"), config: config)
        }
        var missing = tensors
        missing["mask_decoder.output_hypernetworks_mlps.2.layers.1.bias"] = nil
        SyntheticDecoder.expectError(WeightError.missing(key: "mask_decoder.output_hypernetworks_mlps.2.layers.1.bias", source: "synthetic")) {
            _ = try SyntheticDecoder.maskDecoder(missing)
        }
    }

    /// The final attention run on the 5 output tokens against all 12, with either float32 linear
    /// kernel (the synthetic sizes never fold, so both take the same route). Mathematically the
    /// rows are equal; OpenBLAS may round a product differently by its row count: measured 0 on its
    /// Cooperlake, SkylakeX and Sandybridge kernels, at most 2.4e-7 on Haswell and Prescott (values
    /// of magnitude ~1 after the final LayerNorm). The bound is four times that; a wrong row is O(1)
    /// off. The full-size set's verify covers the folded route.
    @Test("the final attention on the output tokens alone gives the full run's rows for them",
          arguments: [Kernels.Float32LinearKernel.blas] + (Kernels.panelKernelAvailable ? [.panels] : []))
    func outputTokensOnly(kernel: Kernels.Float32LinearKernel) throws {
        let decoder = try SyntheticDecoder.maskDecoder(tensors)
        let x = inputs(tokens: 7)
        let imageTokens = Kernels.nchwToTokens(x.image, plus: x.dense), pe = Kernels.nchwToTokens(x.pe)
        let tokens = FloatTensor(shape: [1, 12, 16], data: decoder.iouToken.weight.data + decoder.maskTokens.weight.data + x.sparse.data)
        let (full, outputs) = try Kernels.withFloat32LinearKernel(kernel) {
            (decoder.transformer(imageTokens: imageTokens, imagePETokens: pe, pointEmbedding: tokens),
             decoder.transformer(imageTokens: imageTokens, imagePETokens: pe, pointEmbedding: tokens, kept: nil,
                                 outputTokens: decoder.outputTokenCount, observer: nil))
        }
        #expect(full.queries.shape == [1, 12, 16] && outputs.queries.shape == [1, 5, 16])
        let worst = zip(outputs.queries.data, full.queries.data.prefix(5 * 16)).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst <= 1e-6, "\(kernel): output rows differ by \(worst)")
        #expect(outputs.keys == full.keys)
    }

    @Test("the observer sees every module, in PyTorch's hook order, and changes nothing")
    func observerOrder() throws {
        let decoder = try SyntheticDecoder.maskDecoder(tensors)
        let x = inputs(tokens: 3)
        var paths: [String] = []
        var shapes: [String: [Int]] = [:]
        let observed = try decoder.predictMasks(imageEmbeddings: x.image, imagePE: x.pe, sparse: x.sparse, dense: x.dense) { path, value in
            paths.append(path)
            shapes[path] = value.shape
        }
        let plain = try decoder.predictMasks(imageEmbeddings: x.image, imagePE: x.pe, sparse: x.sparse, dense: x.dense)
        #expect(observed.masks == plain.masks && observed.iou == plain.iou)

        func attention(_ path: String) -> [String] { ["q_proj", "k_proj", "v_proj", "out_proj"].map { "\(path).\($0)" } + [path] }
        func block(_ index: Int) -> [String] {
            let path = "mask_decoder.transformer.layers.\(index)"
            return attention("\(path).self_attn") + ["\(path).norm1"] + attention("\(path).cross_attn_token_to_image") + ["\(path).norm2"]
                + ["\(path).mlp.lin1", "\(path).mlp.act", "\(path).mlp.lin2", "\(path).mlp", "\(path).norm3"]
                + attention("\(path).cross_attn_image_to_token") + ["\(path).norm4", path, "\(path):keys"]
        }
        func mlp(_ path: String) -> [String] { (0..<3).map { "\(path).layers.\($0)" } + [path] }
        let expected = block(0) + block(1) + attention("mask_decoder.transformer.final_attn_token_to_image")
            + ["mask_decoder.transformer.norm_final_attn", "mask_decoder.transformer", "mask_decoder.transformer:keys"]
            + (0...4).map { "mask_decoder.output_upscaling.\($0)" } + ["mask_decoder.output_upscaling"]
            + (0..<4).flatMap { mlp("mask_decoder.output_hypernetworks_mlps.\($0)") }
            + ["mask_decoder:masks"] + mlp("mask_decoder.iou_prediction_head") + ["mask_decoder:iou_predictions"]
        #expect(paths == expected)
        // tokens = iou + 4 mask tokens + 3 sparse; cross attention works at C / 2.
        #expect(shapes["mask_decoder.transformer.layers.0"] == [1, 8, 16])
        // The dumps hold every token, though predict_masks reads only the 5 output tokens.
        #expect(shapes["mask_decoder.transformer.final_attn_token_to_image"] == [1, 8, 16])
        #expect(shapes["mask_decoder.transformer"] == [1, 8, 16])
        #expect(shapes["mask_decoder.transformer.layers.0:keys"] == [1, 16, 16])
        #expect(shapes["mask_decoder.transformer.layers.1.cross_attn_image_to_token.q_proj"] == [1, 16, 8])
        #expect(shapes["mask_decoder.output_upscaling.1"] == [1, 4, 8, 8])
    }
}

/// The committed tiny reference set (`reference_outputs/tiny`, transformer dim 32, 8x8 grid):
/// the same architecture and case layout as the full-size set, from upstream PyTorch.
@Suite("Decoder tiny references")
struct MaskDecoderTinyReferenceTests {
    static let tiny: DecoderReferences = {
        let data = FileManager.default.contents(atPath: TestPaths.tinyReferences + "/config.json") ?? Data()
        let config = (try? JSONDecoder().decode(SAMConfig.self, from: data)) ?? .mobileSAM
        return DecoderReferences(root: TestPaths.tinyReferences, config: config, weightsSource: "tiny/mobile_sam.h5")
    }()
    /// Same bar as the full-size set; the tiny set lands ~1e-7 from PyTorch.
    static let tolerance: Float = 1e-4

    @Test("config.json decodes as SAMConfig with the tiny decoder sizes")
    func config() throws {
        let data = try #require(FileManager.default.contents(atPath: Self.tiny.path("config.json")))
        let config = try JSONDecoder().decode(SAMConfig.self, from: data)
        #expect(config.promptEncoder.embedDim == 32 && config.promptEncoder.imageEmbeddingSize == 8)
        #expect(config.maskDecoder.transformerDim == 32 && config.maskDecoder.numHeads == 2 && config.maskDecoder.mlpDim == 64)
        #expect(Self.tiny.caseNames.count == 8, "\(Self.tiny.caseNames)")
    }

    @Test("official decoder path matches SamOnnxModel on every case", arguments: tiny.caseNames)
    func officialPath(caseName: String) throws {
        let result = try Self.tiny.runOfficial(caseName, model: try Self.tiny.model())
        print("Decoder tiny \(caseName) [official, \(result.tokens) tokens]: masks \(result.masks); iou \(result.iou)")
        #expect(result.masks.within(Self.tolerance), "\(caseName) masks: \(result.masks)")
        #expect(result.iou.within(Self.tolerance), "\(caseName) iou: \(result.iou)")
    }

    @Test("split path (no padding) matches PyTorch on the point-only cases",
          arguments: tiny.caseNames.filter { tiny.has($0, "split_points") })
    func splitPath(caseName: String) throws {
        let (promptEncoder, maskDecoder) = try Self.tiny.model()
        let sparse = try promptEncoder.embedPoints(coords: try Self.tiny.tensor(caseName, "split_points"),
                                                   labels: try Self.tiny.tensor(caseName, "split_labels"))
        let (masks, iou) = try maskDecoder.predictMasks(imageEmbeddings: try Self.tiny.imageEmbeddings(),
                                                        imagePE: promptEncoder.denseImagePositionalEncoding(), sparse: sparse,
                                                        dense: try promptEncoder.denseEmbedding(maskInput: nil, hasMaskInput: 0))
        for (name, actual) in [("split_sparse_embeddings", sparse), ("split_masks", masks), ("split_iou_predictions", iou)] {
            let expected = try Self.tiny.tensor(caseName, name)
            try #require(actual.shape == expected.shape, "\(name): \(actual.shape) vs \(expected.shape)")
            let difference = Difference(actual.data, expected.data)
            print("Decoder tiny \(caseName) [split] \(name): \(difference)")
            #expect(difference.within(Self.tolerance), "\(name): \(difference)")
        }
    }

    @Test("dense PE from the weights matches image_points_embeddings.bin")
    func densePositionalEncoding() throws {
        let (promptEncoder, _) = try Self.tiny.model()
        let computed = promptEncoder.denseImagePositionalEncoding()
        let exported = FloatTensor(try RawBlob.read(Self.tiny.path("image_points_embeddings.bin"), dtype: .float32, shape: computed.shape))
        let difference = Difference(computed.data, exported.data)
        print("Decoder tiny dense PE: \(difference)")
        #expect(difference.within(1e-5), "\(difference)")
    }

    /// Case point1's official run with the observer, against the forward-hook dumps of every
    /// prompt-encoder and mask-decoder module (`cases[point1].module_outputs` in manifest.json):
    /// every dumped module must be reported, in the same order, within tolerance.
    @Test("every module output of point1 matches PyTorch's forward hooks, in order")
    func moduleOutputs() throws {
        let manifestData = try #require(FileManager.default.contents(atPath: Self.tiny.path("manifest.json")))
        let manifest = try #require(try JSONSerialization.jsonObject(with: manifestData) as? [String: Any])
        let cases = try #require(manifest["cases"] as? [[String: Any]])
        let point1 = try #require(cases.first { $0["name"] as? String == "point1" })
        let rows = try #require(point1["module_outputs"] as? [[String: Any]])
        let dumps = rows.compactMap { row -> (module: String, file: String)? in
            guard let module = row["module"] as? String, let file = row["file"] as? String, (row["call"] as? Int) == 0 else { return nil }
            return (module, file)
        }
        #expect(dumps.count == rows.count, "modules called more than once are not expected in the decoder")

        var reported: [(String, FloatTensor)] = []
        let observer: ModuleObserver = { reported.append(($0, $1)) }
        let (promptEncoder, maskDecoder) = try Self.tiny.model()
        var coords = try Self.tiny.tensor("point1", "onnx_point_coords")
        var labels = try Self.tiny.tensor("point1", "onnx_point_labels")
        let padded = DecoderReferences.stripPaddingPoint(&coords, &labels)
        // SamOnnxModel.forward's order: _embed_points, _embed_masks, get_dense_pe, predict_masks.
        let sparse = try promptEncoder.embedPoints(coords: coords, labels: labels, appendPaddingPoint: padded, observer: observer)
        let dense = try promptEncoder.denseEmbedding(maskInput: try Self.tiny.tensor("point1", "onnx_mask_input"),
                                                     hasMaskInput: try Self.tiny.tensor("point1", "onnx_has_mask_input").data[0],
                                                     observer: observer)
        let imagePE = promptEncoder.denseImagePositionalEncoding(observer: observer)
        _ = try maskDecoder.predictMasks(imageEmbeddings: try Self.tiny.imageEmbeddings(), imagePE: imagePE,
                                         sparse: sparse, dense: dense, observer: observer)

        let hooked = reported.filter { !$0.0.contains(":") }
        #expect(hooked.map(\.0) == dumps.map(\.module))
        var worst: (module: String, difference: Float) = ("", 0)
        for (path, value) in hooked {
            guard let dump = dumps.first(where: { $0.module == path }) else { continue }
            let expected = FloatTensor(try NPY.read(Self.tiny.path(dump.file)))
            guard value.shape == expected.shape else {
                Issue.record("\(path): shape \(value.shape), PyTorch \(expected.shape)")
                continue
            }
            let difference = Difference(value.data, expected.data)
            #expect(difference.within(Self.tolerance), "\(path): \(difference)")
            if difference.maxAbs >= worst.difference { worst = (path, difference.maxAbs) }
        }
        print("Decoder tiny point1: \(hooked.count) module outputs, worst \(worst.module) max abs \(worst.difference)")
    }
}

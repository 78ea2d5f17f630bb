import SAMFormats
@testable import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// The committed tiny EfficientViT-SAM set's TorchScript encoder export (`export_efficientvit_sam.py
/// --onnx`): `EfficientViTSamImageEncoder` at the root (names and scopes start at `backbone.`, `neck.`,
/// `norm`), every ConvLayer's BatchNorm folded into its conv by the exporter (unnamed `onnx::Conv_*`),
/// the output LayerNorm2d's affine as [1,C,1,1] constants.
@Suite("EfficientViT-SAM ONNX import")
struct EfficientViTONNXImportTests {
    static let set = TestPaths.efficientViTSAMTinyReferences
    static let encoder = set + "/ImageEncoder.onnx"

    /// The checkpoint's encoder with every ConvLayer's BatchNorm (`X.conv` + `X.norm`) folded here in
    /// double precision at the zoo's eps 1e-6, as the exporter folded it in float32.
    static func checkpointFolded() throws -> ImportedWeights {
        var weights = try StateDictImport.importPyTorch(set + "/efficientvit_sam.pt")
        for key in weights.names where key.hasSuffix(".norm.running_var") {
            let layer = String(key.dropLast(".norm.running_var".count))
            let norm = ["weight", "bias", "running_mean", "running_var"].map { "\(layer).norm.\($0)" }
            let convWeight = try #require(weights["\(layer).conv.weight"])
            let parts = try norm.map { try #require(weights[$0]) }
            let folded = try LayoutRules.foldBatchNorm(weight: convWeight, convBias: weights["\(layer).conv.bias"], gamma: parts[0],
                                                       beta: parts[1], mean: parts[2], variance: parts[3], eps: 1e-6)
            let origin = TensorOrigin(file: "test", sources: [layer], rule: .foldBatchNorm, derivation: .foldedByImporter)
            for name in norm { weights.tensors[name] = nil }
            weights.tensors["\(layer).conv.weight"] = ImportedTensor(tensor: folded.weight, origin: origin)
            weights.tensors["\(layer).conv.bias"] = ImportedTensor(tensor: folded.bias, origin: origin)
        }
        return weights
    }

    @Test("the encoder export gives the checkpoint's encoder: same names, BatchNorms folded within 2e-7, the rest bit for bit")
    func encoderMatchesCheckpoint() throws {
        let imported = try ONNXImport.importModel(Self.encoder)
        #expect(imported.components == [.imageEncoder] && imported.unmapped.isEmpty)
        let comparison = WeightComparison(imported, against: try Self.checkpointFolded(), components: [.imageEncoder])
        // Measured: the exporter's float32 fold lands within 6e-8 of the double-precision one (1 ulp).
        comparison.expectMatches(foldTolerance: 2e-7)
        #expect(comparison.bitExact.count + comparison.differing.count == 69, "\(comparison)")
        print("tiny EfficientViT ImageEncoder.onnx vs efficientvit_sam.pt: \(comparison)")
        // The output LayerNorm2d's affine, stored [1,32,1,1], is the checkpoint's [32] reshaped.
        let norm = try #require(imported.tensors["image_encoder.norm.weight"])
        #expect(norm.shape == [32] && norm.origin.rule == .batchedChannelAffineReshaped && norm.origin.sources.first?.hasPrefix("onnx::Mul_") == true)
        #expect(imported.tensors["image_encoder.norm.bias"]?.origin.rule == .batchedChannelAffineReshaped)
        // A folded ConvLayer is named by its Conv node's scope; a fewer-norm conv's own bias keeps its name.
        #expect(imported.tensors["image_encoder.backbone.stages.0.op_list.0.conv.bias"]?.origin.rule == .convBiasByScope)
        #expect(imported.tensors["image_encoder.backbone.stages.3.op_list.0.main.inverted_conv.conv.bias"]?.origin.rule == .exportedName)
    }

    /// torch's dynamo exporter fuses a ConvLayer's BatchNorm into its conv and leaves the Conv node in the
    /// BatchNorm's scope (`X.norm`): the module is the ConvLayer's conv, as TinyViT's `X.bn` is `X.c`.
    @Test("a Conv node in a ConvLayer's BatchNorm scope names the ConvLayer's conv")
    func fusedBatchNormScope() {
        #expect(ONNXConsumerRules.convModule("image_encoder.backbone.stages.0.op_list.0.norm") == "image_encoder.backbone.stages.0.op_list.0.conv")
        #expect(ONNXConsumerRules.convModule("image_encoder.layers.0.blocks.0.conv1.bn") == "image_encoder.layers.0.blocks.0.conv1.c")
        #expect(ONNXConsumerRules.convModule("mask_decoder.output_upscaling.0") == "mask_decoder.output_upscaling.0")
        #expect(ONNXConsumerRules.convModule("image_encoder.neck.1.norm_x") == "image_encoder.neck.1.norm_x")
    }

    /// The decoders: efficientsam's SamOnnxModel (SAM's rules) and upstream's deployment export, which
    /// takes no mask input and so holds no `mask_downscaling` weights.
    @Test("both decoder exports give the checkpoint's decoder bit for bit", arguments: [false, true])
    func decodersMatchCheckpoint(deployment: Bool) throws {
        let file = Self.set + (deployment ? "/efficientvit_sam_decoder_deployment.onnx" : "/efficientvit_sam_decoder.onnx")
        let decoder = try ONNXImport.importModel(file)
        #expect(decoder.components == [.promptEncoder, .maskDecoder] && decoder.unmapped.isEmpty)
        let checkpoint = try StateDictImport.importPyTorch(Self.set + "/efficientvit_sam.pt")
        let comparison = WeightComparison(decoder, against: checkpoint, components: [.promptEncoder, .maskDecoder])
        #expect(comparison.differing.isEmpty && comparison.onlyInCandidate.isEmpty, "\(comparison)")
        let missing = comparison.onlyInReference
        #expect(deployment ? !missing.isEmpty && missing.allSatisfy { $0.hasPrefix("prompt_encoder.mask_downscaling.") } : missing.isEmpty,
                "\(missing)")
    }

    /// The export (BatchNorms folded) merged with the checkpoint (BatchNorms kept for the runtime): every
    /// folded ConvLayer is checked against the checkpoint's, folded at the runtime's eps, and the
    /// checkpoint's unfolded tensors are what the merge keeps, in either order.
    @Test("merged with the checkpoint, the export's folds agree and the checkpoint's layers are kept",
          arguments: [false, true])
    func mergesWithCheckpoint(exportFirst: Bool) throws {
        let checkpoint = Self.set + "/efficientvit_sam.pt"
        let inputs = exportFirst ? [Self.encoder, checkpoint] : [checkpoint, Self.encoder]
        let merged = try SAMImporter.importFiles(inputs)
        let alone = try StateDictImport.importPyTorch(checkpoint)
        let comparison = WeightComparison(merged, against: alone)
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
        // One agreement per tensor the export holds (69), the folded ones within the fold's rounding.
        #expect(merged.agreements.count == 69, "\(merged.agreements.count)")
        let worst = try #require(merged.worstAgreement)
        #expect(worst.maxAbsDifference > 0 && worst.maxAbsDifference <= 2e-7, "\(worst)")
        #expect(merged.agreements.filter { $0.derivations.contains(.foldedByImporter) }.count == 2 * 23)
    }

    /// Folded at another eps, the checkpoint's BatchNorms no longer give the export's convs: refused,
    /// naming both files and the first disagreeing tensor, never a silent choice of one side.
    @Test("a checkpoint whose BatchNorms do not give the export's folds is refused naming both files")
    func disagreeingFoldIsRefused() throws {
        var options = ImportOptions()
        options.runtimeBatchNormEps = 1e-2
        let checkpoint = Self.set + "/efficientvit_sam.pt"
        #expect {
            _ = try SAMImporter.importFiles([Self.encoder, checkpoint], options: options)
        } throws: { error in
            guard let error = error as? ImportError else { return false }
            return error.code == .conflictingTensors && "\(error)".contains(Self.encoder) && "\(error)".contains(checkpoint)
                && "\(error)".contains(".conv.") && "\(error)".contains("eps 0.01")
        }
    }
}

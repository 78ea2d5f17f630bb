import SAMFormats
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// The full-size reference set (../shared/fixtures/mobilesam-seed0, or SAM_REFERENCE_SET_DIR): every way
/// a user can hand over MobileSAM must give the same canonical weights as its state dict.
/// Runs only where the full-size set exists; `make check-reference-set` runs it (and requires the full-size set).
@Suite("Full-size set: import: mobilesam-seed0",
       .enabled(if: TestPaths.fullSizeSetIsPresent, "no full-size reference set (SAM_REFERENCE_SET_DIR)"))
struct FullSizeSetImportTests {
    static func path(_ name: String) -> String { TestPaths.fullSizeSet + "/" + name }

    /// (c) the state dict, the reference for every other set.
    static let stateDict: ImportedWeights = try! StateDictImport.importHDF5(path("mobile_sam.h5"))

    /// What the split PromptEncoder.onnx cannot hold: it takes no mask input.
    static let maskDownscaling = "prompt_encoder.mask_downscaling."

    @Test("(c) mobile_sam.h5: 327 canonical tensors, BN folded, head and counters dropped")
    func stateDictAlone() {
        let weights = Self.stateDict
        #expect(weights.names.count == 327)
        #expect(weights.components == [.imageEncoder, .promptEncoder, .maskDecoder])
        #expect(weights.tensors.values.filter { $0.origin.rule == .foldBatchNorm }.count == 54)
        #expect(weights.dropped.count == 27 + 4)
        print("fullSet (c) mobile_sam.h5:\n\(weights.summary)")
    }

    @Test("(a) ImageEncoder + PromptEncoder + MaskDecoder ONNX + image_points_embeddings.bin")
    func splitExports() throws {
        let weights = try SAMImporter.importFiles(
            ["ImageEncoder.onnx", "PromptEncoder.onnx", "MaskDecoder.onnx", "image_points_embeddings.bin"].map(Self.path))
        let comparison = WeightComparison(weights, against: Self.stateDict) { !$0.hasPrefix(Self.maskDownscaling) }
        comparison.expectMatches()
        print("fullSet (a) split ONNX + blob vs h5 (without \(Self.maskDownscaling)*): \(comparison)")
        #expect(Self.stateDict.names.filter { $0.hasPrefix(Self.maskDownscaling) }.count == 10)
        #expect(weights.denseImagePE?.tensor.shape == [1, 256, 64, 64])
        #expect(weights.tensors["prompt_encoder.no_mask_embed.weight"]?.origin.sources == ["onnx::Expand_199"])
        #expect(weights.tensors["mask_decoder.iou_token.weight"]?.origin.sources == ["onnx::Expand_1196"])
        expectAttentionBiasesExact(weights)
    }

    @Test("(b) ImageEncoder.onnx + mobile_sam_decoder.onnx")
    func officialExports() throws {
        let weights = try SAMImporter.importFiles(["ImageEncoder.onnx", "mobile_sam_decoder.onnx"].map(Self.path))
        let comparison = WeightComparison(weights, against: Self.stateDict)
        comparison.expectMatches()
        print("fullSet (b) ImageEncoder.onnx + mobile_sam_decoder.onnx vs h5: \(comparison)")
        let folded = comparison.differing.map(\.name)
        print("fullSet (b) BN-folded convs that differ: \(folded.count) of 54; largest abs \(comparison.worst.map { "\($0.maxAbs) at \($0.name)" } ?? "none"), "
              + "largest rel \(comparison.worstRelative.map { "\($0.maxRel) at \($0.name)" } ?? "none")")
        // neck.1 and neck.3 share one deduplicated initializer (onnx::Mul_3208, via Identity).
        #expect(weights.tensors["image_encoder.neck.3.weight"]?.origin.sources == ["onnx::Mul_3208"])
        #expect(weights.tensors["image_encoder.neck.1.weight"]?.origin.sources == ["onnx::Mul_3208"])
        expectAttentionBiasesExact(weights)
    }

    @Test("(d) mobile_sam.h5 + image_points_embeddings.bin; the blob agrees with every other set's")
    func stateDictWithBlob() throws {
        let weights = try SAMImporter.importFiles(["mobile_sam.h5", "image_points_embeddings.bin"].map(Self.path))
        let comparison = WeightComparison(weights, against: Self.stateDict)
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
        let dense = try #require(weights.denseImagePE)
        #expect(dense.tensor.shape == [1, 256, 64, 64])
        #expect(weights.facts.imageEmbeddingSize == 64)
    }

    @Test("everything at once: the merge accepts it and reports the largest difference")
    func everything() throws {
        let weights = try SAMImporter.importFiles(
            ["mobile_sam.h5", "ImageEncoder.onnx", "PromptEncoder.onnx", "MaskDecoder.onnx", "mobile_sam_decoder.onnx",
             "image_points_embeddings.bin"].map(Self.path))
        #expect(weights.names.count == 327)
        let worst = try #require(weights.worstAgreement)
        print("fullSet, all inputs merged: \(weights.agreements.count) overlaps, \(weights.agreements.filter(\.bitExact).count) bit-exact; worst \(worst)")
        print(weights.summary)
    }

    /// The recovered TinyViT attention biases equal the state dict's exactly.
    func expectAttentionBiasesExact(_ weights: ImportedWeights, sourceLocation: SourceLocation = #_sourceLocation) {
        let names = Self.stateDict.names.filter { $0.hasSuffix(".attention_biases") }
        #expect(names.count == 10, sourceLocation: sourceLocation)
        for name in names {
            #expect(weights.tensors[name]?.origin.rule == .attentionBiasTableInverted, "\(name)", sourceLocation: sourceLocation)
            #expect(weights[name]?.isBitwiseEqual(to: Self.stateDict[name]!) == true, "\(name)", sourceLocation: sourceLocation)
        }
    }
}

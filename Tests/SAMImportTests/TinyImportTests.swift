import SAMFormats
import SAMImport
import SAMTensor
import SAMTestSupport
import Testing

/// The committed tiny reference set (reference_outputs/tiny): the same kinds of files as the
/// full-size reference set, at small widths. Every import must give the h5's canonical tensors.
@Suite("Tiny import")
struct TinyImportTests {
    static let folder = TestPaths.tinyReferences
    static func path(_ name: String) -> String { folder + "/" + name }

    static let stateDict: ImportedWeights = try! StateDictImport.importHDF5(path("mobile_sam.h5"))

    @Test("state dict: BatchNorm folded, counters and classifier head dropped, nothing else touched")
    func stateDictRules() throws {
        let weights = Self.stateDict
        #expect(weights.names.count == 231)
        #expect(!weights.names.contains { $0.contains(".bn.") || $0.hasSuffix("num_batches_tracked") })
        #expect(!weights.names.contains { $0.hasPrefix("image_encoder.head.") || $0.hasPrefix("image_encoder.norm_head.") })
        #expect(weights.dropped.filter { $0.rule == .dropBatchNormCounter }.count == 18)
        #expect(weights.dropped.filter { $0.rule == .dropClassifierHead }.count == 4)
        #expect(weights.tensors["image_encoder.patch_embed.seq.0.c.bias"]?.origin.rule == .foldBatchNorm)

        // The fold, by hand in double precision, for one Conv2d_BN.
        let h5 = try HDF5File(path: Self.path("mobile_sam.h5"))
        let prefix = "image_encoder.layers.0.blocks.0.conv2"
        let w = try h5.tensor(named: "\(prefix).c.weight"), gamma = try h5.tensor(named: "\(prefix).bn.weight")
        let beta = try h5.tensor(named: "\(prefix).bn.bias"), mean = try h5.tensor(named: "\(prefix).bn.running_mean")
        let variance = try h5.tensor(named: "\(prefix).bn.running_var")
        let folded = try #require(weights["\(prefix).c.weight"]), bias = try #require(weights["\(prefix).c.bias"])
        let perChannel = w.elementCount / w.shape[0]
        for channel in 0..<w.shape[0] {
            let scale = gamma.value(at: channel) / (variance.value(at: channel) + 1e-5).squareRoot()
            #expect(bias.floats()[channel] == Float(beta.value(at: channel) - mean.value(at: channel) * scale))
            for index in channel * perChannel..<(channel + 1) * perChannel {
                #expect(folded.floats()[index] == Float(w.value(at: index) * scale))
            }
        }
        // Everything not folded is the dataset itself.
        for (name, imported) in weights.tensors where imported.origin.rule == .stateDictKey {
            #expect(imported.tensor.isBitwiseEqual(to: try h5.tensor(named: name)), "\(name)")
        }
    }

    @Test("nested-group HDF5 gives the flat one's tensors bit for bit")
    func nestedEqualsFlat() throws {
        let nested = try StateDictImport.importHDF5(Self.path("mobile_sam_nested.h5"))
        let comparison = WeightComparison(nested, against: Self.stateDict)
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
    }

    @Test("TorchScript ImageEncoder.onnx gives the h5's image encoder (BN folded by the exporter within 1e-6)")
    func torchScriptEncoder() throws {
        let encoder = try ONNXImport.importModel(Self.path("ImageEncoder.onnx"))
        #expect(encoder.components == [.imageEncoder])
        let comparison = WeightComparison(encoder, against: Self.stateDict, components: [.imageEncoder])
        comparison.expectMatches()
        print("tiny ImageEncoder.onnx (TorchScript) vs mobile_sam.h5: \(comparison)")
        for name in encoder.names where name.hasSuffix("attention_biases") {
            #expect(comparison.bitExact.contains(name), "\(name) recovered from the baked table must equal the h5")
        }
        #expect(encoder.names.filter { $0.hasSuffix("attention_biases") }.count == 4)
        #expect(encoder.facts.imageEmbeddingSize == 8 && encoder.facts.embeddingDim == 32)
    }

    @Test("official decoder ONNX gives the h5's prompt encoder and mask decoder bit for bit")
    func officialDecoder() throws {
        let decoder = try ONNXImport.importModel(Self.path("mobile_sam_decoder.onnx"))
        #expect(decoder.components == [.promptEncoder, .maskDecoder])
        let comparison = WeightComparison(decoder, against: Self.stateDict, components: [.promptEncoder, .maskDecoder])
        #expect(comparison.sameKeys && comparison.differing.isEmpty, "\(comparison)")
        #expect(decoder.denseImagePE == nil, "TorchScript keeps get_dense_pe() as grid @ matrix, nothing folded")
        #expect(decoder.ignored.map(\.rule) == [.peCoordinateGrid])
        #expect(decoder.tensors["mask_decoder.mask_tokens.weight"]?.origin.rule == .outputTokensSplit)
        #expect(decoder.tensors["prompt_encoder.no_mask_embed.weight"]?.origin.rule == .noMaskEmbedReshaped)
    }

    @Test("encoder + decoder + dense-PE blob: the whole model, equal to the h5")
    func wholeModel() throws {
        let weights = try SAMImporter.importFiles(["ImageEncoder.onnx", "mobile_sam_decoder.onnx", "image_points_embeddings.bin"].map(Self.path))
        WeightComparison(weights, against: Self.stateDict).expectMatches()
        let dense = try #require(weights.denseImagePE)
        #expect(dense.tensor.shape == [1, 32, 8, 8])
        #expect(dense.origin.rule == .densePEBlob)
    }

    @Test("h5 + dense-PE blob: g inferred from the byte count")
    func stateDictWithBlob() throws {
        let weights = try SAMImporter.importFiles(["mobile_sam.h5", "image_points_embeddings.bin"].map(Self.path))
        #expect(weights.denseImagePE?.tensor.shape == [1, 32, 8, 8])
        #expect(weights.facts.imageEmbeddingSize == 8)
        let raw = try RawBlob.read(Self.path("image_points_embeddings.bin"), dtype: .float32, shape: [1, 32, 8, 8])
        #expect(weights.denseImagePE?.tensor.isBitwiseEqual(to: raw) == true)
    }

    @Test("every tiny input together merges; overlaps agree and the worst difference is a BN fold")
    func everythingTogether() throws {
        let weights = try SAMImporter.importFiles(
            ["mobile_sam.h5", "mobile_sam_nested.h5", "ImageEncoder.onnx", "mobile_sam_decoder.onnx",
             "dynamo/ImageEncoder.onnx", "dynamo/mobile_sam_decoder.onnx", "image_points_embeddings.bin"].map(Self.path))
        #expect(weights.names.count == 231)
        let worst = try #require(weights.worstAgreement)
        print("tiny, all inputs merged: \(weights.agreements.count) overlaps, \(weights.agreements.filter(\.bitExact).count) bit-exact; worst \(worst)")
        print(weights.summary)
    }
}

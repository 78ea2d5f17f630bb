import SAMImport
import Testing

@Suite("Canonical names")
struct CanonicalNamesTests {
    @Test("wrapper prefixes are stripped and module-relative names get their component",
          arguments: [
            ("md.transformer.layers.0.norm1.weight", "mask_decoder.transformer.layers.0.norm1.weight", "md."),
            ("model.prompt_encoder.point_embeddings.0.weight", "prompt_encoder.point_embeddings.0.weight", "model."),
            ("mask_decoder.iou_token.weight", "mask_decoder.iou_token.weight", ""),
            ("neck.0.weight", "image_encoder.neck.0.weight", ""),
            ("pe.pe_layer.positional_encoding_gaussian_matrix", "prompt_encoder.pe_layer.positional_encoding_gaussian_matrix", "pe."),
          ])
    func resolves(name: String, canonical: String, prefix: String) throws {
        let resolved = try #require(CanonicalNames.resolveParameter(name))
        #expect(resolved.path == canonical)
        #expect(resolved.wrapperPrefix == prefix)
    }

    @Test("exporter inventions are not parameter names")
    func inventionsAreNotParameters() {
        #expect(CanonicalNames.resolveParameter("onnx::MatMul_2553") == nil)
        #expect(CanonicalNames.resolveParameter("val_118") == nil)
        #expect(CanonicalNames.resolveParameter("model.layers.0.blocks.0.conv1.c.weight_bias") == nil)
    }
}

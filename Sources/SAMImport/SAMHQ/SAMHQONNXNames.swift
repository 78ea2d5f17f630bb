/// SAM-HQ's official decoder export (SysCV sam-hq's scripts/export_onnx_model.py: `SamOnnxModel` calls
/// `mask_decoder.predict_masks` and the HQ modules directly, so the TorchScript scopes of their nodes
/// start at the modules themselves, `/hf_mlp/layers.0/MatMul`, not under `mask_decoder`). These are
/// `MaskDecoderHQ`'s own children, the ones SAM's decoder lacks (`hf_mlp.layers` must not read as
/// TinyViT's `layers`).
/// ref: segment_anything_hq/modeling/mask_decoder_hq.py MaskDecoderHQ.__init__ (L73-102);
/// segment_anything_hq/utils/onnx.py SamOnnxModel.forward
enum SAMHQONNXNames {
    static let decoderChildren: [String: SAMComponent] = [
        "hf_token": .maskDecoder, "hf_mlp": .maskDecoder, "compress_vit_feat": .maskDecoder,
        "embedding_encoder": .maskDecoder, "embedding_maskfeature": .maskDecoder,
    ]
}

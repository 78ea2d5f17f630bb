"""SAM 2 / 2.1 configurations the SAM 2 reference exporter can build.

Each configuration names an upstream ``sam2`` hydra config (``configs/sam2.1/*.yaml`` or
``configs/sam2/*.yaml``) and, for the small ``tiny`` set committed to the repository, the
overrides that shrink it. ``build_sam2.py`` composes and instantiates exactly that config, as
``sam2.build_sam.build_sam2`` does (image-predictor post-processing overrides included).

``swift_config(model)`` returns the dict written as ``config.json``: keys and nesting of the
Swift ``SAMConfig`` Codable (family ``hiera``), read from the instantiated modules, so the file
always describes the model that made the references.
"""

from __future__ import annotations

from typing import Any, Dict, List

import torch

# ref: sam2/build_sam.py build_sam2 (apply_postprocessing=True): what SAM2ImagePredictor users get.
POSTPROCESSING_OVERRIDES = [
    "++model.sam_mask_decoder_extra_args.dynamic_multimask_via_stability=true",
    "++model.sam_mask_decoder_extra_args.dynamic_multimask_stability_delta=0.05",
    "++model.sam_mask_decoder_extra_args.dynamic_multimask_stability_thresh=0.98",
]

# The published models: (hydra config, checkpoint name users have).
PUBLISHED = {
    "sam2.1_hiera_tiny": ("configs/sam2.1/sam2.1_hiera_t.yaml", "sam2.1_hiera_tiny.pt"),
    "sam2.1_hiera_small": ("configs/sam2.1/sam2.1_hiera_s.yaml", "sam2.1_hiera_small.pt"),
    "sam2.1_hiera_base_plus": ("configs/sam2.1/sam2.1_hiera_b+.yaml", "sam2.1_hiera_base_plus.pt"),
    "sam2.1_hiera_large": ("configs/sam2.1/sam2.1_hiera_l.yaml", "sam2.1_hiera_large.pt"),
    "sam2_hiera_tiny": ("configs/sam2/sam2_hiera_t.yaml", "sam2_hiera_tiny.pt"),
    "sam2_hiera_small": ("configs/sam2/sam2_hiera_s.yaml", "sam2_hiera_small.pt"),
    "sam2_hiera_base_plus": ("configs/sam2/sam2_hiera_b+.yaml", "sam2_hiera_base_plus.pt"),
    "sam2_hiera_large": ("configs/sam2/sam2_hiera_l.yaml", "sam2_hiera_large.pt"),
}

# SAM 2.1 tiny's structure at small widths and a 96x96 input, so the committed set (weights,
# references and per-module dumps) stays small and a Swift test runs it in well under a second.
# Grids 24, 12, 6, 3 (stride 4, then three query-pooling stages). Windows 8, 4, 4, 2: stages 1 and 2
# have 3x3 windows, stage 3's 4x4 windows pad the 6x6 grid to 8x8 (as 64 pads to 70 at full size),
# the stage-4 transition pools a padded 4x4 window to 2x2 and crops 4x4 to 3x3, stage 4 pads 3x3 to
# 4x4. Block 4 is global. The background position embedding (5x5) is resized to 24x24 by a
# non-integer factor. Every window that a query-pooling block uses (the previous stage's) is even,
# as upstream needs. Widths 8, 16, 32, 64; the neck and decoder 16 wide.
TINY_OVERRIDES = [
    "++model.image_size=96",
    "++model.image_encoder.trunk.embed_dim=8",
    "++model.image_encoder.trunk.num_heads=1",
    "++model.image_encoder.trunk.stages=[1,2,3,2]",
    "++model.image_encoder.trunk.global_att_blocks=[4]",
    "++model.image_encoder.trunk.window_spec=[8,4,4,2]",
    "++model.image_encoder.trunk.window_pos_embed_bkg_spatial_size=[5,5]",
    "++model.image_encoder.neck.d_model=16",
    "++model.image_encoder.neck.position_encoding.num_pos_feats=16",
    "++model.image_encoder.neck.backbone_channel_list=[64,32,16,8]",
    # Video-only modules, kept (their weights are in every checkpoint) but small.
    "++model.memory_attention.d_model=16",
    "++model.memory_attention.num_layers=1",
    "++model.memory_attention.layer.d_model=16",
    "++model.memory_attention.layer.dim_feedforward=16",
    "++model.memory_attention.layer.self_attention.embedding_dim=16",
    "++model.memory_attention.layer.self_attention.feat_sizes=[6,6]",
    "++model.memory_attention.layer.cross_attention.embedding_dim=16",
    "++model.memory_attention.layer.cross_attention.feat_sizes=[6,6]",
    "++model.memory_attention.layer.cross_attention.kv_in_dim=8",
    "++model.memory_encoder.out_dim=8",
    "++model.memory_encoder.in_dim=16",
    "++model.memory_encoder.position_encoding.num_pos_feats=8",
    "++model.memory_encoder.mask_downsampler.embed_dim=16",
    "++model.memory_encoder.fuser.layer.dim=16",
    "++model.memory_encoder.fuser.num_layers=1",
    "++model.memory_encoder.mask_downsampler.total_stride=4",
]

# SAM2Base._build_sam_heads hard-codes the decoder's transformer (depth 2, mlp 2048, 8 heads) and
# IoU head (256 hidden); the tiny set rebuilds those two modules smaller, same classes and names.
TINY_HEADS = {"transformer_mlp_dim": 32, "transformer_heads": 2, "iou_head_hidden_dim": 16}

# Seeded weights leave mask 0's logits small, so its stability score (share of logits beyond
# +-0.05) stays near 0.7 and single-mask output always falls back to a multimask output. The tiny
# set scales mask token 0's last hypernetwork layer by this factor (weights only): then point1's
# mask 0 scores 0.969 (falls back) and points5's 0.987 (kept), so both branches are checked.
TINY_SINGLE_MASK_SCALE = 20.0

# ref: sam2/build_sam.py build_sam2_video_predictor: the class and, with apply_postprocessing=True,
# what SAM2VideoPredictor users get on top of POSTPROCESSING_OVERRIDES.
VIDEO_TARGET_OVERRIDE = "++model._target_=sam2.sam2_video_predictor.SAM2VideoPredictor"
VIDEO_POSTPROCESSING_OVERRIDES = [
    "++model.binarize_mask_from_pts_for_mem_enc=true",
    "++model.fill_hole_area=8",
]

# The `tiny` set's video modules do not make a runnable tracker: its mask downsampler (total stride
# 4) turns the 96x96 mask into a 24x24 map, but the memory encoder adds it to the 6x6 image feature.
# `tiny_video` is `tiny` with a downsampler that reaches the image grid (total stride 16 = 96 / 6)
# in two stride-4 steps (channels 1 -> 16 -> 256, then 1x1 to 16) with 3x3 kernels and padding 1:
# the published models take four stride-2 steps with the same kernel and padding, which would double
# the committed checkpoint (a 64 -> 256 3x3 conv); a port that hard-codes stride 2 is caught here.
TINY_VIDEO_OVERRIDES = [o for o in TINY_OVERRIDES if not o.startswith("++model.memory_encoder.mask_downsampler.")] + [
    "++model.memory_encoder.mask_downsampler.embed_dim=16",
    "++model.memory_encoder.mask_downsampler.kernel_size=3",
    "++model.memory_encoder.mask_downsampler.stride=4",
    "++model.memory_encoder.mask_downsampler.padding=1",
    "++model.memory_encoder.mask_downsampler.total_stride=16",
]

CONFIGS: Dict[str, Dict[str, Any]] = {
    "tiny": {"hydra": PUBLISHED["sam2.1_hiera_tiny"][0], "overrides": TINY_OVERRIDES, "heads": TINY_HEADS,
             "single_mask_scale": TINY_SINGLE_MASK_SCALE, "checkpoint_name": "sam2.1_hiera_tiny_widths.pt"},
    "tiny_video": {"hydra": PUBLISHED["sam2.1_hiera_tiny"][0], "overrides": TINY_VIDEO_OVERRIDES, "heads": TINY_HEADS,
                   "single_mask_scale": TINY_SINGLE_MASK_SCALE, "checkpoint_name": "checkpoint.pt"},
}
for _name, (_hydra, _checkpoint) in PUBLISHED.items():
    CONFIGS[_name] = {"hydra": _hydra, "overrides": [], "heads": None, "single_mask_scale": None, "checkpoint_name": _checkpoint}


def swift_config(model: Any, max_points: int = 100) -> Dict[str, Any]:
    """config.json for an instantiated ``SAM2Base`` (Swift ``SAMConfig`` keys, family "hiera")."""
    trunk, neck = model.image_encoder.trunk, model.image_encoder.neck
    stages: List[int] = [trunk.stage_ends[0] + 1] + [b - a for a, b in zip(trunk.stage_ends, trunk.stage_ends[1:])]
    first = trunk.blocks[0]
    decoder = model.sam_mask_decoder
    transformer = decoder.transformer
    prompt = model.sam_prompt_encoder
    grid = model.sam_image_embedding_size
    return {
        "imageEncoder": {
            "family": "hiera",
            "imageSize": model.image_size,
            "inChannels": trunk.patch_embed.proj.in_channels,
            "embedDim": first.dim,
            "numHeads": first.attn.num_heads,
            "stages": stages,
            "globalAttentionBlocks": sorted(trunk.global_att_blocks),
            "windowSpec": list(trunk.window_spec),
            "positionEmbeddingSize": list(trunk.window_pos_embed_bkg_spatial_size),
            "queryPoolStages": len(trunk.q_pool_blocks),
            "queryStride": trunk.q_stride[0],
            "mlpRatio": first.mlp.layers[0].out_features / first.dim,
            "neckDim": neck.d_model,
            "fpnTopDownLevels": sorted(neck.fpn_top_down_levels),
            "scalp": model.image_encoder.scalp,
            "highResolutionFeatures": bool(model.use_high_res_features_in_sam),
            "addNoMemoryEmbedding": bool(model.directly_add_no_mem_embed),
        },
        "promptEncoder": {
            "embedDim": prompt.embed_dim,
            "imageEmbeddingSize": grid,
            "inputImageSize": model.image_size,
            "maskInChannels": prompt.mask_downscaling[0].out_channels * 4,
        },
        "maskDecoder": {
            "transformerDim": decoder.transformer_dim,
            "depth": transformer.depth,
            "numHeads": transformer.num_heads,
            "mlpDim": transformer.mlp_dim,
            "attentionDownsampleRate": transformer.embedding_dim // transformer.layers[0].cross_attn_token_to_image.internal_dim,
            "numMultimaskOutputs": decoder.num_multimask_outputs,
            "iouHeadDepth": decoder.iou_prediction_head.num_layers,
            "iouHeadHiddenDim": decoder.iou_prediction_head.layers[0].out_features,
            "sam2": {
                "highResolutionFeatures": bool(decoder.use_high_res_features),
                "iouSigmoid": bool(decoder.iou_prediction_head.sigmoid_output),
                "objectScoreHead": object_score_head(decoder),
                "dynamicMultimaskViaStability": bool(decoder.dynamic_multimask_via_stability),
                "stabilityDelta": float(decoder.dynamic_multimask_stability_delta),
                "stabilityThreshold": float(decoder.dynamic_multimask_stability_thresh),
            },
        },
        "minPoints": 1,
        "maxPoints": max_points,
    }


def object_score_head(decoder: Any) -> str:
    """"mlp", "linear" or "none": MaskDecoder's pred_obj_score_head (mask_decoder.py __init__)."""
    head = getattr(decoder, "pred_obj_score_head", None)
    if head is None:
        return "none"
    return "linear" if isinstance(head, torch.nn.Linear) else "mlp"


# --- video (SAM2VideoPredictor) ---------------------------------------------------------------

# SAM2Base / SAM2VideoPredictor attributes that steer tracking, written as they are on the model.
VIDEO_FIELDS = [
    "num_maskmem", "image_size", "backbone_stride", "sigmoid_scale_for_mem_enc", "sigmoid_bias_for_mem_enc",
    "binarize_mask_from_pts_for_mem_enc", "use_mask_input_as_output_without_sam", "max_cond_frames_in_attn",
    "directly_add_no_mem_embed", "multimask_output_in_sam", "multimask_min_pt_num", "multimask_max_pt_num",
    "multimask_output_for_tracking", "use_multimask_token_for_obj_ptr", "iou_prediction_use_sigmoid",
    "memory_temporal_stride_for_eval", "non_overlap_masks_for_mem_enc", "use_obj_ptrs_in_encoder",
    "max_obj_ptrs_in_encoder", "add_tpos_enc_to_obj_ptrs", "proj_tpos_enc_in_obj_ptrs",
    "use_signed_tpos_enc_to_obj_ptrs", "only_obj_ptrs_in_the_past_for_eval", "pred_obj_scores",
    "pred_obj_scores_mlp", "fixed_no_obj_ptr", "soft_no_obj_ptr", "use_mlp_for_obj_ptr_proj",
    "fill_hole_area", "non_overlap_masks", "clear_non_cond_mem_around_input", "add_all_frames_to_correct_as_cond",
    "mem_dim", "hidden_dim",
]


def video_config(model: Any, composed: Any = None) -> Dict[str, Any]:
    """The ``"video"`` object of a video set's config.json: every SAM2Base / SAM2VideoPredictor
    setting tracking depends on, read from the instantiated model (``composed``, the hydra config it
    was built from, only for the two RoPE numbers no module keeps: the feature grid it was built for)."""
    from sam2.modeling.sam2_utils import MLP

    def plain(value: Any) -> Any:
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return value
        if isinstance(value, (int,)):
            return int(value)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    out: Dict[str, Any] = {name: plain(getattr(model, name)) for name in VIDEO_FIELDS}
    out["no_obj_embed_spatial"] = model.no_obj_embed_spatial is not None
    out["sam_image_embedding_size"] = model.sam_image_embedding_size
    out["obj_ptr_proj"] = _projection(model.obj_ptr_proj)
    out["obj_ptr_tpos_proj"] = _projection(model.obj_ptr_tpos_proj)
    out["no_obj_ptr"] = hasattr(model, "no_obj_ptr")
    out["object_score_head"] = object_score_head(model.sam_mask_decoder)
    out["mask_downsample"] = _conv(model.mask_downsample) if hasattr(model, "mask_downsample") else None

    attention = model.memory_attention
    layer = attention.layers[0]
    layer_cfg = composed.model.memory_attention.layer if composed is not None else None

    def rope(attn: Any, key: str) -> Dict[str, Any]:
        entry = {
            "class": type(attn).__name__,
            "embedding_dim": attn.embedding_dim,
            "kv_in_dim": attn.kv_in_dim,
            "internal_dim": attn.internal_dim,
            "num_heads": attn.num_heads,
            "dropout": float(attn.dropout_p),
        }
        if hasattr(attn, "compute_cis"):
            entry["rope_theta"] = float(attn.compute_cis.keywords["theta"])
            entry["rope_k_repeat"] = bool(attn.rope_k_repeat)
            entry["rope_dim"] = int(attn.compute_cis.keywords["dim"])
            sizes = list(layer_cfg[key].feat_sizes) if layer_cfg is not None and "feat_sizes" in layer_cfg[key] else None
            entry["feat_sizes"] = sizes
            if sizes is not None:
                assert attn.freqs_cis.shape[0] == sizes[0] * sizes[1]
        return entry

    out["memory_attention"] = {
        "d_model": attention.d_model,
        "num_layers": attention.num_layers,
        "pos_enc_at_input": bool(attention.pos_enc_at_input),
        "batch_first": bool(attention.batch_first),
        "dim_feedforward": layer.dim_feedforward,
        "activation": layer.activation_str,
        "pos_enc_at_attn": bool(layer.pos_enc_at_attn),
        "pos_enc_at_cross_attn_keys": bool(layer.pos_enc_at_cross_attn_keys),
        "pos_enc_at_cross_attn_queries": bool(layer.pos_enc_at_cross_attn_queries),
        "self_attention": rope(layer.self_attn, "self_attention"),
        "cross_attention": rope(layer.cross_attn_image, "cross_attention"),
        "norm_eps": float(attention.norm.eps),
    }
    # The fields the brief names at top level of memory attention (self and cross share them in every config).
    for key in ("num_heads", "rope_theta", "feat_sizes", "kv_in_dim", "rope_k_repeat"):
        out["memory_attention"][key] = out["memory_attention"]["cross_attention"].get(key)

    encoder = model.memory_encoder
    convs = [m for m in encoder.mask_downsampler.encoder if isinstance(m, torch.nn.Conv2d)]
    strided, final = convs[:-1], convs[-1]
    total_stride = 1
    for conv in strided:
        total_stride *= conv.stride[0]
    block = encoder.fuser.layers[0] if len(encoder.fuser.layers) else None
    pos = encoder.position_encoding
    out["memory_encoder"] = {
        "in_dim": encoder.pix_feat_proj.in_channels,
        "out_dim": encoder.out_proj.out_channels if isinstance(encoder.out_proj, torch.nn.Conv2d) else encoder.pix_feat_proj.out_channels,
        "out_proj": isinstance(encoder.out_proj, torch.nn.Conv2d),
        "mask_downsampler": {
            "kernel_size": strided[0].kernel_size[0],
            "stride": strided[0].stride[0],
            "padding": strided[0].padding[0],
            "total_stride": total_stride,
            "num_layers": len(strided),
            "channels": [strided[0].in_channels] + [c.out_channels for c in strided],
            "embed_dim": final.out_channels,
            "activation": type(encoder.mask_downsampler.encoder[2]).__name__.lower(),
        },
        "fuser": {
            "num_layers": len(encoder.fuser.layers),
            "input_projection": isinstance(encoder.fuser.proj, torch.nn.Conv2d),
            "cx_block": None if block is None else {
                "dim": block.dwconv.in_channels,
                "kernel_size": block.dwconv.kernel_size[0],
                "padding": block.dwconv.padding[0],
                "depthwise": block.dwconv.groups == block.dwconv.in_channels,
                "layer_scale": block.gamma is not None,
                "norm_eps": float(block.norm.eps),
                "mlp_ratio": block.pwconv1.out_features // block.pwconv1.in_features,
            },
        },
        "position_encoding": {
            "class": type(pos).__name__,
            "num_pos_feats": pos.num_pos_feats * 2,  # the config's value; the module keeps half
            "temperature": pos.temperature,
            "normalize": bool(pos.normalize),
            "scale": float(pos.scale),
        },
    }
    assert isinstance(model.obj_ptr_proj, (MLP, torch.nn.Linear, torch.nn.Identity))
    return out


def _projection(module: Any) -> Dict[str, Any]:
    from sam2.modeling.sam2_utils import MLP

    if isinstance(module, MLP):
        return {"kind": "mlp", "num_layers": module.num_layers, "activation": type(module.act).__name__.lower()}
    if isinstance(module, torch.nn.Linear):
        return {"kind": "linear", "in": module.in_features, "out": module.out_features}
    return {"kind": "identity"}


def _conv(conv: Any) -> Dict[str, Any]:
    return {"in": conv.in_channels, "out": conv.out_channels, "kernel_size": conv.kernel_size[0], "stride": conv.stride[0]}

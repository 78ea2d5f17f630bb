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

CONFIGS: Dict[str, Dict[str, Any]] = {
    "tiny": {"hydra": PUBLISHED["sam2.1_hiera_tiny"][0], "overrides": TINY_OVERRIDES, "heads": TINY_HEADS,
             "single_mask_scale": TINY_SINGLE_MASK_SCALE, "checkpoint_name": "sam2.1_hiera_tiny_widths.pt"},
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

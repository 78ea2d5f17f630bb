#!/usr/bin/env python3
"""Save a SAM 2 / 2.1 checkpoint as a Hugging Face ``transformers`` ``Sam2Model`` checkpoint.

Usage::

    # the committed fixture: the tiny SAM 2.1 set's checkpoint as model.safetensors
    venv/bin/python converters/export_hf_sam2.py --set reference_outputs/sam2_tiny \\
        --out Tests/SAMImportTests/Fixtures/hf_sam2_tiny.safetensors

    # full size, on demand (nothing of it is committed)
    venv/bin/python converters/export_hf_sam2.py --set /tmp/sam2.1-tiny --out /tmp/sam2.1-tiny-hf/model.safetensors

The set's ``{"model": state_dict}`` checkpoint (upstream ``sam2`` names, as ``export_sam2.py``
writes it) is renamed to ``transformers``' names, its video-only weights left out, and loaded
into a real ``transformers.Sam2Model`` built from the set's ``config.json`` (strict: every key
used, every parameter set), then written with ``save_pretrained`` (safetensors). Only
``model.safetensors`` is kept at ``--out``.

``transformers``' own forward pass then runs on the set's encoder input and on every predictor
case, and is compared with the set's PyTorch (upstream ``SAM2ImagePredictor``) outputs: a wrong
rename shows as an error of the size of the values, not of float rounding. The figures are
printed as JSON (and written beside ``--out`` as ``<name>.report.json`` with ``--report``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import transformers
    from transformers import Sam2Config, Sam2Model

# Upstream (SAM2Base) module path -> transformers' Sam2Model, applied in order to every key; the
# MLP layer shift and the point-embedding rows are done separately.
# ref: sam2/modeling/sam2_base.py, backbones/hieradet.py, sam/*.py; transformers 5.23 modeling_sam2.py
RENAMES = [
    (r"^image_encoder\.trunk\.", "vision_encoder.backbone."),
    (r"^image_encoder\.neck\.convs\.(\d+)\.conv\.", r"vision_encoder.neck.convs.\1."),
    (r"\.patch_embed\.proj\.", ".patch_embed.projection."),
    (r"^sam_prompt_encoder\.", "prompt_encoder."),
    (r"^sam_mask_decoder\.", "mask_decoder."),
    (r"^no_mem_embed$", "no_memory_embedding"),
    (r"prompt_encoder\.pe_layer\.positional_encoding_gaussian_matrix$", "prompt_encoder.shared_embedding.positional_embedding"),
    (r"\.mask_downscaling\.0\.", ".mask_embed.conv1."),
    (r"\.mask_downscaling\.1\.", ".mask_embed.layer_norm1."),
    (r"\.mask_downscaling\.3\.", ".mask_embed.conv2."),
    (r"\.mask_downscaling\.4\.", ".mask_embed.layer_norm2."),
    (r"\.mask_downscaling\.6\.", ".mask_embed.conv3."),
    (r"\.output_upscaling\.0\.", ".upscale_conv1."),
    (r"\.output_upscaling\.1\.", ".upscale_layer_norm."),
    (r"\.output_upscaling\.3\.", ".upscale_conv2."),
    (r"\.out_proj\.", ".o_proj."),
    (r"\.norm_final_attn\.", ".layer_norm_final_attn."),
    (r"\.norm(\d)\.", r".layer_norm\1."),
]
# Two-layer MLPs (Hiera blocks, the two-way transformer): layers.0 / layers.1 -> proj_in / proj_out.
TWO_LAYER_MLP = re.compile(r"^(.*\.mlp)\.layers\.([01])\.(weight|bias)$")
# Three-layer heads: layers.0, 1, 2 -> proj_in, layers.0, proj_out.
HEAD_MLP = re.compile(r"^(.*(?:output_hypernetworks_mlps\.\d+|iou_prediction_head|pred_obj_score_head))\.layers\.(\d+)\.(weight|bias)$")
POINT_EMBEDDING = re.compile(r"^sam_prompt_encoder\.point_embeddings\.(\d+)\.weight$")
VIDEO_ONLY = ("memory_attention.", "memory_encoder.", "obj_ptr_proj.", "obj_ptr_tpos_proj.", "mask_downsample.",
              "maskmem_tpos_enc", "no_mem_pos_enc", "no_obj_ptr", "no_obj_embed_spatial")
SHARED_PE = "shared_image_embedding.positional_embedding"
PROMPT_PE = "prompt_encoder.shared_embedding.positional_embedding"


def hf_name(key: str) -> str:
    for pattern, replacement in RENAMES:
        key = re.sub(pattern, replacement, key)
    match = TWO_LAYER_MLP.match(key)
    if match:
        return f"{match.group(1)}.{'proj_in' if match.group(2) == '0' else 'proj_out'}.{match.group(3)}"
    match = HEAD_MLP.match(key)
    if match:
        layer = int(match.group(2))
        part = {0: "proj_in", 1: "layers.0", 2: "proj_out"}.get(layer)
        if part is None:
            raise SystemExit(f"{key}: only three-layer heads have a transformers name")
        return f"{match.group(1)}.{part}.{match.group(3)}"
    return key


def hf_state_dict(upstream: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """The image-mode weights of an upstream SAM2Base state dict under transformers' names."""
    renamed: Dict[str, torch.Tensor] = {}
    point_rows: Dict[int, torch.Tensor] = {}
    for key, value in upstream.items():
        if key.startswith(VIDEO_ONLY):
            continue
        match = POINT_EMBEDDING.match(key)
        if match:
            point_rows[int(match.group(1))] = value
            continue
        renamed[hf_name(key)] = value
    # transformers keeps the four point embeddings (each [1, C] upstream) as one [4, C] table.
    renamed["prompt_encoder.point_embed.weight"] = torch.cat([point_rows[i] for i in sorted(point_rows)], dim=0)
    # and the random-Fourier matrix twice: the prompt encoder's and the image-wide one (not tied).
    renamed[SHARED_PE] = renamed[PROMPT_PE].clone()
    return renamed


def hf_config(cfg: Dict[str, Any]) -> Sam2Config:
    """transformers' Sam2Config for one of this project's SAM 2 config.json files."""
    enc, pe, md = cfg["imageEncoder"], cfg["promptEncoder"], cfg["maskDecoder"]
    stages = len(enc["stages"])
    dims = [enc["embedDim"] * 2 ** i for i in range(stages)]  # ref: hieradet.py dim_mul=2.0 at each stage
    heads = [enc["numHeads"] * 2 ** i for i in range(stages)]  # head_mul=2.0
    grid = enc["imageSize"] // 4
    backbone = dict(
        hidden_size=enc["embedDim"], num_attention_heads=enc["numHeads"], num_channels=enc["inChannels"],
        image_size=[enc["imageSize"]] * 2, num_query_pool_stages=enc["queryPoolStages"],
        query_stride=[enc["queryStride"]] * 2, blocks_per_stage=enc["stages"], embed_dim_per_stage=dims,
        num_attention_heads_per_stage=heads, window_size_per_stage=enc["windowSpec"],
        global_attention_blocks=enc["globalAttentionBlocks"], mlp_ratio=enc["mlpRatio"],
        window_positional_embedding_background_size=enc["positionEmbeddingSize"],
    )
    vision = dict(
        backbone_config=dict(model_type="sam2_hiera_det_model", **backbone), backbone_channel_list=dims[::-1],
        backbone_feature_sizes=[[grid >> i, grid >> i] for i in range(3)], fpn_hidden_size=enc["neckDim"],
        fpn_top_down_levels=enc["fpnTopDownLevels"],
    )
    prompt = dict(hidden_size=pe["embedDim"], image_size=pe["inputImageSize"],
                  patch_size=pe["inputImageSize"] // pe["imageEmbeddingSize"], mask_input_channels=pe["maskInChannels"])
    sam2 = md["sam2"]
    decoder = dict(
        hidden_size=md["transformerDim"], mlp_dim=md["mlpDim"], num_hidden_layers=md["depth"],
        num_attention_heads=md["numHeads"], attention_downsample_rate=md["attentionDownsampleRate"],
        num_multimask_outputs=md["numMultimaskOutputs"], iou_head_depth=md["iouHeadDepth"],
        iou_head_hidden_dim=md["iouHeadHiddenDim"],
        dynamic_multimask_via_stability=sam2["dynamicMultimaskViaStability"],
        dynamic_multimask_stability_delta=sam2["stabilityDelta"],
        dynamic_multimask_stability_thresh=sam2["stabilityThreshold"],
    )
    return Sam2Config(vision_config=vision, prompt_encoder_config=prompt, mask_decoder_config=decoder)


def build_hf_model(cfg: Dict[str, Any], checkpoint: Path) -> Sam2Model:
    stored = torch.load(checkpoint, map_location="cpu", weights_only=True)
    upstream = stored.get("model", stored)
    model = Sam2Model(hf_config(cfg))
    missing, unexpected = model.load_state_dict(hf_state_dict(upstream), strict=True)
    assert not missing and not unexpected
    model.eval()
    return model


# --- transformers' forward vs the set's PyTorch references -----------------------------------------


def max_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def compare_with_references(model: Sam2Model, root: Path) -> Dict[str, Any]:
    refs = root / "references"
    image = torch.from_numpy(np.load(refs / "input_image.npy"))
    with torch.no_grad():
        high0, high1, embed = model.get_image_embeddings(image)
    report: Dict[str, Any] = {
        "transformers": transformers.__version__, "torch": torch.__version__,
        "image_embed_max_abs": max_abs(embed.numpy(), np.load(refs / "image_embed.npy")),
        "high_res_feats_0_max_abs": max_abs(high0.numpy(), np.load(refs / "high_res_feats_0.npy")),
        "high_res_feats_1_max_abs": max_abs(high1.numpy(), np.load(refs / "high_res_feats_1.npy")),
        "cases": {},
    }
    manifest = json.loads((root / "manifest.json").read_text())
    for case in manifest["cases"]:
        if "predictor" not in case:
            continue
        folder = refs / case["name"]
        # The decoder-frame prompt: box corners as labels 2 and 3, then upstream's padding point, which
        # transformers appends itself when no box is passed separately.
        coords = np.load(folder / "onnx_point_coords.npy")[:, :-1]
        labels = np.load(folder / "onnx_point_labels.npy")[:, :-1]
        feeds = dict(input_points=torch.from_numpy(coords)[:, None],
                     input_labels=torch.from_numpy(labels.astype(np.int64))[:, None])
        if float(np.load(folder / "onnx_has_mask_input.npy").ravel()[0]) > 0:
            feeds["input_masks"] = torch.from_numpy(np.load(folder / "onnx_mask_input.npy"))
        multimask = bool(np.load(folder / "multimask_output.npy").ravel()[0])
        with torch.no_grad():
            out = model(image_embeddings=[high0, high1, embed], multimask_output=multimask, **feeds)
        # SAM2ImagePredictor clamps the low-res logits it returns; transformers does not.
        # ref: sam2/sam2_image_predictor.py SAM2ImagePredictor._predict (torch.clamp(low_res_masks, -32.0, 32.0))
        masks = torch.clamp(out.pred_masks[0], -32.0, 32.0).numpy()
        report["cases"][case["name"]] = {
            "low_res_masks_max_abs": max_abs(masks, np.load(folder / "low_res_masks.npy")),
            "iou_predictions_max_abs": max_abs(out.iou_scores[0].numpy(), np.load(folder / "iou_predictions.npy")),
        }
    cases = report["cases"].values()
    report["low_res_masks_max_abs"] = max(c["low_res_masks_max_abs"] for c in cases)
    report["iou_predictions_max_abs"] = max(c["iou_predictions_max_abs"] for c in cases)
    return report


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, required=True, help="a SAM 2 reference set (export_sam2.py's folder)")
    parser.add_argument("--checkpoint", type=Path, help="the upstream .pt (default: the set's only .pt)")
    parser.add_argument("--out", type=Path, required=True, help="the model.safetensors to write")
    parser.add_argument("--report", action="store_true", help="also write <out>.report.json")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    checkpoint = args.checkpoint
    if checkpoint is None:
        found = sorted(args.set.glob("*.pt"))
        if len(found) != 1:
            raise SystemExit(f"{args.set}: {len(found)} .pt files; pass --checkpoint")
        checkpoint = found[0]
    cfg = json.loads((args.set / "config.json").read_text())
    model = build_hf_model(cfg, checkpoint)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder, safe_serialization=True)
        shutil.copyfile(Path(folder) / "model.safetensors", args.out)
    report: Dict[str, Any] = {"out": str(args.out), "bytes": args.out.stat().st_size, "checkpoint": str(checkpoint)}
    report.update(compare_with_references(model, args.set))
    text = json.dumps(report, indent=1)
    print(text)
    if args.report:
        args.out.with_suffix(".report.json").write_text(text + "\n")


if __name__ == "__main__":
    main()

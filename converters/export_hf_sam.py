#!/usr/bin/env python3
"""Save a SAM (ViT) state dict as a Hugging Face ``transformers`` ``SamModel`` checkpoint.

Usage::

    # the committed fixture: the tiny ViT set's weights as model.safetensors
    venv/bin/python converters/export_hf_sam.py --config vit_tiny \\
        --weights reference_outputs/vit_tiny/sam.h5 --references reference_outputs/vit_tiny \\
        --out Tests/SAMImportTests/Fixtures/hf_vit_tiny.safetensors

    # full-size ViT-B, on demand (nothing of it is committed)
    venv/bin/python converters/export_hf_sam.py --config vit_b \\
        --weights /tmp/vit_b_set/sam.h5 --references /tmp/vit_b_set --out /tmp/vit_b_hf/model.safetensors

The upstream state dict (``segment_anything`` names, as ``export_reference.py`` writes it) is
loaded into the upstream classes (strict), renamed to ``transformers``' names the way
``transformers/models/sam/convert_sam_to_hf.py`` renames the published checkpoints, loaded into a
real ``transformers.SamModel`` (strict: every key used, every parameter set) and written with
``save_pretrained`` (safetensors). Only ``model.safetensors`` is kept at ``--out``.

With ``--references``, ``transformers``' own forward pass runs on the set's encoder input and
predictor cases and is compared with the set's PyTorch (upstream) outputs, twice: as
``transformers`` builds the model (its mask-decoder transformer LayerNorms ``layer_norm1..4`` use
``SamMaskDecoderConfig.layer_norm_eps`` = 1e-6) and with those four norms at upstream's 1e-5
(``nn.LayerNorm``'s default in ``TwoWayTransformer``). The figures are printed as JSON (and
written beside ``--out`` as ``<name>.report.json`` with ``--report``). ``--hf-set DIR`` also writes
a copy of the reference set whose expected outputs are ``transformers``' own (image embeddings,
and every case's four masks and IoU scores from them): ``samverify`` on it measures the native
runtime against ``transformers``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import transformers
    from transformers import SamConfig, SamModel

# Upstream module path -> transformers' (substring replacements applied in this order), as
# convert_sam_to_hf.py's KEYS_TO_MODIFY_MAPPING does; the MLP layer shift is done separately.
# ref: transformers/models/sam/convert_sam_to_hf.py KEYS_TO_MODIFY_MAPPING, replace_keys
RENAMES = [
    ("iou_prediction_head.layers.0", "iou_prediction_head.proj_in"),
    ("iou_prediction_head.layers.1", "iou_prediction_head.layers.0"),
    ("iou_prediction_head.layers.2", "iou_prediction_head.proj_out"),
    ("mask_decoder.output_upscaling.0", "mask_decoder.upscale_conv1"),
    ("mask_decoder.output_upscaling.1", "mask_decoder.upscale_layer_norm"),
    ("mask_decoder.output_upscaling.3", "mask_decoder.upscale_conv2"),
    ("mask_downscaling.0", "mask_embed.conv1"),
    ("mask_downscaling.1", "mask_embed.layer_norm1"),
    ("mask_downscaling.3", "mask_embed.conv2"),
    ("mask_downscaling.4", "mask_embed.layer_norm2"),
    ("mask_downscaling.6", "mask_embed.conv3"),
    ("point_embeddings", "point_embed"),
    ("pe_layer.positional_encoding_gaussian_matrix", "shared_embedding.positional_embedding"),
    ("image_encoder", "vision_encoder"),
    ("neck.0", "neck.conv1"),
    ("neck.1", "neck.layer_norm1"),
    ("neck.2", "neck.conv2"),
    ("neck.3", "neck.layer_norm2"),
    ("patch_embed.proj", "patch_embed.projection"),
    (".norm", ".layer_norm"),
    ("blocks", "layers"),
]
HYPERNETWORK_LAYER = re.compile(r".*\.output_hypernetworks_mlps\.(\d+)\.layers\.(\d+)\..*")
TIED_KEY = "shared_image_embedding.positional_embedding"
TRANSFORMER_NORMS = ("layer_norm1", "layer_norm2", "layer_norm3", "layer_norm4")
UPSTREAM_LAYER_NORM_EPS = 1e-5  # torch.nn.LayerNorm default: TwoWayAttentionBlock norm1..4 (transformer.py)


def hf_state_dict(upstream: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """The upstream state dict under transformers' names (the published checkpoints' conversion)."""
    renamed = {}
    for key, value in upstream.items():
        for old, new in RENAMES:
            if old in key:
                key = key.replace(old, new)
        match = HYPERNETWORK_LAYER.match(key)
        if match:
            layer = int(match.group(2))
            old = f"layers.{layer}"
            new = {0: "proj_in", 1: "layers.0", 2: "proj_out"}[layer]
            key = key.replace(old, new)
        renamed[key] = value
    renamed[TIED_KEY] = renamed["prompt_encoder.shared_embedding.positional_embedding"]
    return renamed


def hf_config(cfg: Dict[str, Any]) -> SamConfig:
    """transformers' SamConfig for a resolved sam_configs entry (a ViT family config)."""
    enc, pe, md = cfg["imageEncoder"], cfg["promptEncoder"], cfg["maskDecoder"]
    if md["iouHeadDepth"] != 3:
        raise SystemExit("convert_sam_to_hf's renaming assumes 3-layer MLP heads")
    vision = dict(
        hidden_size=enc["embedDim"], output_channels=enc["neckDim"], num_hidden_layers=enc["depth"],
        num_attention_heads=enc["numHeads"], num_channels=enc["inChannels"], image_size=enc["imageSize"],
        patch_size=enc["patchSize"], layer_norm_eps=enc["layerNormEps"], qkv_bias=True,
        mlp_dim=int(enc["embedDim"] * enc["mlpRatio"]), use_abs_pos=True, use_rel_pos=enc["useRelativePositions"],
        window_size=enc["windowSize"], global_attn_indexes=enc["globalAttentionIndexes"],
        num_pos_feats=pe["embedDim"] // 2, hidden_act="gelu",
    )
    prompt = dict(
        hidden_size=pe["embedDim"], image_size=pe["inputImageSize"], patch_size=enc["patchSize"],
        mask_input_channels=pe["maskInChannels"], num_point_embeddings=4, hidden_act="gelu",
    )
    decoder = dict(
        hidden_size=md["transformerDim"], num_hidden_layers=md["depth"], num_attention_heads=md["numHeads"],
        mlp_dim=md["mlpDim"], attention_downsample_rate=md["attentionDownsampleRate"],
        num_multimask_outputs=md["numMultimaskOutputs"], iou_head_depth=md["iouHeadDepth"],
        iou_head_hidden_dim=md["iouHeadHiddenDim"], hidden_act="relu",
    )
    config = SamConfig(vision_config=vision, prompt_encoder_config=prompt, mask_decoder_config=decoder)
    config.prompt_encoder_config.image_embedding_size = pe["imageEmbeddingSize"]
    return config


def build_hf_model(cfg: Dict[str, Any], weights: Path) -> SamModel:
    sam = build_sam(cfg)
    load_checkpoint_(sam, weights)
    model = SamModel(hf_config(cfg))
    missing, unexpected = model.load_state_dict(hf_state_dict(sam.state_dict()), strict=True)
    assert not missing and not unexpected
    model.eval()
    return model


# --- transformers' forward vs the set's PyTorch references -----------------------------------------


def load(root: Path, rel: str) -> np.ndarray:
    return np.load(root / rel)


def max_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def predictor_inputs(root: Path, case: Dict[str, Any]) -> Dict[str, torch.Tensor]:
    """SamPredictor.predict's inputs of one case as SamModel.forward takes them (one prompt batch)."""
    inputs = case["predictor"]["inputs"]
    feeds: Dict[str, torch.Tensor] = {}
    if "point_coords" in inputs:
        # stored [1, N, 2] / [1, N] (batch of one): SamModel adds the prompt-batch axis
        feeds["input_points"] = torch.from_numpy(load(root, inputs["point_coords"]).astype(np.float32))[:, None]
        feeds["input_labels"] = torch.from_numpy(load(root, inputs["point_labels"]).astype(np.int64))[:, None]
    if "box" in inputs:
        feeds["input_boxes"] = torch.from_numpy(load(root, inputs["box"]).astype(np.float32)).reshape(1, 1, 4)
    if "mask_input" in inputs:
        feeds["input_masks"] = torch.from_numpy(load(root, inputs["mask_input"]).astype(np.float32))  # [1, 1, h, w]
    return feeds


def set_transformer_norm_eps(model: SamModel, eps: float) -> None:
    for layer in model.mask_decoder.transformer.layers:
        for name in TRANSFORMER_NORMS:
            getattr(layer, name).eps = eps


def compare_with_references(model: SamModel, root: Path) -> Dict[str, Any]:
    manifest = json.loads((root / "manifest.json").read_text())
    image = torch.from_numpy(load(root, "references/input_image.npy"))
    with torch.no_grad():
        embeddings = model.get_image_embeddings(image)
    report: Dict[str, Any] = {
        "image_embeddings_max_abs": max_abs(embeddings.numpy(), load(root, "references/image_embeddings.npy")),
        "transformers": transformers.__version__, "torch": torch.__version__,
    }
    for label, eps in (("hf_eps", None), ("upstream_eps", UPSTREAM_LAYER_NORM_EPS)):
        if eps is not None:
            set_transformer_norm_eps(model, eps)
        masks_worst = iou_worst = 0.0
        per_case = {}
        for case in manifest["cases"]:
            if "predictor" not in case:
                continue
            with torch.no_grad():
                out = model(image_embeddings=embeddings, multimask_output=True, **predictor_inputs(root, case))
            outputs = case["predictor"]["outputs"]
            masks = max_abs(out.pred_masks[0].numpy(), load(root, outputs["low_res_masks"]))
            iou = max_abs(out.iou_scores[0].numpy(), load(root, outputs["iou_predictions"]))
            per_case[case["name"]] = {"low_res_masks_max_abs": masks, "iou_predictions_max_abs": iou}
            masks_worst, iou_worst = max(masks_worst, masks), max(iou_worst, iou)
        report[label] = {"transformer_layer_norm_eps": eps or model.config.mask_decoder_config.layer_norm_eps,
                         "low_res_masks_max_abs": masks_worst, "iou_predictions_max_abs": iou_worst, "cases": per_case}
    return report


def all_masks(model: SamModel, embeddings: torch.Tensor, feeds: Dict[str, torch.Tensor]):
    """All four low-res masks and IoU scores, as the official decoder returns them: transformers
    gives mask 0 without multimask output and masks 1..3 with it."""
    with torch.no_grad():
        single = model(image_embeddings=embeddings, multimask_output=False, **feeds)
        multi = model(image_embeddings=embeddings, multimask_output=True, **feeds)
    masks = torch.cat([single.pred_masks[0], multi.pred_masks[0]], dim=1)
    iou = torch.cat([single.iou_scores[0], multi.iou_scores[0]], dim=1)
    return masks.numpy(), iou.numpy()


def write_hf_set(model: SamModel, root: Path, out: Path) -> None:
    """A copy of the reference set at `root` whose expected outputs are transformers' own: the image
    embeddings and, per case, the official decoder's four masks and IoU scores from those embeddings
    (the decoder inputs copied). samverify on it measures the native runtime against transformers."""
    manifest = json.loads((root / "manifest.json").read_text())
    if out.exists():
        shutil.rmtree(out)
    (out / "references").mkdir(parents=True)
    for name in ("manifest.json", "config.json", "image_points_embeddings.bin", "references/input_image.npy"):
        shutil.copyfile(root / name, out / name)
    image = torch.from_numpy(load(root, "references/input_image.npy"))
    with torch.no_grad():
        embeddings = model.get_image_embeddings(image)
    np.save(out / "references/image_embeddings.npy", embeddings.numpy())
    for case in manifest["cases"]:
        if "predictor" not in case:
            continue
        folder = out / "references" / case["name"]
        folder.mkdir()
        for source in (root / "references" / case["name"]).glob("onnx_*.npy"):
            if source.name not in ("onnx_low_res_masks.npy", "onnx_iou_predictions.npy"):
                shutil.copyfile(source, folder / source.name)
        masks, iou = all_masks(model, embeddings, predictor_inputs(root, case))
        np.save(folder / "onnx_low_res_masks.npy", masks)
        np.save(folder / "onnx_iou_predictions.npy", iou)
    (out / "README.md").write_text(
        f"Expected outputs from transformers {transformers.__version__} SamModel (converters/export_hf_sam.py), "
        f"not from upstream: the image embeddings and each case's official-decoder outputs. Inputs from {root}.\n")


# --- main ----------------------------------------------------------------------------------------------


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=[n for n, c in sam_configs.CONFIGS.items() if sam_configs.family(c) == "vit"],
                        required=True)
    parser.add_argument("--weights", type=Path, required=True, help="upstream state dict: flat .h5 or .pth")
    parser.add_argument("--out", type=Path, required=True, help="the model.safetensors to write")
    parser.add_argument("--references", type=Path, help="a reference set of these weights: compare transformers' forward")
    parser.add_argument("--report", action="store_true", help="also write <out>.report.json")
    parser.add_argument("--hf-set", type=Path, help="with --references: write a copy of the set whose expected "
                        "outputs are transformers' (samverify on it compares the native runtime with transformers)")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    model = build_hf_model(sam_configs.resolve(args.config), args.weights)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder, safe_serialization=True)
        shutil.copyfile(Path(folder) / "model.safetensors", args.out)
    report: Dict[str, Any] = {"out": str(args.out), "bytes": args.out.stat().st_size}
    if args.references and args.hf_set:
        write_hf_set(model, args.references, args.hf_set)
    if args.references:
        report.update(compare_with_references(model, args.references))
    text = json.dumps(report, indent=1)
    print(text)
    if args.report:
        args.out.with_suffix(".report.json").write_text(text + "\n")


if __name__ == "__main__":
    main()

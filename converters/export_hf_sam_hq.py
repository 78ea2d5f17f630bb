#!/usr/bin/env python3
"""Save a SAM-HQ (ViT) state dict as a Hugging Face ``transformers`` ``SamHQModel`` checkpoint.

Usage::

    # the committed fixture: the tiny SAM-HQ ViT set's weights as model.safetensors
    venv/bin/python converters/export_hf_sam_hq.py --weights reference_outputs/sam_hq_vit_tiny/sam_hq.h5 \\
        --references reference_outputs/sam_hq_vit_tiny \\
        --out Tests/SAMImportTests/Fixtures/hf_sam_hq_vit_tiny.safetensors

    # full-size SAM-HQ ViT-B, on demand (nothing of it is committed)
    venv/bin/python converters/export_hf_sam_hq.py --weights /tmp/hq-vit_b/sam_hq.h5 --references /tmp/hq-vit_b \\
        --out /tmp/hq-vit_b-hf/model.safetensors

The upstream state dict (``segment_anything_hq`` names, as ``export_sam_hq.py`` writes it) is
loaded into the upstream classes (strict), renamed to ``transformers``' names (SAM's renaming,
``export_hf_sam.py``, plus the HQ decoder's, as ``transformers/models/sam_hq/convert_samhq_to_hf.py``
renames the released checkpoints), loaded into a real ``transformers.SamHQModel`` (strict: every
key used, every parameter set) and written with ``save_pretrained`` (safetensors). Only
``model.safetensors`` is kept at ``--out``. ``config.json`` (default: beside ``--weights``) gives the
sizes; ``transformers`` has SAM-HQ over SAM's ViT only, so Light HQ-SAM (TinyViT) sets are refused.

With ``--references``, ``transformers``' forward pass runs on the set's encoder input and every
predictor case (its ``multimask_output`` and ``hq_token_only`` flags) and is compared with the set's
PyTorch (upstream) outputs, twice, as ``export_hf_sam.py`` does for SAM: with ``transformers``'
mask-decoder transformer LayerNorms ``layer_norm1..4`` at ``SamHQMaskDecoderConfig.layer_norm_eps``
= 1e-6, and at upstream's 1e-5 (``nn.LayerNorm``'s default in ``TwoWayTransformer``). Two figures
per case:

* ``low_res_masks`` / ``iou_predictions``: ``transformers``' first mask and score against
  ``SamPredictor.predict``'s. With ``multimask_output`` upstream returns one mask (the best of SAM's
  masks 1..3 by predicted IoU, plus the HQ mask unless ``hq_token_only``); ``transformers`` returns
  all three, sorted by predicted IoU (each plus the HQ mask; with ``hq_token_only`` the HQ mask alone
  and all three sorted scores), so its first one is upstream's.
* ``all_masks`` / ``all_iou``: every mask and score ``transformers`` returns against that selection
  made from the set's five-token decoder outputs (``onnx_low_res_masks``, ``onnx_iou_predictions``).

The scores agree (to float rounding at upstream's eps), the masks do not: ``transformers`` 5.23's
``SamHQMaskDecoder.forward`` upscales the two-way transformer's image *input* (image embeddings plus
the dense prompt embedding, height and width swapped) where upstream upscales its output (see
``transformers_upscaling_input``). ``explained`` measures upstream's decoder with that substitution
against ``transformers``: it agrees to float rounding, so the weights and names are right and the
mask difference is that line of ``transformers``, not the conversion.

The figures are printed as JSON (and written beside ``--out`` as ``<name>.report.json`` with
``--report``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_hf_sam  # noqa: E402
from build_model import load_checkpoint_  # noqa: E402
from export_sam_hq import build_sam_hq  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import transformers
    from segment_anything_hq.modeling import Sam
    from segment_anything_hq.utils.transforms import ResizeLongestSide
    from transformers import SamHQConfig, SamHQModel

# MaskDecoderHQ's own modules: upstream prefix -> transformers' (exact dotted prefixes; SAM's modules
# are renamed by export_hf_sam.hf_state_dict, which leaves these keys as they are).
# ref: transformers/models/sam_hq/convert_samhq_to_hf.py KEYS_TO_MODIFY_MAPPING ("HQ-specific mappings",
# hq_mask_mlp layers; in transformers' repository, not in its wheel); module names checked against
# transformers 5.23 modeling_sam_hq.py SamHQMaskDecoder
HQ_RENAMES = [
    ("mask_decoder.hf_token", "mask_decoder.hq_token"),
    ("mask_decoder.hf_mlp.layers.0", "mask_decoder.hq_mask_mlp.proj_in"),
    ("mask_decoder.hf_mlp.layers.1", "mask_decoder.hq_mask_mlp.layers.0"),
    ("mask_decoder.hf_mlp.layers.2", "mask_decoder.hq_mask_mlp.proj_out"),
    ("mask_decoder.compress_vit_feat.0", "mask_decoder.compress_vit_conv1"),
    ("mask_decoder.compress_vit_feat.1", "mask_decoder.compress_vit_norm"),
    ("mask_decoder.compress_vit_feat.3", "mask_decoder.compress_vit_conv2"),
    ("mask_decoder.embedding_encoder.0", "mask_decoder.encoder_conv1"),
    ("mask_decoder.embedding_encoder.1", "mask_decoder.encoder_norm"),
    ("mask_decoder.embedding_encoder.3", "mask_decoder.encoder_conv2"),
    ("mask_decoder.embedding_maskfeature.0", "mask_decoder.mask_conv1"),
    ("mask_decoder.embedding_maskfeature.1", "mask_decoder.mask_norm"),
    ("mask_decoder.embedding_maskfeature.3", "mask_decoder.mask_conv2"),
]
HQ_KEY = re.compile(r"^mask_decoder\.(hf_token|hf_mlp|compress_vit_feat|embedding_encoder|embedding_maskfeature)\.")


def hq_name(key: str) -> str:
    for old, new in HQ_RENAMES:
        if key.startswith(old + "."):
            return new + key[len(old):]
    raise SystemExit(f"{key}: no transformers name (only 3-layer HQ MLPs are renamed)")


def hf_state_dict(upstream: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """The upstream SAM-HQ state dict under transformers' names (the released checkpoints' conversion)."""
    sam = {k: v for k, v in upstream.items() if not HQ_KEY.match(k)}
    renamed = export_hf_sam.hf_state_dict(sam)  # SAM's modules, and the tied image-wide PE matrix
    renamed.update({hq_name(k): v for k, v in upstream.items() if HQ_KEY.match(k)})
    return renamed


def hf_config(cfg: Dict[str, Any]) -> SamHQConfig:
    """transformers' SamHQConfig for a SAM-HQ set's config.json (ViT image encoder)."""
    enc, pe, md = cfg["imageEncoder"], cfg["promptEncoder"], cfg["maskDecoder"]
    if enc.get("family") != "vit":
        raise SystemExit("transformers' SamHQModel has SAM's ViT encoder only (no TinyViT / Light HQ-SAM)")
    if md["iouHeadDepth"] != 3:
        raise SystemExit("the renaming assumes 3-layer MLP heads")
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
        iou_head_hidden_dim=md["iouHeadHiddenDim"], hidden_act="relu", vit_dim=md["vitDim"],
    )
    config = SamHQConfig(vision_config=vision, prompt_encoder_config=prompt, mask_decoder_config=decoder)
    config.prompt_encoder_config.image_embedding_size = pe["imageEmbeddingSize"]
    return config


def build_models(cfg: Dict[str, Any], weights: Path) -> Tuple[Sam, SamHQModel]:
    """The upstream model of the weights and transformers' SamHQModel holding them."""
    sam = build_sam_hq(cfg)
    load_checkpoint_(sam, weights)  # strict: the file is an upstream SAM-HQ state dict of this config
    model = SamHQModel(hf_config(cfg))
    missing, unexpected = model.load_state_dict(hf_state_dict(sam.state_dict()), strict=True)
    assert not missing and not unexpected
    model.eval()
    return sam, model


# --- transformers' forward vs the set's PyTorch references -----------------------------------------


def load(root: Path, rel: str) -> np.ndarray:
    return np.load(root / rel)


max_abs = export_hf_sam.max_abs


def predictor_inputs(root: Path, case: Dict[str, Any], image_size: int,
                     original_size: Tuple[int, int]) -> Dict[str, torch.Tensor]:
    """SamPredictor.predict's inputs of one case, moved to the model frame as predict does, as
    SamHQModel.forward takes them (one prompt batch)."""
    inputs = case["predictor"]["inputs"]
    transform = ResizeLongestSide(image_size)
    feeds: Dict[str, torch.Tensor] = {}
    if "point_coords" in inputs:
        coords = transform.apply_coords(load(root, inputs["point_coords"]).astype(np.float64), original_size)
        feeds["input_points"] = torch.from_numpy(coords.astype(np.float32))[:, None]  # [1, 1, N, 2]
        feeds["input_labels"] = torch.from_numpy(load(root, inputs["point_labels"]).astype(np.int64))[:, None]
    if "box" in inputs:
        box = transform.apply_boxes(load(root, inputs["box"]).astype(np.float64).reshape(1, 4), original_size)
        feeds["input_boxes"] = torch.from_numpy(box.astype(np.float32)).reshape(1, 1, 4)
    if "mask_input" in inputs:
        feeds["input_masks"] = torch.from_numpy(load(root, inputs["mask_input"]).astype(np.float32))
    return feeds


def expected_all(root: Path, case: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """What SamHQMaskDecoder.forward returns, made from the set's five-token outputs (upstream's
    predict_masks): SAM's masks 1..3 sorted by predicted IoU (multimask) or mask 0, plus the HQ
    mask (4), or the HQ mask alone (hq_token_only); the sorted scores, or score 0."""
    official = case["official"]["outputs"]
    masks, iou = load(root, official["low_res_masks"]), load(root, official["iou_predictions"])
    if case["multimask_output"]:
        order = np.argsort(-iou[0, 1:4], kind="stable") + 1
        sam_masks, scores = masks[:, order], iou[:, order]
    else:
        sam_masks, scores = masks[:, :1], iou[:, :1]
    hq = masks[:, -1:]
    return (hq if case["hq_token_only"] else sam_masks + hq), scores


@contextmanager
def transformers_upscaling_input(sam: Sam):
    """Upstream's decoder with what transformers 5.23's SamHQMaskDecoder upscales in place of the
    two-way transformer's image output: the transformer's image input (image embeddings plus the
    dense prompt embedding) with height and width swapped. transformers binds that output to
    ``iou_token_out`` (then overwritten) and reshapes the [B, C, H, W] input with ``.transpose(2, 3)``,
    meant for the [B, P, H*W, C] output. ref: transformers 5.23 modeling_sam_hq.py
    SamHQMaskDecoder.forward (``point_embedding, iou_token_out = self.transformer(...)``; SamMaskDecoder
    in modeling_sam.py binds ``image_embeddings`` there); segment_anything_hq mask_decoder_hq.py
    MaskDecoderHQ.predict_masks (``hs, src = self.transformer(src, pos_src, tokens)``)."""
    transformer = sam.mask_decoder.transformer
    forward = transformer.forward

    def swapped(image_embedding, image_pe, point_embedding):
        tokens, _ = forward(image_embedding, image_pe, point_embedding)
        return tokens, image_embedding.transpose(2, 3).flatten(2).transpose(1, 2)  # predict_masks undoes the last two

    transformer.forward = swapped
    try:
        yield
    finally:
        transformer.forward = forward


def upstream_decoder(sam: Sam, embeddings: torch.Tensor, interm: List[torch.Tensor], feeds: Dict[str, torch.Tensor],
                     case: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """Upstream's prompt encoder and MaskDecoderHQ.forward (as SamPredictor.predict_torch) on the same feeds."""
    points = None
    if "input_points" in feeds:
        points = (feeds["input_points"][:, 0], feeds["input_labels"][:, 0].int())
    boxes = feeds["input_boxes"][:, 0] if "input_boxes" in feeds else None
    masks = feeds["input_masks"] if "input_masks" in feeds else None
    sparse, dense = sam.prompt_encoder(points=points, boxes=boxes, masks=masks)
    low_res, iou = sam.mask_decoder(embeddings, sam.prompt_encoder.get_dense_pe(), sparse, dense,
                                    case["multimask_output"], case["hq_token_only"], interm)
    return low_res.numpy(), iou.numpy()


def compare_with_references(sam: Sam, model: SamHQModel, root: Path) -> Dict[str, Any]:
    manifest = json.loads((root / "manifest.json").read_text())
    image = torch.from_numpy(load(root, "references/input_image.npy"))
    image_size = model.config.vision_config.image_size
    original_size = tuple(manifest["image_size"])
    with torch.no_grad():
        embeddings, interm = model.get_image_embeddings(image)
    report: Dict[str, Any] = {
        "image_embeddings_max_abs": max_abs(embeddings.numpy(), load(root, "references/image_embeddings.npy")),
        "vit_features_max_abs": max_abs(interm[0].permute(0, 3, 1, 2).numpy(),
                                        load(root, "references/vit_features.npy")),
        "transformers": transformers.__version__, "torch": torch.__version__,
    }
    cases = [case for case in manifest["cases"] if "predictor" in case]
    feeds = {case["name"]: predictor_inputs(root, case, image_size, original_size) for case in cases}
    outputs = {}
    names = ("low_res_masks", "iou_predictions", "all_masks", "all_iou")
    for label, eps in (("hf_eps", None), ("upstream_eps", export_hf_sam.UPSTREAM_LAYER_NORM_EPS)):
        if eps is not None:
            export_hf_sam.set_transformer_norm_eps(model, eps)
        worst = dict.fromkeys(names, 0.0)
        per_case = {}
        for case in cases:
            with torch.no_grad():
                out = model(image_embeddings=embeddings, intermediate_embeddings=interm,
                            multimask_output=case["multimask_output"], hq_token_only=case["hq_token_only"],
                            **feeds[case["name"]])
            masks, iou = out.pred_masks[0].numpy(), out.iou_scores[0].numpy()  # [1, K, h, w], [1, K']
            outputs[case["name"]] = masks, iou
            predictor = case["predictor"]["outputs"]
            all_masks, all_iou = expected_all(root, case)
            figures = {
                "low_res_masks": max_abs(masks[:, :1], load(root, predictor["low_res_masks"])),
                "iou_predictions": max_abs(iou[:, :1], load(root, predictor["iou_predictions"])),
                "all_masks": max_abs(masks, all_masks), "all_iou": max_abs(iou, all_iou),
            }
            per_case[case["name"]] = {"masks_returned": masks.shape[1], "scores_returned": iou.shape[1],
                                      **{f"{k}_max_abs": v for k, v in figures.items()}}
            worst = {k: max(worst[k], figures[k]) for k in names}
        report[label] = {"transformer_layer_norm_eps": eps or model.config.mask_decoder_config.layer_norm_eps,
                         **{f"{k}_max_abs": v for k, v in worst.items()}, "cases": per_case}

    # The mask difference, explained: upstream (same weights, the set's upstream encoder outputs) with
    # transformers' upscaling input, against transformers at upstream's eps (`outputs`, the last pass).
    references = (torch.from_numpy(load(root, "references/image_embeddings.npy")),
                  [torch.from_numpy(load(root, "references/vit_features.npy")).permute(0, 2, 3, 1)])
    masks_worst = iou_worst = 0.0
    with torch.no_grad(), transformers_upscaling_input(sam):
        for case in cases:
            low_res, iou = upstream_decoder(sam, *references, feeds[case["name"]], case)
            masks, scores = outputs[case["name"]]
            masks_worst = max(masks_worst, max_abs(masks[:, :1], low_res))
            iou_worst = max(iou_worst, max_abs(scores[:, :1], iou))
    report["explained"] = {
        "what": "upstream's MaskDecoderHQ upscaling the two-way transformer's image input (image embeddings + dense "
                "prompt embedding, height and width swapped) instead of its output, as transformers' "
                "SamHQMaskDecoder.forward does, vs transformers at upstream eps (first mask and score)",
        "low_res_masks_max_abs": masks_worst, "iou_predictions_max_abs": iou_worst,
    }
    return report


# --- main ----------------------------------------------------------------------------------------------


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", type=Path, required=True,
                        help="upstream SAM-HQ state dict: a set's sam_hq.h5 (flat) or sam_hq.pth")
    parser.add_argument("--config", type=Path, help="the set's config.json (default: beside --weights)")
    parser.add_argument("--out", type=Path, required=True, help="the model.safetensors to write")
    parser.add_argument("--references", type=Path,
                        help="a reference set of these weights: compare transformers' forward")
    parser.add_argument("--report", action="store_true", help="also write <out>.report.json")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    cfg = json.loads((args.config or args.weights.with_name("config.json")).read_text())
    sam, model = build_models(cfg, args.weights)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder, safe_serialization=True)
        shutil.copyfile(Path(folder) / "model.safetensors", args.out)
    report: Dict[str, Any] = {"out": str(args.out), "bytes": args.out.stat().st_size}
    if args.references:
        report.update(compare_with_references(sam, model, args.references))
    text = json.dumps(report, indent=1)
    print(text)
    if args.report:
        args.out.with_suffix(".report.json").write_text(text + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Export a SAM 2 / 2.1 model and PyTorch's SAM2ImagePredictor references, in one folder.

Usage::

    venv/bin/python converters/export_sam2.py --config tiny --seed 0 --out reference_outputs/sam2_tiny
    # full size, seeded (the published checkpoints cannot be downloaded here), on the full-size set's photo:
    venv/bin/python converters/export_sam2.py --config sam2.1_hiera_tiny --seed 0 \
        --image ../shared/fixtures/mobilesam-seed0/image.png --out /tmp/sam2.1-tiny
    # or from a checkpoint as published:
    venv/bin/python converters/export_sam2.py --config sam2.1_hiera_small --checkpoint sam2.1_hiera_small.pt ...

Writes, into ``--out`` (what ``samverify`` reads; ``sam2_configs.py`` has the configurations):

    config.json               the Swift SAMConfig of the model (family "hiera")
    <checkpoint>.pt           {"model": state_dict}, as the published files (video-only weights included)
    encoder.onnx, decoder.onnx  samexporter's export_sam2.py pair (``--onnx``), checked with onnxruntime
    manifest.json, README.md
    references/
      original_image.npy      the photo, uint8 [H, W, 3], as SAM2ImagePredictor.set_image takes it
      input_image.npy         SAM2Transforms' output [1, 3, S, S]         -> case "image_encoder"
      image_embed.npy, high_res_feats_0.npy, high_res_feats_1.npy       SAM2ImagePredictor._features
      modules/<path>.npy      per-module dumps of the encoder run (--module-dumps)
      <case>/onnx_*.npy       the decoder in the model frame: point_coords/point_labels with the box
                              corners first and the (0, 0, -1) padding point last, mask_input,
                              has_mask_input -> all four low_res_masks, iou_predictions,
                              object_score_logits (sam_mask_decoder.predict_masks)
      <case>/point_coords.npy, point_labels.npy, box.npy, mask_input.npy, multimask_output.npy
                              SAM2ImagePredictor.predict's inputs (original-image pixels)
      <case>/low_res_masks.npy, iou_predictions.npy, masks_binary.npy   its outputs
      <case>/modules/<path>.npy  per-module dumps of the case's decoder run (point1, point1_with_mask_input)

Module paths are canonical names: ``sam_prompt_encoder`` and ``sam_mask_decoder`` are written
``prompt_encoder`` and ``mask_decoder``, as samconvert names their weights.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_sam2  # noqa: E402
import sam2_configs  # noqa: E402
from export_reference import OutDir, file_entries, max_abs, to_numpy, write_module_dumps  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sam2.sam2_image_predictor import SAM2ImagePredictor

EXPORTER_MARK = "converters/export_sam2.py"
MAX_POINTS = 100
# The canonical names of SAM2Base's prompt encoder and mask decoder.
RENAMES = {"sam_prompt_encoder": "prompt_encoder", "sam_mask_decoder": "mask_decoder"}


class SetDir(OutDir):
    """OutDir that may wipe and rewrite an earlier export of this script."""

    @staticmethod
    def _is_our_export(root: Path) -> bool:
        manifest = root / "manifest.json"
        return manifest.exists() and json.loads(manifest.read_text()).get("exporter_script") == EXPORTER_MARK


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(sam2_configs.CONFIGS), default="tiny")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, default=None, help="a published-style .pt instead of seeded weights")
    parser.add_argument("--image", type=Path, default=None, help="the photo (PNG/JPEG); default: a synthetic one")
    parser.add_argument("--module-dumps", choices=["auto", "on", "off"], default="auto",
                        help="per-module output dumps (auto: on for the tiny config only)")
    parser.add_argument("--onnx", action="store_true", help="also export samexporter's encoder/decoder pair")
    parser.add_argument("--no-checkpoint-copy", action="store_true",
                        help="do not write the .pt into the set (full-size sets: write it with --weights-out)")
    return parser.parse_args(argv)


# --- the photo ---------------------------------------------------------------------------


def synthetic_photo(seed: int, width: int, height: int) -> np.ndarray:
    """uint8 RGB [height, width, 3]: smooth waves and a blob plus seeded noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64) / max(width, height)
    channels = []
    for _ in range(3):
        fy, fx, phase = rng.uniform(1.0, 4.0), rng.uniform(1.0, 4.0), rng.uniform(0, 2 * np.pi)
        cy, cx = rng.uniform(0.2, 0.6, size=2)
        channels.append(128 + 70 * np.sin(2 * np.pi * (fy * y + fx * x) + phase)
                        + 50 * np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / 0.02))
    pixels = np.stack(channels, axis=-1) + rng.normal(0.0, 12.0, size=(height, width, 3))
    return np.clip(np.rint(pixels), 0, 255).astype(np.uint8)


def load_photo(args: argparse.Namespace, image_size: int) -> np.ndarray:
    if args.image:
        from PIL import Image

        return np.array(Image.open(args.image).convert("RGB"))
    # Wider than the input (the width shrinks: antialiased) and shorter (the height grows).
    return synthetic_photo(args.seed, int(image_size * 1.25), int(image_size * 0.9375))


# --- per-module dumps ------------------------------------------------------------------------


class Recorder:
    """Forward hooks on the modules under ``prefixes``; records each tensor output (the first
    tensor of a tuple) in firing order, under its canonical name. Lists (the trunk's and neck's
    multi-level outputs), dicts and DropPath/Identity outputs are not module outputs a port reports."""

    def __init__(self, model: torch.nn.Module, prefixes: List[str]) -> None:
        self.calls: List[Dict[str, Any]] = []
        self._counts: Dict[str, int] = {}
        self._handles = [
            module.register_forward_hook(self._hook(canonical(name)))
            for name, module in model.named_modules()
            if any(name == p or name.startswith(p + ".") for p in prefixes) and not name.endswith(".drop_path")
        ]

    def _hook(self, name: str):
        def hook(_module, _inputs, output):
            if isinstance(output, tuple):
                output = next((o for o in output if isinstance(o, torch.Tensor)), None)
            if isinstance(output, torch.Tensor):
                self.record(name, output)
        return hook

    def record(self, name: str, tensor: torch.Tensor) -> None:
        call = self._counts.get(name, 0)
        self._counts[name] = call + 1
        self.calls.append({"module": name, "call": call, "tensor": tensor.detach().clone()})

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()


def canonical(name: str) -> str:
    head, _, rest = name.partition(".")
    return RENAMES.get(head, head) + ("." + rest if rest else "")


# --- the encoder ------------------------------------------------------------------------------


@torch.no_grad()
def export_encoder(out: OutDir, model, predictor: SAM2ImagePredictor, photo: np.ndarray, dumps: bool) -> Dict[str, Any]:
    input_image = predictor._transforms(photo)[None]
    recorder = Recorder(model, ["image_encoder", "sam_mask_decoder.conv_s0", "sam_mask_decoder.conv_s1"]) if dumps else None
    predictor.set_image(photo)
    features = predictor._features
    files = {
        "original_image": out.save_npy("references/original_image.npy", photo),
        "input_image": out.save_npy("references/input_image.npy", input_image),
        "image_embed": out.save_npy("references/image_embed.npy", features["image_embed"]),
        "high_res_feats_0": out.save_npy("references/high_res_feats_0.npy", features["high_res_feats"][0]),
        "high_res_feats_1": out.save_npy("references/high_res_feats_1.npy", features["high_res_feats"][1]),
    }
    result: Dict[str, Any] = {"files": files, "input_image": input_image}
    if recorder:
        recorder.remove()
        calls = recorder.calls
        # The position embedding is no module's output: recorded after the patch embedding, where it is added.
        trunk = model.image_encoder.trunk
        grid = trunk.patch_embed.proj(input_image).shape[-2:]
        at = next(i for i, c in enumerate(calls) if c["module"] == "image_encoder.trunk.patch_embed") + 1
        calls.insert(at, {"module": "image_encoder.trunk:pos_embed", "call": 0, "tensor": trunk._get_pos_embed(grid)})
        result["module_outputs"] = write_module_dumps(out, calls, "references/modules")
    return result


# --- prompt cases --------------------------------------------------------------------------------


def prompt_cases(seed: int, width: int, height: int) -> List[Dict[str, Any]]:
    """Prompts in original-image pixels, as SAM2ImagePredictor.predict takes them."""
    rng = np.random.default_rng(seed + 1)
    w, h = width, height

    def random_points(n: int) -> Dict[str, np.ndarray]:
        return {"points": rng.uniform([0, 0], [w - 1, h - 1], size=(n, 2)),
                "labels": rng.integers(0, 2, size=n).astype(np.float64)}

    point1 = {"points": np.array([[0.3137 * w, 0.4219 * h]]), "labels": np.array([1.0])}
    points5 = random_points(5)
    box_point = {"points": np.array([[0.6419 * w, 0.2788 * h]]), "labels": np.array([1.0]),
                 "box": np.array([0.1043 * w, 0.0991 * h, 0.8976 * w, 0.9012 * h])}
    return [
        {"name": "point1", **point1, "dumps": True},
        {"name": "points2_pos_neg", "points": np.array([[0.5523 * w, 0.3511 * h], [0.2071 * w, 0.6187 * h]]),
         "labels": np.array([1.0, 0.0])},
        {"name": "points5", **points5},
        {"name": "points_max", **random_points(MAX_POINTS)},
        {"name": "box", "box": np.array([0.2031 * w, 0.2517 * h, 0.7012 * w, 0.8003 * h])},
        {"name": "box_point", **box_point},
        # The mask input: point1's best low-res mask as the predictor returned it (clamped).
        {"name": "point1_with_mask_input", **point1, "mask_from": "point1", "dumps": True},
        {"name": "point1_single", **point1, "multimask": False},
        {"name": "points5_single", **points5, "multimask": False},
    ]


@torch.no_grad()
def model_frame_inputs(predictor: SAM2ImagePredictor, case: Dict[str, Any], mask: Optional[np.ndarray],
                       mask_size: List[int]) -> Dict[str, np.ndarray]:
    """The decoder's inputs as SAM2ImagePredictor._predict builds them: coordinates normalised by
    the original size times the input size (_prep_prompts), box corners (labels 2, 3) first, then
    the points, then the (0, 0) padding point labelled -1 that the prompt encoder appends."""
    _, coords, labels, box = predictor._prep_prompts(case.get("points"), case.get("labels"), case.get("box"), None,
                                                     normalize_coords=True)
    all_coords, all_labels = [], []
    if box is not None:
        all_coords.append(to_numpy(box.reshape(-1, 2, 2))[0])
        all_labels.append(np.array([2.0, 3.0]))
    if coords is not None:
        all_coords.append(to_numpy(coords)[0])
        all_labels.append(to_numpy(labels)[0].astype(np.float64))
    all_coords.append(np.zeros((1, 2)))
    all_labels.append(np.array([-1.0]))
    has_mask = mask is not None
    return {
        "point_coords": np.concatenate(all_coords)[None].astype(np.float32),
        "point_labels": np.concatenate(all_labels)[None].astype(np.float32),
        "mask_input": (mask if has_mask else np.zeros((1, 1, *mask_size))).astype(np.float32),
        "has_mask_input": np.array([float(has_mask)], dtype=np.float32),
    }


@torch.no_grad()
def run_decoder(model, features: Dict[str, Any], inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """All four masks: the prompt encoder on the model-frame points (padding included) and mask,
    then sam_mask_decoder.predict_masks, as SAM2ImagePredictor._predict runs them."""
    pe = model.sam_prompt_encoder
    coords = torch.from_numpy(inputs["point_coords"])
    labels = torch.from_numpy(inputs["point_labels"]).int()
    sparse = pe._embed_points(coords, labels, pad=False)
    if inputs["has_mask_input"][0] == 1:
        dense = pe._embed_masks(torch.from_numpy(inputs["mask_input"]))
    else:
        dense = pe.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(1, -1, *pe.image_embedding_size)
    masks, iou, _, object_score = model.sam_mask_decoder.predict_masks(
        image_embeddings=features["image_embed"], image_pe=pe.get_dense_pe(), sparse_prompt_embeddings=sparse,
        dense_prompt_embeddings=dense, repeat_image=False, high_res_features=features["high_res_feats"])
    return {"low_res_masks": to_numpy(masks), "iou_predictions": to_numpy(iou), "object_score_logits": to_numpy(object_score)}


@torch.no_grad()
def export_case(out: OutDir, ctx: Dict[str, Any], case: Dict[str, Any], mask: Optional[np.ndarray],
                dumps: bool) -> Dict[str, Any]:
    model, predictor, name = ctx["model"], ctx["predictor"], case["name"]
    folder = f"references/{name}"
    multimask = case.get("multimask", True)
    entry: Dict[str, Any] = {"name": name, "multimask_output": multimask, "checks": {}}

    inputs = model_frame_inputs(predictor, case, mask, ctx["mask_size"])
    recorder = Recorder(model, ["sam_prompt_encoder", "sam_mask_decoder"]) if dumps and case.get("dumps") else None
    decoded = run_decoder(model, predictor._features, inputs)
    if recorder:
        recorder.remove()
        entry["module_outputs"] = write_module_dumps(out, recorder.calls, f"{folder}/modules")
    entry["decoder"] = {
        "inputs": {k: out.save_npy(f"{folder}/onnx_{k}.npy", v) for k, v in inputs.items()},
        "outputs": {k: out.save_npy(f"{folder}/onnx_{k}.npy", v) for k, v in decoded.items()},
    }

    predictor_inputs = {"multimask_output": out.save_npy(f"{folder}/multimask_output.npy", np.array([float(multimask)], np.float32))}
    if "points" in case:
        predictor_inputs["point_coords"] = out.save_npy(f"{folder}/point_coords.npy", case["points"][None].astype(np.float32))
        predictor_inputs["point_labels"] = out.save_npy(f"{folder}/point_labels.npy", case["labels"][None].astype(np.float32))
    if "box" in case:
        predictor_inputs["box"] = out.save_npy(f"{folder}/box.npy", case["box"][None].astype(np.float32))
    if mask is not None:
        predictor_inputs["mask_input"] = out.save_npy(f"{folder}/mask_input.npy", mask)
    binary, iou, low_res = predictor.predict(point_coords=case.get("points"), point_labels=case.get("labels"),
                                             box=case.get("box"), mask_input=None if mask is None else mask[0],
                                             multimask_output=multimask)
    outputs = {"low_res_masks": out.save_npy(f"{folder}/low_res_masks.npy", low_res[None]),
               "iou_predictions": out.save_npy(f"{folder}/iou_predictions.npy", iou[None])}
    if name in ("point1", "point1_single", "box"):
        outputs["masks_binary"] = out.save_npy(f"{folder}/masks_binary.npy", binary[None])
    entry["predictor"] = {"call": f"SAM2ImagePredictor.predict(multimask_output={multimask})", "inputs": predictor_inputs,
                          "outputs": outputs}
    ctx["low_res"][name] = low_res[None]

    # The predictor's outputs are the decoder's, selected and clamped: the same computation.
    all_masks = torch.from_numpy(decoded["low_res_masks"])
    all_iou = torch.from_numpy(decoded["iou_predictions"])
    if multimask:
        selected, scores = all_masks[:, 1:], all_iou[:, 1:]
    else:
        selected, scores = model.sam_mask_decoder._dynamic_multimask_via_stability(all_masks, all_iou)
        stability = model.sam_mask_decoder._get_stability_scores(all_masks[:, 0:1])
        entry["mask0_stability"] = float(stability[0, 0])
    entry["checks"]["predictor_vs_decoder_masks_max_abs"] = max_abs(low_res[None], torch.clamp(selected, -32, 32).numpy())
    entry["checks"]["predictor_vs_decoder_iou_max_abs"] = max_abs(iou[None], scores.numpy())
    entry["files"] = sorted(p.name for p in out.root.joinpath(folder).glob("*.npy"))
    return entry


# --- samexporter's ONNX pair --------------------------------------------------------------------


def export_onnx(out: OutDir, ctx: Dict[str, Any]) -> Dict[str, Any]:
    """samexporter 0.5.0's export_sam2.py pair (its wrapper classes, its export calls), checked
    with onnxruntime against the references."""
    import onnxruntime as ort
    from samexporter.export_sam2 import SAM2ImageDecoder, SAM2ImageEncoder

    model, report = ctx["model"], {}
    input_image = ctx["input_image"]
    encoder, decoder = SAM2ImageEncoder(model).cpu(), SAM2ImageDecoder(model, multimask_output=True).cpu()
    feats = encoder(input_image)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(encoder, input_image, str(out.path("encoder.onnx")), export_params=True, opset_version=18,
                          do_constant_folding=True, input_names=["image"],
                          output_names=["high_res_feats_0", "high_res_feats_1", "image_embed"], dynamo=False)
        point_coords = torch.randint(0, model.image_size, (1, 5, 2)).float()
        point_labels = torch.randint(0, 1, (1, 5)).float()
        mask_input = torch.randn(1, 1, *ctx["mask_size"])
        has_mask = torch.tensor([1.0])
        torch.onnx.export(decoder, (feats[2], feats[0], feats[1], point_coords, point_labels, mask_input, has_mask),
                          str(out.path("decoder.onnx")), export_params=True, opset_version=18, do_constant_folding=True,
                          input_names=["image_embed", "high_res_feats_0", "high_res_feats_1", "point_coords", "point_labels",
                                       "mask_input", "has_mask_input"],
                          output_names=["masks", "iou_predictions"],
                          dynamic_axes={"point_coords": {0: "num_labels", 1: "num_points"},
                                        "point_labels": {0: "num_labels", 1: "num_points"},
                                        "mask_input": {0: "num_labels"}, "has_mask_input": {0: "num_labels"}},
                          dynamo=False)
    session = ort.InferenceSession(str(out.path("encoder.onnx")), providers=["CPUExecutionProvider"])
    hr0, hr1, embed = session.run(None, {"image": to_numpy(input_image)})
    features = ctx["predictor"]._features
    report["encoder_image_embed_max_abs"] = max_abs(embed, to_numpy(features["image_embed"]))
    report["encoder_high_res_feats_0_max_abs"] = max_abs(hr0, to_numpy(features["high_res_feats"][0]))
    report["encoder_high_res_feats_1_max_abs"] = max_abs(hr1, to_numpy(features["high_res_feats"][1]))
    session = ort.InferenceSession(str(out.path("decoder.onnx")), providers=["CPUExecutionProvider"])
    worst_masks = worst_iou = 0.0
    for name, decoded in ctx["decoded"].items():
        folder = out.root / "references" / name
        coords, labels = np.load(folder / "onnx_point_coords.npy"), np.load(folder / "onnx_point_labels.npy")
        # samexporter's decoder appends the padding point itself.
        feeds = {"image_embed": embed, "high_res_feats_0": hr0, "high_res_feats_1": hr1,
                 "point_coords": coords[:, :-1], "point_labels": labels[:, :-1],
                 "mask_input": np.load(folder / "onnx_mask_input.npy"), "has_mask_input": np.load(folder / "onnx_has_mask_input.npy")}
        masks, iou = session.run(None, feeds)
        worst_masks = max(worst_masks, max_abs(masks, np.clip(decoded["low_res_masks"][:, 1:], -32, 32)))
        worst_iou = max(worst_iou, max_abs(iou, decoded["iou_predictions"][:, 1:]))
    report["decoder_masks_1to3_max_abs"] = worst_masks
    report["decoder_iou_1to3_max_abs"] = worst_iou
    return report


# --- manifest -------------------------------------------------------------------------------------


def provenance(args: argparse.Namespace) -> Dict[str, Any]:
    def version(dist: str) -> Optional[str]:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {
        "python": platform.python_version(), "torch": torch.__version__, "torchvision": version("torchvision"),
        "sam2": version("sam2"), "samexporter": version("samexporter"), "numpy": np.__version__,
        "onnx": version("onnx"), "onnxruntime": version("onnxruntime"),
        "seed": None if args.checkpoint else args.seed,
        "checkpoint": str(args.checkpoint) if args.checkpoint else None,
        "image": str(args.image) if args.image else None,
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
    }


def write_readme(out: OutDir, args: argparse.Namespace, cfg: Dict[str, Any], photo: np.ndarray, checkpoint: str) -> None:
    enc = cfg["imageEncoder"]
    g = cfg["promptEncoder"]["imageEmbeddingSize"]
    weights = f"checkpoint `{args.checkpoint.name}`" if args.checkpoint else f"seeded random weights (seed {args.seed})"
    text = f"""# SAM 2.1 reference set: `{args.config}`

Generated by `{EXPORTER_MARK}` (do not edit; rerun it):

    python {provenance(args)["command"]}

The upstream `sam2` package's `SAM2Base` from its hydra config (`sam2_configs.py`), {weights}: every
norm affine, bias, position embedding and `no_mem_embed` drawn away from its initial value. `{checkpoint}`
is the state dict as the published checkpoints hold it (`{{"model": ...}}`, video-only weights included);
`config.json` decodes as the Swift `SAMConfig`. References are PyTorch's `SAM2ImagePredictor` on the
{photo.shape[1]}x{photo.shape[0]} photo `references/original_image.npy`, resized to {enc['imageSize']}x{enc['imageSize']}
(aspect not kept); see `manifest.json` for every file, case and check.

* image_embed [1,{cfg['maskDecoder']['transformerDim']},{g},{g}], high_res_feats_0/1, low-res masks [1,K,{4 * g},{4 * g}]
* `onnx_*`: the decoder in the model frame (box corners first, padding point last), all four masks;
  `low_res_masks`/`iou_predictions`: `SAM2ImagePredictor.predict` (multimask or single, `multimask_output.npy`)
"""
    scale = sam2_configs.CONFIGS[args.config]["single_mask_scale"]
    if scale and not args.checkpoint:
        text += (f"* mask token 0's last hypernetwork layer is scaled by {scale:g} after seeding, so one single-mask\n"
                 "  case keeps mask 0 (stable) and one falls back to the best multimask output\n")
    if args.onnx:
        text += "* `encoder.onnx`, `decoder.onnx`: samexporter's export_sam2.py pair of this model (opset 18)\n"
    out.path("README.md").write_text(text)


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    out = SetDir(args.out)
    model = build_sam2.weighted_model(args.config, args.seed, args.checkpoint)
    cfg = sam2_configs.swift_config(model, MAX_POINTS)
    out.save_json("config.json", cfg)
    checkpoint = sam2_configs.CONFIGS[args.config]["checkpoint_name"]
    if not args.no_checkpoint_copy:
        build_sam2.save_checkpoint(model, out.path(checkpoint))
    dumps = args.module_dumps == "on" or (args.module_dumps == "auto" and args.config == "tiny")

    predictor = SAM2ImagePredictor(model)
    # SAM2ImagePredictor hard-codes the 1024 input's feature sizes; the same rule at any size.
    grids = [model.image_size // 4, model.image_size // 8, model.image_size // 16]
    predictor._bb_feat_sizes = [(s, s) for s in grids]
    photo = load_photo(args, model.image_size)
    enc = export_encoder(out, model, predictor, photo, dumps)
    ctx = {"model": model, "predictor": predictor, "low_res": {}, "decoded": {}, "input_image": enc["input_image"],
           "mask_size": [4 * grids[2], 4 * grids[2]]}
    cases = []
    for case in prompt_cases(args.seed, photo.shape[1], photo.shape[0]):
        mask = None
        if "mask_from" in case:
            mask = ctx["low_res"][case["mask_from"]][:, :1]
        entry = export_case(out, ctx, case, mask, dumps)
        ctx["decoded"][case["name"]] = {k: np.load(out.root / v) for k, v in entry["decoder"]["outputs"].items()}
        cases.append(entry)
    onnx_report = export_onnx(out, ctx) if args.onnx else {}

    write_readme(out, args, cfg, photo, checkpoint)
    manifest = {
        "exporter_script": EXPORTER_MARK,
        "model": f"sam2 SAM2Base ({args.config} config)",
        "weights": None if args.no_checkpoint_copy else checkpoint,
        "config": cfg,
        "provenance": provenance(args),
        "image_size": list(photo.shape[:2]),
        "mask_threshold": 0.0,
        "tolerances": {"atol": 1e-4, "rtol": 1e-4},
        "cases": cases,
        "module_outputs": {"image_encoder": enc.get("module_outputs", [])},
        "onnxruntime_vs_pytorch": onnx_report,
        "files": file_entries(out.root),
    }
    out.save_json("manifest.json", manifest)
    summary = {"out": str(out.root), "onnxruntime_vs_pytorch": onnx_report,
               "checks": {c["name"]: c["checks"] for c in cases},
               "stability": {c["name"]: c.get("mask0_stability") for c in cases if "mask0_stability" in c}}
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Export MobileSAM reference weights and PyTorch reference outputs.

Usage (what a ``make references`` target runs)::

    python -m venv venv && venv/bin/pip install -r converters/requirements.txt
    venv/bin/python converters/export_reference.py --config tiny --seed 0 \
        --out reference_outputs/tiny

    # the real vit_t size, seeded or from the published checkpoint:
    venv/bin/python converters/export_reference.py --config full --seed 0 --out /tmp/full
    venv/bin/python converters/export_reference.py --config full \
        --checkpoint mobile_sam.pt --out /tmp/full

``converters/export.py`` (the front door, what ``make references`` runs) calls this
first, then adds the split PromptEncoder.onnx / MaskDecoder.onnx pair and the dynamo
exports and completes manifest.json; this script alone still writes the set below.

The output directory mirrors the full-size set in
``fixtures/mobilesam-seed0`` (see its README.md) so one verifier reads both:

    config.json                  every hyperparameter (the Swift runtime reads it)
    mobile_sam.h5                state_dict, one dataset per flat dotted key
    mobile_sam_nested.h5         same, nested groups (image_encoder/layers/0/...)
    image_points_embeddings.bin  raw little-endian f32 prompt_encoder.get_dense_pe()
    ImageEncoder.onnx            TorchScript export, opset 17
    mobile_sam_decoder.onnx      official SamOnnxModel export (multimask)
    manifest.json                files (sha256/shape/dtype), cases, dataflow,
                                 module execution order, provenance, checks
    references/                  input_image, image_embeddings, resized_image,
                                 modules/<module.path>.npy (encoder dumps) and one
                                 folder per prompt case (onnx_*, split_*, predictor
                                 outputs; point1/modules/ holds decoder dumps)

All outputs are computed on CPU in float32 with the upstream ``mobile_sam``
classes; see ``sam_configs.py`` for the configurations and the few places the
tiny one has to work around upstream hard-coded values.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Optional

import h5py
import numpy as np
import torch

import sam_configs
from build_model import build_sam, load_checkpoint_, seeded_init_

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from mobile_sam.predictor import SamPredictor
    from mobile_sam.utils.onnx import SamOnnxModel
    from segment_anything.predictor import SamPredictor as SegmentAnythingPredictor
    from segment_anything.utils.onnx import SamOnnxModel as SegmentAnythingOnnxModel

OPSET = 17
MAX_POINTS = 100
# The full drop's photo is 2048x1365; the synthetic image keeps its aspect so
# the padded rows at the bottom of the encoder input exist here too.
PHOTO_ASPECT = 1365 / 2048
EXPORTER_MARK = "converters/export_reference.py"

# Per image-encoder family: the upstream package whose predictor and ONNX wrapper make the
# references, and the set's file names (the weights and the official decoder).
FAMILIES = {
    "tiny_vit": {"package": "mobile_sam", "model": "mobile_sam vit_t", "weights": "mobile_sam.h5",
                 "nested": "mobile_sam_nested.h5", "decoder": "mobile_sam_decoder.onnx",
                 "predictor": SamPredictor, "onnx_model": SamOnnxModel},
    "vit": {"package": "segment_anything", "model": "segment_anything ImageEncoderViT", "weights": "sam.h5",
            "nested": "sam_nested.h5", "decoder": "sam_decoder.onnx",
            "predictor": SegmentAnythingPredictor, "onnx_model": SegmentAnythingOnnxModel},
}


def family_of(cfg: Dict[str, Any]) -> Dict[str, Any]:
    return FAMILIES[sam_configs.family(cfg)]
# Scripts whose output folder this one may wipe and rewrite (export.py runs this one first).
KNOWN_EXPORTERS = (EXPORTER_MARK, "converters/export.py")


# --- command line ------------------------------------------------------------------


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), default="tiny")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="state dict (.pt/.pth) or flat .h5 instead of seeded weights")
    parser.add_argument("--module-dumps", choices=["auto", "on", "off"], default="auto",
                        help="per-module output dumps (auto: on for tiny only; "
                             "at full size they are gigabytes)")
    parser.add_argument("--no-onnx", action="store_true", help="skip the ONNX exports")
    parser.add_argument("--image", type=Path, default=None, metavar="PATH",
                        help="a photo (PNG/JPEG) instead of the synthetic image: resized as the predictor resizes "
                             "(ResizeLongestSide to the encoder's input size); that resized image is the set's image "
                             "and the prompts are placed on it")
    return parser.parse_args(argv)


# --- output bookkeeping ---------------------------------------------------------------


class OutDir:
    """Output directory; wipes a previous export of ours, refuses anything else."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if root.exists() and any(root.iterdir()):
            if not self._is_our_export(root):
                raise SystemExit(f"{root} is not empty and not an earlier export; refusing")
            shutil.rmtree(root)
        root.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _is_our_export(root: Path) -> bool:
        manifest = root / "manifest.json"
        if not manifest.exists():
            return False
        return json.loads(manifest.read_text()).get("exporter_script") in KNOWN_EXPORTERS

    def path(self, rel: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def save_npy(self, rel: str, array: Any) -> str:
        array = to_numpy(array)
        np.save(self.path(rel), array, allow_pickle=False)
        return rel

    def save_json(self, rel: str, obj: Any) -> str:
        self.path(rel).write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")
        return rel


def to_numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    array = np.asarray(value, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    return array


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_entries(root: Path) -> Dict[str, Dict[str, Any]]:
    """sha256/bytes of every file, plus shape/dtype of every .npy."""
    entries = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel == "manifest.json":
            continue
        entry = {"bytes": path.stat().st_size, "sha256": sha256_of(path)}
        if path.suffix == ".npy":
            array = np.load(path, mmap_mode="r")
            entry.update(shape=list(array.shape), dtype=str(array.dtype))
        entries[rel] = entry
    return entries


# --- weights ---------------------------------------------------------------------------


def write_state_dict_h5(sam: torch.nn.Module, flat: Path, nested: Optional[Path], source: str) -> None:
    """state_dict as HDF5: flat dotted dataset names, and nested groups (unless ``nested`` is None)."""
    state = {k: to_numpy(v) for k, v in sam.state_dict().items()}
    with h5py.File(flat, "w") as f:
        f.attrs["source"] = source
        for key in sorted(state):
            f.create_dataset(key, data=state[key])
    if nested is None:
        return
    with h5py.File(nested, "w") as f:
        f.attrs["source"] = source
        for key in sorted(state):
            f.create_dataset(key.replace(".", "/"), data=state[key])


def write_dense_pe(sam: torch.nn.Module, path: Path) -> np.ndarray:
    with torch.no_grad():
        dense_pe = to_numpy(sam.prompt_encoder.get_dense_pe())
    path.write_bytes(dense_pe.astype("<f4").tobytes())
    return dense_pe


# --- synthetic image -----------------------------------------------------------------------


def synthetic_pixels(seed: int, img_size: int) -> np.ndarray:
    """uint8 RGB [h, img_size, 3], h/img_size = the full drop's photo aspect.

    Smooth per-channel sinusoid and blob pattern plus seeded noise; plays
    the role of ``ResizeLongestSide(img_size).apply_image(photo)``.
    """
    rng = np.random.default_rng(seed)
    height = int(img_size * PHOTO_ASPECT + 0.5)
    y, x = np.mgrid[0:height, 0:img_size].astype(np.float64) / img_size
    channels = []
    for c in range(3):
        fy, fx, phase = rng.uniform(1.0, 4.0), rng.uniform(1.0, 4.0), rng.uniform(0, 2 * np.pi)
        cy, cx = rng.uniform(0.2, 0.8, size=2)
        wave = np.sin(2 * np.pi * (fy * y + fx * x) + phase)
        blob = np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / 0.02)
        channels.append(128 + 70 * wave + 50 * blob)
    pixels = np.stack(channels, axis=-1) + rng.normal(0.0, 12.0, size=(height, img_size, 3))
    return np.clip(np.rint(pixels), 0, 255).astype(np.uint8)


def photo_pixels(path: Path, img_size: int) -> np.ndarray:
    """A photo as the predictor sees it: RGB, resized so its longer side is ``img_size``
    (``ResizeLongestSide(img_size).apply_image``, what ``SamPredictor.set_image`` does first)."""
    from PIL import Image
    from mobile_sam.utils.transforms import ResizeLongestSide

    with Image.open(path) as photo:
        rgb = np.asarray(photo.convert("RGB"))
    return np.ascontiguousarray(ResizeLongestSide(img_size).apply_image(rgb))


def pixels_to_torch(pixels: np.ndarray) -> torch.Tensor:
    """[h, w, 3] uint8 -> [1, 3, h, w] float, as SamPredictor.set_image does."""
    return torch.as_tensor(pixels).permute(2, 0, 1).contiguous()[None].float()


# --- per-module dumps ------------------------------------------------------------------


class ModuleRecorder:
    """Forward hooks on every submodule under the given prefixes.

    Records, in firing order, a clone of each module's output (the first
    tensor of a tuple; non-tensor outputs are skipped). Cloning at hook time
    matters: MBConv adds its shortcut in place into conv3's output.
    """

    def __init__(self, model: torch.nn.Module, prefixes: List[str]) -> None:
        self.calls: List[Dict[str, Any]] = []
        self._counts: Dict[str, int] = {}
        self._handles = [
            module.register_forward_hook(self._hook(name))
            for name, module in model.named_modules()
            if any(name == p or name.startswith(p + ".") for p in prefixes) and self.worth_dumping(name)
        ]

    @staticmethod
    def worth_dumping(name: str) -> bool:
        """Skips outputs no native port can observe, to keep the committed set small:
        a Conv2d_BN's convolution before its BatchNorm (`.c`; the port folds BN into the
        conv, so only the `.bn` output exists natively) and DropPath (identity in eval)."""
        return not (name.endswith(".c") or name.endswith(".drop_path"))

    def _hook(self, name: str):
        def hook(_module, _inputs, output):
            if isinstance(output, (tuple, list)):
                output = next((o for o in output if isinstance(o, torch.Tensor)), None)
            if not isinstance(output, torch.Tensor):
                return
            call = self._counts.get(name, 0)
            self._counts[name] = call + 1
            self.calls.append({"module": name, "call": call, "tensor": output.detach().clone()})
        return hook

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()


def write_module_dumps(out: OutDir, calls: List[Dict[str, Any]], rel_dir: str) -> List[Dict[str, Any]]:
    """One .npy per recorded call, byte-identical outputs stored once.

    Returns manifest rows in execution order. ``file`` of a row whose output
    equals an earlier one (a Sequential and its last child, Conv2d_BN and its
    bn, ...) points at the earlier file and ``same_as`` names that module.
    """
    rows, by_digest = [], {}
    for call in calls:
        array = to_numpy(call["tensor"])
        digest = hashlib.sha256(array.tobytes() + str(array.shape).encode()).hexdigest()
        label = call["module"] if call["call"] == 0 else f"{call['module']}#{call['call']}"
        row = {
            "module": call["module"], "call": call["call"],
            "shape": list(array.shape), "dtype": str(array.dtype),
            "std": float(array.std()), "max_abs": float(np.abs(array).max()),
        }
        if digest in by_digest:
            row.update(file=by_digest[digest]["file"], same_as=by_digest[digest]["label"])
        else:
            row["file"] = out.save_npy(f"{rel_dir}/{label}.npy", array)
            by_digest[digest] = {"file": row["file"], "label": label}
        rows.append(row)
    return rows


# --- prompt cases ------------------------------------------------------------------------


def prompt_cases(seed: int, width: int, height: int) -> List[Dict[str, Any]]:
    """Prompts in the input frame (= original frame, the image is not resized).

    The full drop's cases, except that its ``points100`` is ``points_max``
    here (MAX_POINTS points, the most the runtime accepts).
    """
    rng = np.random.default_rng(seed + 1)

    def random_points(n: int) -> Dict[str, np.ndarray]:
        coords = rng.uniform([0, 0], [width - 1, height - 1], size=(n, 2))
        return {"points": coords, "labels": rng.integers(0, 2, size=n).astype(np.float64)}

    s, h = width, height
    point1 = {"points": np.array([[0.3137 * s, 0.4219 * h]]), "labels": np.array([1.0])}
    return [
        {"name": "point1", **point1},
        {"name": "points2_pos_neg", "points": np.array([[0.5523 * s, 0.3511 * h], [0.2071 * s, 0.6187 * h]]),
         "labels": np.array([1.0, 0.0])},
        {"name": "points5", **random_points(5)},
        {"name": "points16", **random_points(16)},
        {"name": "points_max", **random_points(MAX_POINTS)},
        {"name": "box", "box": np.array([0.2031 * s, 0.2517 * h, 0.7012 * s, 0.8003 * h])},
        {"name": "box_point", "points": np.array([[0.6419 * s, 0.2788 * h]]), "labels": np.array([1.0]),
         "box": np.array([0.1043 * s, 0.0991 * h, 0.8976 * s, 0.9012 * h])},
        # mask input = first multimask low-res mask of point1, filled in later
        {"name": "point1_with_mask_input", **point1, "mask_from": "point1"},
    ]


def official_inputs(case: Dict[str, Any], mask_size: List[int], mask: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    """SamOnnxModel inputs: box corners as labels 2/3, else a (0,0,-1) padding point."""
    coords = [np.asarray(case.get("points", np.zeros((0, 2))))]
    labels = [np.asarray(case.get("labels", np.zeros(0)))]
    if "box" in case:
        coords.append(np.asarray(case["box"]).reshape(2, 2))
        labels.append(np.array([2.0, 3.0]))
    else:
        coords.append(np.zeros((1, 2)))
        labels.append(np.array([-1.0]))
    has_mask = mask is not None
    return {
        "point_coords": np.concatenate(coords)[None].astype(np.float32),
        "point_labels": np.concatenate(labels)[None].astype(np.float32),
        "mask_input": (mask if has_mask else np.zeros((1, 1, *mask_size))).astype(np.float32),
        "has_mask_input": np.array([float(has_mask)], dtype=np.float32),
    }


@torch.no_grad()
def run_official(onnx_model: SamOnnxModel, embeddings: torch.Tensor, inputs: Dict[str, np.ndarray],
                 orig_im_size: np.ndarray) -> Dict[str, np.ndarray]:
    _, iou, low_res = onnx_model(
        embeddings,
        *(torch.from_numpy(inputs[k]) for k in ("point_coords", "point_labels", "mask_input", "has_mask_input")),
        torch.from_numpy(orig_im_size),
    )
    return {"low_res_masks": to_numpy(low_res), "iou_predictions": to_numpy(iou)}


@torch.no_grad()
def run_split(sam, embeddings: torch.Tensor, points: np.ndarray, labels: np.ndarray,
              pad: bool) -> Dict[str, np.ndarray]:
    """Prompt encoder then all four decoder masks (predict_masks).

    pad=False is the full drop's split path (no padding point, N embeddings);
    pad=True is what PromptEncoder.forward(points, boxes=None) does.
    """
    pe = sam.prompt_encoder
    p = torch.from_numpy(points[None].astype(np.float32))
    l = torch.from_numpy(labels[None].astype(np.float32))
    sparse = pe._embed_points(p, l, pad=pad)
    grid = pe.image_embedding_size
    dense = pe.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(1, -1, *grid)
    masks, iou = sam.mask_decoder.predict_masks(
        image_embeddings=embeddings, image_pe=pe.get_dense_pe(),
        sparse_prompt_embeddings=sparse, dense_prompt_embeddings=dense,
    )
    return {"sparse_embeddings": to_numpy(sparse), "masks": to_numpy(masks), "iou_predictions": to_numpy(iou)}


def run_predictor(predictor: SamPredictor, case: Dict[str, Any], mask: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    """SamPredictor.predict(multimask_output=True): masks 1..3 of the 4."""
    masks, iou, low_res = predictor.predict(
        point_coords=case.get("points"), point_labels=case.get("labels"), box=case.get("box"),
        mask_input=None if mask is None else mask[0], multimask_output=True,
    )
    return {"masks_binary": masks[None], "iou_predictions": iou[None], "low_res_masks": low_res[None]}


def max_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())


# --- one case -----------------------------------------------------------------------------


def export_case(out: OutDir, ctx: Dict[str, Any], case: Dict[str, Any],
                mask: Optional[np.ndarray], record: bool) -> Dict[str, Any]:
    """Write one case folder; return its manifest entry."""
    sam, name = ctx["sam"], case["name"]
    folder = f"references/{name}"
    entry = {"name": name, "prompt": prompt_summary(case), "checks": {}}

    inputs = official_inputs(case, ctx["mask_size"], mask)
    recorder = ModuleRecorder(sam, ["prompt_encoder", "mask_decoder"]) if record else None
    official = run_official(ctx["onnx_model"], ctx["embeddings"], inputs, ctx["orig_im_size"])
    if recorder:
        recorder.remove()
        entry["module_outputs"] = write_module_dumps(out, recorder.calls, f"{folder}/modules")
    entry["official"] = {
        "inputs": {"image_embeddings": "references/image_embeddings.npy",
                   **{k: out.save_npy(f"{folder}/onnx_{k}.npy", v) for k, v in inputs.items()},
                   "orig_im_size": ctx["orig_im_size"].tolist()},
        "outputs": {k: out.save_npy(f"{folder}/onnx_{k}.npy", v) for k, v in official.items()},
    }
    ctx["official"][name] = official

    entry["predictor"] = export_predictor(out, ctx, case, mask, official, entry["checks"])
    if "box" not in case and mask is None:
        entry["split"] = export_split(out, ctx, case, official, entry["checks"])
    entry["files"] = sorted(Path(p).name for p in out.root.joinpath(folder).glob("*.npy"))
    return entry


def export_predictor(out: OutDir, ctx: Dict[str, Any], case: Dict[str, Any], mask: Optional[np.ndarray],
                     official: Dict[str, np.ndarray], checks: Dict[str, float]) -> Dict[str, Any]:
    folder = f"references/{case['name']}"
    inputs = {}
    if "points" in case:
        inputs["point_coords"] = out.save_npy(f"{folder}/point_coords.npy", case["points"][None])
        inputs["point_labels"] = out.save_npy(f"{folder}/point_labels.npy", case["labels"][None])
    if "box" in case:
        inputs["box"] = out.save_npy(f"{folder}/box.npy", case["box"][None])
    if mask is not None:
        inputs["mask_input"] = out.save_npy(f"{folder}/mask_input.npy", mask)
    result = run_predictor(ctx["predictor"], case, mask)
    outputs = {k: out.save_npy(f"{folder}/{k}.npy", result[k]) for k in ("low_res_masks", "iou_predictions")}
    if case["name"] == "point1":
        outputs["masks_binary"] = out.save_npy(f"{folder}/masks_binary.npy", result["masks_binary"])
    checks["predictor_vs_official_masks_1to3_max_abs"] = max_abs(result["low_res_masks"], official["low_res_masks"][:, 1:])
    checks["predictor_vs_official_iou_1to3_max_abs"] = max_abs(result["iou_predictions"], official["iou_predictions"][:, 1:])
    return {"call": "SamPredictor.predict(multimask_output=True)", "inputs": inputs, "outputs": outputs}


def export_split(out: OutDir, ctx: Dict[str, Any], case: Dict[str, Any],
                 official: Dict[str, np.ndarray], checks: Dict[str, float]) -> Dict[str, Any]:
    folder = f"references/{case['name']}"
    split = run_split(ctx["sam"], ctx["embeddings"], case["points"], case["labels"], pad=False)
    padded = run_split(ctx["sam"], ctx["embeddings"], case["points"], case["labels"], pad=True)
    checks["split_padded_vs_official_masks_max_abs"] = max_abs(padded["masks"], official["low_res_masks"])
    checks["split_padded_vs_official_iou_max_abs"] = max_abs(padded["iou_predictions"], official["iou_predictions"])
    checks["split_unpadded_vs_official_masks_max_abs"] = max_abs(split["masks"], official["low_res_masks"])
    return {
        "inputs": {
            "points": out.save_npy(f"{folder}/split_points.npy", case["points"][None]),
            "labels": out.save_npy(f"{folder}/split_labels.npy", case["labels"][None]),
            "image_embeddings": "references/image_embeddings.npy",
            "image_positional_encoding": "image_points_embeddings.bin",
        },
        "outputs": {
            "sparse_embeddings": out.save_npy(f"{folder}/split_sparse_embeddings.npy", split["sparse_embeddings"]),
            "masks": out.save_npy(f"{folder}/split_masks.npy", split["masks"]),
            "iou_predictions": out.save_npy(f"{folder}/split_iou_predictions.npy", split["iou_predictions"]),
        },
        "note": "prompt_encoder._embed_points(pad=False) (no padding point), "
                "dense = no_mask_embed broadcast, mask_decoder.predict_masks (all 4 masks)",
    }


def prompt_summary(case: Dict[str, Any]) -> Dict[str, Any]:
    summary = {"num_points": int(len(case.get("labels", [])))}
    if "box" in case:
        summary["box"] = [float(v) for v in case["box"]]
    if "mask_from" in case:
        summary["mask_input"] = f"references/{case['mask_from']}/low_res_masks.npy[:, :1] " \
                                f"(= onnx_low_res_masks[:, 1:2])"
    return summary


# --- image encoder -------------------------------------------------------------------------


def export_encoder(out: OutDir, sam, seed: int, dumps: bool, image: Optional[Path] = None) -> Dict[str, Any]:
    """The synthetic image (or ``image``, resized) through preprocess + image encoder, with module dumps."""
    size = sam.image_encoder.img_size
    pixels = photo_pixels(image, size) if image is not None else synthetic_pixels(seed, size)
    with torch.no_grad():
        input_image = sam.preprocess(pixels_to_torch(pixels)[0])[None]
        recorder = ModuleRecorder(sam, ["image_encoder"]) if dumps else None
        embeddings = sam.image_encoder(input_image)
    result = {
        "pixels": pixels, "input_image": input_image, "embeddings": embeddings,
        "files": {
            "resized_image": out.save_npy("references/resized_image.npy", pixels),
            "input_image": out.save_npy("references/input_image.npy", input_image),
            "image_embeddings": out.save_npy("references/image_embeddings.npy", embeddings),
        },
    }
    if recorder:
        recorder.remove()
        result["module_outputs"] = write_module_dumps(out, recorder.calls, "references/modules")
    return result


# --- ONNX -------------------------------------------------------------------------------------


def export_onnx(out: OutDir, ctx: Dict[str, Any]) -> Dict[str, Any]:
    """ImageEncoder.onnx + the official decoder (mobile_sam_decoder.onnx / sam_decoder.onnx), each
    checked with onnxruntime."""
    report: Dict[str, Any] = {}
    for name, export, verify in (
        ("ImageEncoder.onnx", export_encoder_onnx, verify_encoder_onnx),
        (ctx["family"]["decoder"], export_decoder_onnx, verify_decoder_onnx),
    ):
        try:
            export(ctx, out.path(name))
            report.update(verify(ctx, out.path(name)))
        except Exception as exc:  # record and move on: the h5 + npy set matters most
            report[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
            out.path(name).unlink(missing_ok=True)
            out.path(name + ".data").unlink(missing_ok=True)
    return report


def _torchscript_export(model, args, path: Path, **kwargs) -> None:
    """torch.onnx.export into ``path``. A model over protobuf's 2 GB limit (SAM ViT-H) is written by
    torch as one external file per initializer beside the graph; those are gathered into one file,
    ``<path>.data`` (onnx's external-data layout, what samconvert and onnxruntime find beside it)."""
    with tempfile.TemporaryDirectory(prefix=".onnx-export-", dir=path.parent) as tmp:
        staged = Path(tmp) / path.name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, args, str(staged), dynamo=False, opset_version=OPSET,
                              do_constant_folding=True, export_params=True, **kwargs)
        if [p.name for p in Path(tmp).iterdir()] == [path.name]:
            staged.replace(path)  # under 2 GB: the file as torch wrote it
            return
        import onnx

        data = path.with_name(path.name + ".data")
        data.unlink(missing_ok=True)
        onnx.save_model(onnx.load(str(staged)), str(path), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=data.name, size_threshold=1024)
        umask = os.umask(0)
        os.umask(umask)
        data.chmod(0o666 & ~umask)  # onnx writes it owner-only; the set's other files follow the umask


def export_encoder_onnx(ctx: Dict[str, Any], path: Path) -> None:
    _torchscript_export(ctx["sam"].image_encoder, (ctx["input_image"],), path,
                        input_names=["image"], output_names=["imageEmbeddings"])


def export_decoder_onnx(ctx: Dict[str, Any], path: Path) -> None:
    """As segment-anything's scripts/export_onnx_model.py (multimask)."""
    pe = ctx["sam"].prompt_encoder
    size = ctx["sam"].image_encoder.img_size
    dummy = (
        torch.randn(1, pe.embed_dim, *pe.image_embedding_size),
        torch.randint(0, size, (1, 5, 2)).float(),
        torch.randint(0, 4, (1, 5)).float(),
        torch.randn(1, 1, *pe.mask_input_size),
        torch.tensor([1.0]),
        torch.tensor([1500.0, 2250.0]),
    )
    _torchscript_export(
        ctx["onnx_model"], dummy, path,
        input_names=["image_embeddings", "point_coords", "point_labels", "mask_input",
                     "has_mask_input", "orig_im_size"],
        output_names=["masks", "iou_predictions", "low_res_masks"],
        dynamic_axes={"point_coords": {1: "num_points"}, "point_labels": {1: "num_points"}},
    )


def _ort_session(path: Path):
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def verify_encoder_onnx(ctx: Dict[str, Any], path: Path) -> Dict[str, float]:
    (embeddings,) = _ort_session(path).run(None, {"image": to_numpy(ctx["input_image"])})
    return {"image_embeddings_max_abs": max_abs(embeddings, to_numpy(ctx["embeddings"]))}


def verify_decoder_onnx(ctx: Dict[str, Any], path: Path) -> Dict[str, float]:
    session = _ort_session(path)
    worst_masks = worst_iou = 0.0
    for name, official in ctx["official"].items():
        folder = ctx["out"].root / "references" / name
        feeds = {k: np.load(folder / f"onnx_{k}.npy")
                 for k in ("point_coords", "point_labels", "mask_input", "has_mask_input")}
        feeds["image_embeddings"] = to_numpy(ctx["embeddings"])
        feeds["orig_im_size"] = ctx["orig_im_size"]
        _, iou, low_res = session.run(None, feeds)
        worst_masks = max(worst_masks, max_abs(low_res, official["low_res_masks"]))
        worst_iou = max(worst_iou, max_abs(iou, official["iou_predictions"]))
    return {"onnx_low_res_masks_max_abs": worst_masks, "onnx_iou_predictions_max_abs": worst_iou}


# --- manifest -------------------------------------------------------------------------------


def provenance(args: argparse.Namespace) -> Dict[str, Any]:
    def version(dist: str) -> Optional[str]:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "mobile_sam": version("mobilesam-mirror"),
        "timm": version("timm"),
        "h5py": h5py.__version__,
        "onnx": version("onnx"),
        "onnxruntime": version("onnxruntime"),
        "seed": None if args.checkpoint else args.seed,
        "checkpoint": str(args.checkpoint) if args.checkpoint else None,
        "checkpoint_sha256": sha256_of(args.checkpoint) if args.checkpoint else None,
        "image": str(args.image) if args.image else "synthetic",
        "image_sha256": sha256_of(args.image) if args.image else None,
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
    }


def dataflow() -> List[Dict[str, Any]]:
    return [
        {"stage": "preprocess", "inputs": ["references/resized_image.npy"],
         "outputs": ["references/input_image.npy"],
         "how": "(pixels - pixel_mean) / pixel_std, zero-pad bottom/right to img_size"},
        {"stage": "image_encoder", "inputs": ["references/input_image.npy"],
         "outputs": ["references/image_embeddings.npy"], "module_dumps": "references/modules/"},
        {"stage": "dense_positional_encoding", "inputs": [],
         "outputs": ["image_points_embeddings.bin"], "how": "prompt_encoder.get_dense_pe(), raw LE f32"},
        {"stage": "official_decoder (SamOnnxModel, return_single_mask=False)",
         "inputs": ["references/image_embeddings.npy", "references/<case>/onnx_point_coords.npy",
                    "references/<case>/onnx_point_labels.npy", "references/<case>/onnx_mask_input.npy",
                    "references/<case>/onnx_has_mask_input.npy"],
         "outputs": ["references/<case>/onnx_low_res_masks.npy", "references/<case>/onnx_iou_predictions.npy"],
         "module_dumps": "references/point1/modules/ (case point1 only)"},
        {"stage": "split_decoder (point-only cases)",
         "inputs": ["references/image_embeddings.npy", "image_points_embeddings.bin",
                    "references/<case>/split_points.npy", "references/<case>/split_labels.npy"],
         "outputs": ["references/<case>/split_sparse_embeddings.npy", "references/<case>/split_masks.npy",
                     "references/<case>/split_iou_predictions.npy"]},
        {"stage": "predictor (SamPredictor.predict, multimask)",
         "inputs": ["references/resized_image.npy", "references/<case>/point_coords.npy",
                    "references/<case>/point_labels.npy", "references/<case>/box.npy",
                    "references/<case>/mask_input.npy"],
         "outputs": ["references/<case>/low_res_masks.npy", "references/<case>/iou_predictions.npy",
                     "references/point1/masks_binary.npy"]},
    ]


def write_manifest(out: OutDir, args, cfg, enc, cases, onnx_report, checks,
                   exporter: str = EXPORTER_MARK) -> None:
    manifest = {
        "exporter_script": exporter,
        "exporter": "torchscript",
        "model": f"{family_of(cfg)['model']} ({cfg['name']} config)",
        "weights": family_of(cfg)["weights"],
        "config": cfg,
        "seed": None if args.checkpoint else args.seed,
        "torch": torch.__version__,
        "opset": OPSET,
        "h5_layout": "flat",
        "h5_nested": family_of(cfg)["nested"],
        "image_size": list(enc["pixels"].shape[:2]),
        "mask_threshold": 0.0,
        "provenance": provenance(args),
        "dataflow": dataflow(),
        "cases": cases,
        "module_execution_order": {
            "image_encoder": [_order_label(r) for r in enc.get("module_outputs", [])],
            "decoder_point1_official": [_order_label(r) for c in cases for r in c.get("module_outputs", [])],
        },
        "module_outputs": {"image_encoder": enc.get("module_outputs", [])},
        "onnxruntime_vs_pytorch": onnx_report,
        "checks": checks,
        "checks_note": "cases[].checks: predictor_vs_official_* and split_padded_vs_official_* must be ~0 "
                       "(same computation); split_unpadded_vs_official_* is expected to be non-zero "
                       "(the official path embeds a (0,0,-1) padding point, the split path does not)",
        "files": file_entries(out.root),
    }
    out.save_json("manifest.json", manifest)


def _order_label(row: Dict[str, Any]) -> str:
    return row["module"] if row["call"] == 0 else f"{row['module']}#{row['call']}"


def write_readme(out: OutDir, cfg: Dict[str, Any], args: argparse.Namespace, image_hw: List[int],
                 exporter: str = EXPORTER_MARK) -> None:
    """A README for the output folder, in the spirit of the full drop's."""
    enc, pe = cfg["imageEncoder"], cfg["promptEncoder"]
    s, g, m, d = enc["imageSize"], enc["outputGrid"], pe["maskInputSize"], pe["embedDim"]
    weights = f"checkpoint `{args.checkpoint.name}`" if args.checkpoint else f"seeded random weights (seed {args.seed})"
    title = "MobileSAM" if sam_configs.family(cfg) == "tiny_vit" else "SAM (ViT)"
    image_kind = f"`{args.image.name}` resized to" if args.image else "synthetic"
    text = f"""# {title} reference set: `{cfg['name']}` configuration

Generated by `{exporter}` (do not edit; rerun it):

    python {provenance(args)["command"]}

Upstream `{family_of(cfg)['package']}` classes, {weights}, every norm affine, bias,
BatchNorm statistic, TinyViT attention bias, position embedding and relative-position table
drawn away from identity (where the model has them). `config.json` has every
hyperparameter (it decodes as the Swift `SAMConfig`; `upstreamPatches` lists where
the upstream code had to be worked around). Layout and names mirror the full-size
drop `mobilesam-seed0`; `manifest.json` lists every file with shape/dtype/sha256,
the cases, which inputs feed which outputs, and the module execution order.

* input {s}x{s}, image embedding [1,{d},{g},{g}], low-res masks [1,4,{m},{m}]
* image: {image_kind} {image_hw[0]}x{image_hw[1]} RGB (`references/resized_image.npy`), zero-padded
  to {s}x{s} after normalising (`references/input_image.npy`); prompts are in that frame
  (no resize, so `point_coords` equal `onnx_point_coords` without the padding point)
* `references/modules/<module.path>.npy`: image-encoder module outputs, in
  `manifest.module_outputs.image_encoder` (byte-identical outputs stored once: see `same_as`);
  `references/point1/modules/`: prompt-encoder and mask-decoder module outputs of case
  `point1`'s official-decoder run (`cases[point1].module_outputs`)
* cases: `onnx_*` = official `SamOnnxModel` inputs/outputs (all 4 masks), `split_*` =
  prompt encoder without padding point + `predict_masks` (point-only cases),
  `low_res_masks`/`iou_predictions` = `SamPredictor.predict(multimask_output=True)`
"""
    out.path("README.md").write_text(text)


# --- main ----------------------------------------------------------------------------------------


def build_weighted_model(args: argparse.Namespace, cfg: Dict[str, Any]):
    torch.manual_seed(args.seed)
    sam = build_sam(cfg)
    if args.checkpoint:
        load_checkpoint_(sam, args.checkpoint)
    else:
        seeded_init_(sam)
    return sam


def global_checks(enc: Dict[str, Any], predictor: SamPredictor, dense_pe: np.ndarray) -> Dict[str, Any]:
    return {
        "predictor_features_vs_image_embeddings_max_abs": max_abs(to_numpy(predictor.features),
                                                                   to_numpy(enc["embeddings"])),
        "image_embeddings_std": float(to_numpy(enc["embeddings"]).std()),
        "dense_pe_std": float(dense_pe.std()),
    }


def export_weights(out: OutDir, sam, cfg: Dict[str, Any], args: argparse.Namespace) -> np.ndarray:
    """config.json, both h5 layouts and the dense positional encoding."""
    out.save_json("config.json", cfg)
    family = family_of(cfg)
    source = f"{family['model']} ({cfg['name']}) state_dict, " + (
        f"checkpoint {args.checkpoint.name}" if args.checkpoint else f"seeded random weights (seed {args.seed})")
    write_state_dict_h5(sam, out.path(family["weights"]), out.path(family["nested"]), source)
    return write_dense_pe(sam, out.path("image_points_embeddings.bin"))


def make_context(out: OutDir, sam, enc: Dict[str, Any], family: Dict[str, Any]) -> Dict[str, Any]:
    """What the case exporters share: model, wrappers, embeddings, sizes."""
    predictor = family["predictor"](sam)
    predictor.set_torch_image(pixels_to_torch(enc["pixels"]), enc["pixels"].shape[:2])
    return {
        "sam": sam, "out": out, "predictor": predictor, "official": {}, "family": family,
        "onnx_model": family["onnx_model"](sam, return_single_mask=False),
        "embeddings": enc["embeddings"], "input_image": enc["input_image"],
        "mask_size": list(sam.prompt_encoder.mask_input_size),
        "orig_im_size": np.array(enc["pixels"].shape[:2], dtype=np.float32),
    }


def export_cases(out: OutDir, ctx: Dict[str, Any], seed: int, dumps: bool) -> List[Dict[str, Any]]:
    sam = ctx["sam"]
    height, width = int(ctx["orig_im_size"][0]), int(ctx["orig_im_size"][1])
    cases = []
    for case in prompt_cases(seed, width, height):
        mask = None
        if "mask_from" in case:
            mask = np.load(out.root / f"references/{case['mask_from']}/low_res_masks.npy")[:, :1]
        cases.append(export_case(out, ctx, case, mask, record=dumps and case["name"] == "point1"))
    return cases


def main(argv: Optional[List[str]] = None, exporter: str = EXPORTER_MARK) -> Dict[str, Any]:
    """Runs the CLI (``argv`` as for the command line). ``exporter`` is the script named in
    manifest.json/README.md (``converters/export.py`` when that front door calls this)."""
    args = parse_args(argv)
    cfg = sam_configs.resolve(args.config)
    torch.set_grad_enabled(False)
    out = OutDir(args.out)
    sam = build_weighted_model(args, cfg)
    dumps = args.module_dumps == "on" or (args.module_dumps == "auto" and args.config.endswith("tiny"))

    dense_pe = export_weights(out, sam, cfg, args)
    enc = export_encoder(out, sam, args.seed, dumps, args.image)
    ctx = make_context(out, sam, enc, family_of(cfg))
    cases = export_cases(out, ctx, args.seed, dumps)
    onnx_report = {} if args.no_onnx else export_onnx(out, ctx)

    write_readme(out, cfg, args, list(enc["pixels"].shape[:2]), exporter)
    write_manifest(out, args, cfg, enc, cases, onnx_report, global_checks(enc, ctx["predictor"], dense_pe),
                   exporter)
    summary = {"out": str(out.root), "onnxruntime_vs_pytorch": onnx_report,
               "checks": {c["name"]: c["checks"] for c in cases}}
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()

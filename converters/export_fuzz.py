#!/usr/bin/env python3
"""Seeded random prompts on one image, with PyTorch's outputs: a reference set for samverify.

Usage::

    # from a committed tiny set (its config.json and weights):
    venv/bin/python converters/export_fuzz.py --source reference_outputs/tiny --count 200 --seed 0 \
        --out reference_outputs/tiny_fuzz
    # from a full-size set (no config.json: --config names it):
    venv/bin/python converters/export_fuzz.py --source ../shared/fixtures/mobilesam-seed0 --config full \
        --count 200 --seed 0 --out /tmp/mobilesam-fuzz
    # regenerate the group of one failing case (same seed, same prompt, same outputs):
    venv/bin/python converters/export_fuzz.py --source ... --seed 0 --count 200 --only f0042s2 --out /tmp/one

The model is the source set's own weights (``mobile_sam.h5`` / ``sam.h5``, flat HDF5) in the upstream
classes; the image is the source set's: its PyTorch ``references/image_embeddings.npy`` is the decoder's
input, as in every decoder case of the source set. Each prompt runs the official ``SamOnnxModel``
(``return_single_mask=False``: all four low-res masks and IoU predictions), so samverify reads the
cases as it reads the source set's ``onnx_*`` files.

Prompts are drawn in original-image pixels, in groups. Group ``g`` draws from
``numpy.random.default_rng([seed, g])``, so any group can be regenerated alone; a group is one of

* ``points``: 1..maxPoints points (log-uniform count, maxPoints itself now and then), each
  foreground with probability 0.7;
* ``box``: one box;
* ``box_points``: a box and 1..8 points (a box counts as two of the model's points);
* ``chain``: a refinement chain of 2 or 3 steps: step 1 is a few points or a box, every later step
  adds one point and feeds back the previous step's best low-res mask (the highest IoU prediction
  of masks 1..3, as SamPredictor's multimask output and SAM's notebooks do) as ``mask_input``.

With ``--near-ties N``, N more two-step chains whose best mask is nearly a tie: candidate ``c`` draws
from ``default_rng([seed, 1 << 20, c])`` one foreground point, then one more point with the first
step's best mask fed back; candidates are run in batches and the first N whose second step's
best-mask margin (top IoU prediction of masks 1..3 minus the runner-up) lies in ``--near-tie-window``
are kept (checked again unbatched). The window's floor keeps the margin well above float32 noise
of the IoU head (~1e-6), so an honest port must pick the same mask; its ceiling keeps it below
samverify's default atol, so a port whose IoU predictions are off by less than the tensor tolerance
can still pick another mask. These are the prompts where best-mask agreement is most fragile.

Case names: ``f<group>`` for a single prompt, ``f<group>s<step>`` for chain steps, ``t<candidate>s<step>``
for near ties. Groups are drawn
until ``--count`` cases exist (the last chain may be cut short). Written per case (no split path):
``onnx_point_coords``/``onnx_point_labels`` (input frame, the padding point without a box),
``onnx_has_mask_input``, ``onnx_mask_input`` (chain steps only), ``onnx_low_res_masks``,
``onnx_iou_predictions``, and the prompt in image pixels (``point_coords``, ``point_labels``, ``box``).
manifest.json carries the seed, the count, the command, every case's prompt and the reference's
best-mask margin (the top IoU prediction of masks 1..3 minus the runner-up), and a check that the
loaded weights reproduce the source set's own ``onnx_*`` outputs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
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
    from mobile_sam.utils.onnx import SamOnnxModel
    from mobile_sam.utils.transforms import ResizeLongestSide
    from segment_anything.utils.onnx import SamOnnxModel as SegmentAnythingOnnxModel

EXPORTER_MARK = "converters/export_fuzz.py"
WEIGHT_FILES = ("mobile_sam.h5", "sam.h5")
KINDS = ("points", "box", "box_points", "chain")
KIND_WEIGHTS = (0.4, 0.15, 0.2, 0.25)
FOREGROUND_PROBABILITY = 0.7


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, required=True,
                        help="a reference set: weights (mobile_sam.h5 or sam.h5), manifest.json, references/image_embeddings.npy")
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), default=None,
                        help="the model's configuration when the source has no config.json (a full-size set: full)")
    parser.add_argument("--count", type=int, default=200, help="cases to write (chain steps count one each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", action="append", default=[],
                        help="write only the group holding this case (repeatable), to regenerate a failing case")
    parser.add_argument("--near-ties", type=int, default=0, help="two-step chains whose best mask is nearly a tie")
    parser.add_argument("--near-tie-candidates", type=int, default=20000, help="candidates searched for near ties")
    parser.add_argument("--near-tie-window", type=float, nargs=2, default=(2e-5, 1e-4), metavar=("LOW", "HIGH"),
                        help="best-mask margins a near tie may have")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


# --- the source set -------------------------------------------------------------------------


def load_source(source: Path, config_name: Optional[str]) -> Dict[str, Any]:
    manifest = json.loads((source / "manifest.json").read_text())
    if (source / "config.json").exists():
        cfg = json.loads((source / "config.json").read_text())
    elif config_name:
        cfg = sam_configs.resolve(config_name)
    else:
        raise SystemExit(f"{source} has no config.json; name the configuration with --config")
    weights = next((source / name for name in WEIGHT_FILES if (source / name).exists()), None)
    if weights is None:
        raise SystemExit(f"{source} has none of {', '.join(WEIGHT_FILES)}")
    torch.manual_seed(0)
    sam = build_sam(cfg)
    load_checkpoint_(sam, weights)
    height, width = (int(v) for v in manifest["image_size"])
    vit = sam_configs.family(cfg) == "vit"
    return {
        "manifest": manifest, "cfg": cfg, "sam": sam, "weights": weights, "size": (height, width),
        "embeddings": torch.from_numpy(np.load(source / "references/image_embeddings.npy")),
        "onnx_model": (SegmentAnythingOnnxModel if vit else SamOnnxModel)(sam, return_single_mask=False),
        "transform": ResizeLongestSide(sam.image_encoder.img_size),
    }


# --- prompts -------------------------------------------------------------------------------------


def random_points(rng: np.random.Generator, count: int, size) -> Dict[str, np.ndarray]:
    height, width = size
    coords = rng.uniform([0, 0], [width, height], size=(count, 2)).astype(np.float32)
    # uniform's upper end is open, but float32 rounding can reach it: keep points inside the image.
    coords = np.minimum(coords, np.array([np.nextafter(np.float32(width), 0), np.nextafter(np.float32(height), 0)],
                                         dtype=np.float32))
    labels = (rng.uniform(size=count) < FOREGROUND_PROBABILITY).astype(np.float32)
    return {"points": coords, "labels": labels}


def random_box(rng: np.random.Generator, size) -> np.ndarray:
    height, width = size
    x = np.sort(rng.uniform(0, width, size=2))
    y = np.sort(rng.uniform(0, height, size=2))
    x[1] = min(max(x[1], x[0] + 1), width)
    y[1] = min(max(y[1], y[0] + 1), height)
    return np.array([x[0], y[0], x[1], y[1]], dtype=np.float32)


def point_count(rng: np.random.Generator, most: int) -> int:
    """1..most, log-uniform, with `most` itself one time in twenty."""
    if rng.uniform() < 0.05:
        return most
    return int(min(most, max(1, round(np.exp(rng.uniform(0, np.log(most)))))))


def group_prompts(seed: int, group: int, size, max_points: int) -> List[Dict[str, Any]]:
    """The prompts of group `group`: one, or a chain's steps (each later step's mask comes from the run)."""
    rng = np.random.default_rng([seed, group])
    kind = KINDS[int(rng.choice(len(KINDS), p=KIND_WEIGHTS))]
    if kind == "points":
        return [{"kind": kind, **random_points(rng, point_count(rng, max_points), size)}]
    if kind == "box":
        return [{"kind": kind, "box": random_box(rng, size)}]
    if kind == "box_points":
        return [{"kind": kind, "box": random_box(rng, size),
                 **random_points(rng, int(rng.integers(1, min(8, max_points - 2) + 1)), size)}]
    steps = int(rng.integers(2, 4))
    first: Dict[str, Any] = {"kind": "chain"}
    if rng.uniform() < 0.5:
        first["box"] = random_box(rng, size)
    else:
        first.update(random_points(rng, int(rng.integers(1, 4)), size))
    prompts = [first]
    for _ in range(steps - 1):
        previous = prompts[-1]
        extra = random_points(rng, 1, size)
        step = {"kind": "chain", "mask_from_previous": True,
                "points": np.concatenate([previous.get("points", np.zeros((0, 2), np.float32)), extra["points"]]),
                "labels": np.concatenate([previous.get("labels", np.zeros(0, np.float32)), extra["labels"]])}
        if "box" in previous:
            step["box"] = previous["box"]
        if len(step["points"]) + (2 if "box" in step else 0) > max_points:
            break
        prompts.append(step)
    return prompts


def case_names(group: int, steps: int) -> List[str]:
    return [f"f{group:04d}"] if steps == 1 else [f"f{group:04d}s{step + 1}" for step in range(steps)]


# --- running one prompt -------------------------------------------------------------------------


def official_inputs(src: Dict[str, Any], prompt: Dict[str, Any], mask: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    """SamOnnxModel's inputs: coordinates in the input frame, box corners as labels 2 and 3, else a
    (0, 0, -1) padding point. ref: segment_anything/predictor.py SamPredictor.predict (apply_coords)"""
    coords = [prompt.get("points", np.zeros((0, 2), np.float32))]
    labels = [prompt.get("labels", np.zeros(0, np.float32))]
    if "box" in prompt:
        coords.append(prompt["box"].reshape(2, 2))
        labels.append(np.array([2.0, 3.0], np.float32))
    mapped = src["transform"].apply_coords(np.concatenate(coords).astype(np.float64), src["size"]).astype(np.float32)
    label_array = np.concatenate(labels).astype(np.float32)
    if "box" not in prompt:
        mapped = np.concatenate([mapped, np.zeros((1, 2), np.float32)])
        label_array = np.concatenate([label_array, np.array([-1.0], np.float32)])
    side = src["sam"].prompt_encoder.mask_input_size
    return {
        "point_coords": mapped[None],
        "point_labels": label_array[None],
        "mask_input": (mask if mask is not None else np.zeros((1, 1, *side))).astype(np.float32),
        "has_mask_input": np.array([1.0 if mask is not None else 0.0], np.float32),
    }


@torch.no_grad()
def run_official(src: Dict[str, Any], inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    _, iou, low_res = src["onnx_model"](
        src["embeddings"],
        *(torch.from_numpy(inputs[k]) for k in ("point_coords", "point_labels", "mask_input", "has_mask_input")),
        torch.tensor([float(v) for v in src["size"]]),
    )
    return {"low_res_masks": low_res.numpy().astype(np.float32), "iou_predictions": iou.numpy().astype(np.float32)}


def best_of_multimask(iou: np.ndarray) -> int:
    """Index (of the four) of the highest IoU prediction among masks 1..3; np.argmax keeps the first of ties."""
    return 1 + int(np.argmax(iou[0, 1:]))


def best_margin(iou: np.ndarray) -> float:
    scores = np.sort(iou[0, 1:].astype(np.float64))
    return float(scores[-1] - scores[-2])


# --- near ties ------------------------------------------------------------------------------------

NEAR_TIE_STREAM = 1 << 20


def near_tie_prompts(seed: int, candidate: int, size) -> List[Dict[str, Any]]:
    """Candidate `candidate`'s two steps: one foreground point, then one more point (mask fed back)."""
    rng = np.random.default_rng([seed, NEAR_TIE_STREAM, candidate])
    first = random_points(rng, 1, size)
    first["labels"][:] = 1
    extra = random_points(rng, 1, size)
    second = {"kind": "near_tie", "mask_from_previous": True,
              "points": np.concatenate([first["points"], extra["points"]]),
              "labels": np.concatenate([first["labels"], extra["labels"]])}
    return [{"kind": "near_tie", **first}, second]


def stacked(src: Dict[str, Any], prompts: List[Dict[str, Any]], masks: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    """Official inputs of same-shaped prompts as one batch (the decoder repeats the embeddings per prompt)."""
    rows = [official_inputs(src, prompt, None) for prompt in prompts]
    batch = {key: np.concatenate([row[key] for row in rows]) for key in ("point_coords", "point_labels", "mask_input")}
    batch["has_mask_input"] = np.array([0.0 if masks is None else 1.0], np.float32)
    if masks is not None:
        batch["mask_input"] = masks.astype(np.float32)
    return batch


def find_near_ties(src: Dict[str, Any], seed: int, wanted: int, candidates: int, window) -> List[int]:
    """The first `wanted` candidates (in order) whose second step's margin lies in `window`, searched in
    batches (batched results can differ from single runs in the last bits; the caller checks again)."""
    side = src["sam"].prompt_encoder.mask_input_size[0]
    chunk = max(8, (1 << 22) // (4 * side * side))
    low, high = window
    found: List[int] = []
    for start in range(0, candidates, chunk):
        indices = range(start, min(candidates, start + chunk))
        chains = [near_tie_prompts(seed, c, src["size"]) for c in indices]
        first = run_official(src, stacked(src, [chain[0] for chain in chains], None))
        best = 1 + np.argmax(first["iou_predictions"][:, 1:], axis=1)
        masks = first["low_res_masks"][np.arange(len(chains)), best][:, None]
        second = run_official(src, stacked(src, [chain[1] for chain in chains], masks))
        scores = np.sort(second["iou_predictions"][:, 1:].astype(np.float64), axis=1)
        margins = scores[:, -1] - scores[:, -2]
        for c, margin in zip(indices, margins):
            if low - 1e-6 <= margin < high + 1e-6:
                found.append(c)
        if len(found) >= wanted:
            break
    return found


# --- writing ---------------------------------------------------------------------------------------


def save(root: Path, rel: str, array: np.ndarray) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.asarray(array), allow_pickle=False)


def write_case(root: Path, name: str, prompt: Dict[str, Any], inputs: Dict[str, np.ndarray],
               outputs: Dict[str, np.ndarray]) -> None:
    folder = f"references/{name}"
    for key in ("point_coords", "point_labels", "has_mask_input"):
        save(root, f"{folder}/onnx_{key}.npy", inputs[key])
    if inputs["has_mask_input"][0] != 0:
        save(root, f"{folder}/onnx_mask_input.npy", inputs["mask_input"])
    for key, value in outputs.items():
        save(root, f"{folder}/onnx_{key}.npy", value)
    if "points" in prompt and len(prompt["points"]):
        save(root, f"{folder}/point_coords.npy", prompt["points"][None])
        save(root, f"{folder}/point_labels.npy", prompt["labels"][None])
    if "box" in prompt:
        save(root, f"{folder}/box.npy", prompt["box"][None])


def prompt_entry(prompt: Dict[str, Any]) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"kind": prompt["kind"], "num_points": int(len(prompt.get("points", [])))}
    if "box" in prompt:
        entry["box"] = [float(v) for v in prompt["box"]]
    if prompt.get("mask_from_previous"):
        entry["mask_input"] = "the previous step's best low-res mask (masks 1..3)"
    return entry


def reproduce_source(src: Dict[str, Any], source: Path) -> Dict[str, float]:
    """The source set's own official cases, rerun with the loaded weights: ~0 when the weights and
    the image embeddings are the ones its references were made with."""
    worst_masks = worst_iou = 0.0
    for case in src["manifest"].get("cases", []):
        folder = source / "references" / case["name"]
        if not (folder / "onnx_point_coords.npy").exists():
            continue
        inputs = {k: np.load(folder / f"onnx_{k}.npy") for k in ("point_coords", "point_labels", "mask_input", "has_mask_input")}
        out = run_official(src, inputs)
        worst_masks = max(worst_masks, float(np.abs(out["low_res_masks"] - np.load(folder / "onnx_low_res_masks.npy")).max()))
        worst_iou = max(worst_iou, float(np.abs(out["iou_predictions"] - np.load(folder / "onnx_iou_predictions.npy")).max()))
    return {"source_cases_low_res_masks_max_abs": worst_masks, "source_cases_iou_predictions_max_abs": worst_iou}


def prepare_out(root: Path) -> None:
    """Wipes an earlier fuzz set at `root`; refuses any other non-empty folder."""
    if root.exists() and any(root.iterdir()):
        manifest = root / "manifest.json"
        if not manifest.exists() or json.loads(manifest.read_text()).get("exporter_script") != EXPORTER_MARK:
            raise SystemExit(f"{root} is not empty and not an earlier fuzz set; refusing")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)


def copy_image(source: Path, out: Path) -> List[str]:
    """The source set's photo and resized image (for samverify's picture report and preprocessing check)."""
    copied = []
    for rel in ("image.png", "references/resized_image.npy"):
        if (source / rel).exists():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / rel, out / rel)
            copied.append(rel)
    return copied


def write_readme(out: Path, manifest: Dict[str, Any]) -> None:
    fuzz = manifest["fuzz"]
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(fuzz["cases_by_kind"].items()))
    near = fuzz["near_ties"]
    text = f"""# Fuzzed prompts: {manifest['model']}

Generated by `converters/export_fuzz.py` (do not edit; rerun it):

    python {fuzz['command']}

{len(manifest['cases'])} prompts on the image of `{fuzz['source']}` ({kinds} cases), seed {fuzz['seed']}, with
PyTorch's outputs: the source set's weights (`{manifest['weights']}`) in the upstream classes, its
`references/image_embeddings.npy` as the decoder's input, and the official `SamOnnxModel` (all four
low-res masks and IoU predictions) for every prompt. Chain steps (`f<group>s<step>`) feed the previous
step's best low-res mask back as `onnx_mask_input`.
"""
    if near["kept"]:
        text += f"""
Near ties (`t<candidate>s<step>`): {len(near['kept'])} two-step chains whose second step's best mask wins by a margin in
{near['window'][0]}...{near['window'][1]} (searched among {near['candidates']} candidates): above float32 noise of the IoU
head, below samverify's default atol.
"""
    text += f"""
samverify reads it as any reference set (no image encoder case): `samverify MODEL --references {out.as_posix()}`.
`manifest.json` lists every case's prompt, group and step (regenerate one with `--only NAME`), the reference's
best mask and its margin, and `checks`: the source set's own cases rerun with the loaded weights (max abs
difference from its references).
"""
    (out / "README.md").write_text(text)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_chain(out: Path, src: Dict[str, Any], names: List[str], prompts: List[Dict[str, Any]],
                origin: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Runs and writes the steps of one group (a single prompt is a chain of one); returns their entries.
    Each step after the first takes the previous step's best low-res mask as mask_input."""
    entries, mask = [], None
    for step, (name, prompt) in enumerate(zip(names, prompts)):
        inputs = official_inputs(src, prompt, mask if prompt.get("mask_from_previous") else None)
        outputs = run_official(src, inputs)
        write_case(out, name, prompt, inputs, outputs)
        best = best_of_multimask(outputs["iou_predictions"])
        mask = outputs["low_res_masks"][:, best:best + 1]
        entries.append({"name": name, "prompt": prompt_entry(prompt), "fuzz": {**origin, "step": step + 1},
                        "best_mask": best, "best_margin": best_margin(outputs["iou_predictions"])})
    return entries


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    source = args.source.resolve()
    src = load_source(source, args.config)
    prepare_out(args.out)
    max_points = int(src["cfg"].get("maxPoints", 100))
    (args.out / "references").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "references/image_embeddings.npy", args.out / "references/image_embeddings.npy")
    image_files = copy_image(source, args.out)

    def wanted(names: List[str]) -> bool:
        return not args.only or any(name in args.only for name in names)

    cases: List[Dict[str, Any]] = []
    kinds: Dict[str, int] = {}
    written = group = 0
    while written < args.count:
        prompts = group_prompts(args.seed, group, src["size"], max_points)[: args.count - written]
        names = case_names(group, len(prompts))
        if wanted(names):
            cases += write_chain(args.out, src, names, prompts, {"seed": args.seed, "group": group})
        kinds[prompts[0]["kind"]] = kinds.get(prompts[0]["kind"], 0) + len(prompts)
        written += len(prompts)
        group += 1

    near_ties: List[int] = []
    if args.near_ties > 0:
        named = [int(name[1:6]) for name in args.only if name.startswith("t")]
        searched = named if args.only else find_near_ties(src, args.seed, args.near_ties, args.near_tie_candidates,
                                                          args.near_tie_window)
        for candidate in searched:
            names = [f"t{candidate:05d}s1", f"t{candidate:05d}s2"]
            entries = write_chain(args.out, src, names, near_tie_prompts(args.seed, candidate, src["size"]),
                                  {"seed": args.seed, "near_tie_candidate": candidate})
            low, high = args.near_tie_window
            if not args.only and not low <= entries[-1]["best_margin"] < high:
                for name in names:
                    shutil.rmtree(args.out / "references" / name)
                continue
            cases += entries
            near_ties.append(candidate)
            kinds["near_tie"] = kinds.get("near_tie", 0) + 2
            if len(near_ties) == args.near_ties:
                break

    manifest = {
        "exporter_script": EXPORTER_MARK,
        "model": src["manifest"].get("model"),
        "weights": src["weights"].name,
        "weights_sha256": sha256_of(src["weights"]),
        "image_size": list(src["size"]),
        "mask_threshold": 0.0,
        "image_files": image_files,
        "fuzz": {
            "seed": args.seed, "count": args.count, "groups": group, "cases_by_kind": kinds,
            "only": args.only or None, "max_points": max_points,
            "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
            "source": args.source.as_posix(), "rng": "numpy.random.default_rng([seed, group])",
            "how": "groups of points / box / box_points / chain prompts in image pixels; chain steps feed the "
                   "previous step's best low-res mask back as mask_input; official SamOnnxModel outputs",
            "near_ties": {"wanted": args.near_ties, "candidates": args.near_tie_candidates,
                          "window": list(args.near_tie_window), "kept": near_ties,
                          "rng": "numpy.random.default_rng([seed, 1 << 20, candidate])"},
        },
        "task_thresholds": {"min_mask_iou": 0.99, "require_best_mask": True, "masks": "multimask"},
        "checks": reproduce_source(src, source),
        "torch": torch.__version__,
        "cases": cases,
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    write_readme(args.out, manifest)
    margins = sorted(c["best_margin"] for c in cases)
    print(json.dumps({"out": str(args.out), "cases": len(cases), "kinds": kinds, "near_ties": near_ties,
                      "checks": manifest["checks"], "smallest_best_margins": margins[:5]}, indent=1))


if __name__ == "__main__":
    main()

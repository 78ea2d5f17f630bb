#!/usr/bin/env python3
"""Export a "segment everything" reference set: upstream's automatic mask generator on photos.

Usage (the committed sets are what ``make references`` runs)::

    # the committed tiny MobileSAM set, from the committed tiny weights (not copied into the set):
    venv/bin/python converters/export_amg.py --model vit_t --config tiny \\
        --weights reference_outputs/tiny/mobile_sam.h5 --no-weights-copy --image reference_outputs/demo/photo.png \\
        --points-per-side 8 --pred-iou-thresh 0.5 --stability-score-thresh 0.6 --out reference_outputs/tiny_amg

    # full size, seeded (the same weights as export.py / export_reference.py / export_sam2.py --seed 0),
    # on scikit-image's bundled photos, with the thresholds relaxed for random weights:
    venv/bin/python converters/export_amg.py --model vit_t --config full --seed 0 \\
        --sample-photo astronaut --sample-photo coffee --pred-iou-thresh 0.5 --stability-score-thresh 0.6 \\
        --out /work/amg-sets/vit_t
    venv/bin/python converters/export_amg.py --model sam2.1_tiny --config full --seed 0 ... --crop-n-layers 1

The generator is upstream's, unmodified: ``SamAutomaticMaskGenerator`` from the package whose classes
build the model (``mobile_sam``'s copy for MobileSAM ``vit_t``, as MobileSAM's users import it;
``segment_anything``'s for ``vit_b/l/h``; ``--generator-package`` picks the other) or sam2's
``SAM2AutomaticMaskGenerator``. Every constructor parameter is an option of the same name in kebab
case (``--points-per-side``, ``--pred-iou-thresh`` ...; SAM 2 adds ``--mask-threshold``, ``--use-m2m``,
``--multimask-output``); an option left out takes upstream's default, read from the installed
constructor's signature. ``output_mode`` is always ``coco_rle``.

Upstream's default thresholds (pred_iou_thresh 0.88 / 0.8, stability_score_thresh 0.95) keep almost
nothing of a seeded random model, so every set made from seeded weights states relaxed ones; the
manifest records every parameter passed to the generator. ``--min-masks N`` fails the run when a
photo yields fewer than N masks.

Writes, into ``--out``:

    manifest.json          kind "sam_automatic_masks": model, family, weights and config, seed, the
                           generator and every parameter it got, versions, threads, and per photo its
                           file, size, SHA-256, mask count and PyTorch's wall time for generate()
    config.json            the Swift SAMConfig of the model (what samconvert --config takes)
    <weights>              mobile_sam.h5 / sam.h5 (flat state dict) or the SAM 2 checkpoint (.pt), as the
                           other exporters write them (left out with --no-weights-copy: the manifest
                           then names the source file, relative to the set, and its SHA-256)
    images/<name>.png      each photo as the generator got it (RGB, lossless)
    masks/<name>.json      the generator's annotations, as segment_anything's scripts/amg.py
                           --convert-to-rle writes them (json.dump of the list): segmentation
                           {size, counts} (COCO RLE), area, bbox (XYWH), predicted_iou, point_coords,
                           stability_score, crop_box (XYWH)
    README.md

``converters/compare_amg.py`` matches two such mask files one to one by mask IoU.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import platform
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_, seeded_init_  # noqa: E402
from export_reference import FAMILIES, OutDir, file_entries, sha256_of, write_state_dict_h5  # noqa: E402

EXPORTER_MARK = "converters/export_amg.py"
KIND = "sam_automatic_masks"

# --model -> family and the configuration each --config means (sam_configs / sam2_configs names).
# "tiny" is the small test-sized architecture of the committed sets: reference_outputs/tiny (vit_t),
# reference_outputs/vit_tiny (SAM's ViT at small widths), reference_outputs/sam2_tiny (SAM 2.1).
MODELS: Dict[str, Dict[str, Any]] = {
    "vit_t": {"family": "sam", "configs": {"tiny": "tiny", "full": "full"}},
    "vit_b": {"family": "sam", "configs": {"tiny": "vit_tiny", "full": "vit_b"}},
    "vit_l": {"family": "sam", "configs": {"full": "vit_l"}},
    "vit_h": {"family": "sam", "configs": {"full": "vit_h"}},
    "sam2.1_tiny": {"family": "sam2", "configs": {"tiny": "tiny", "full": "sam2.1_hiera_tiny"}},
    "sam2.1_small": {"family": "sam2", "configs": {"full": "sam2.1_hiera_small"}},
    "sam2.1_base_plus": {"family": "sam2", "configs": {"full": "sam2.1_hiera_base_plus"}},
    "sam2.1_large": {"family": "sam2", "configs": {"full": "sam2.1_hiera_large"}},
    "sam2_tiny": {"family": "sam2", "configs": {"full": "sam2_hiera_tiny"}},
    "sam2_small": {"family": "sam2", "configs": {"full": "sam2_hiera_small"}},
    "sam2_base_plus": {"family": "sam2", "configs": {"full": "sam2_hiera_base_plus"}},
    "sam2_large": {"family": "sam2", "configs": {"full": "sam2_hiera_large"}},
}

# Every constructor parameter of the generators but the model: (type, help). Which ones a family
# has, and their defaults, come from the installed constructor (generator_defaults).
BOOL = "bool"
PARAMETERS: Dict[str, Tuple[Any, str]] = {
    "points_per_side": ("int_or_none", "grid points along one side (points_per_side**2 prompts); 'none' with --point-grids"),
    "points_per_batch": (int, "prompts the model runs at once"),
    "pred_iou_thresh": (float, "keep masks whose predicted IoU is above this"),
    "stability_score_thresh": (float, "keep masks whose stability score is at least this"),
    "stability_score_offset": (float, "logit offset of the stability score"),
    "mask_threshold": (float, "SAM 2: logit threshold that binarises the masks"),
    "box_nms_thresh": (float, "box IoU of the NMS within a crop"),
    "crop_n_layers": (int, "crop layers (layer i has (2**i)**2 crops)"),
    "crop_nms_thresh": (float, "box IoU of the NMS between crops"),
    "crop_overlap_ratio": (float, "crop overlap, as a fraction of the image side (first layer)"),
    "crop_n_points_downscale_factor": (int, "points per side in layer n divided by this**n"),
    "point_grids": ("grids", "JSON file: one list of [x, y] points in [0, 1] per crop layer (instead of --points-per-side)"),
    "min_mask_region_area": (int, "remove islands and fill holes below this area (SAM: cv2; SAM 2: the CUDA extension)"),
    "output_mode": (str, "mask encoding; the set's format needs coco_rle"),
    "use_m2m": (BOOL, "SAM 2: refine each mask once with its own low-res mask as mask input"),
    "multimask_output": (BOOL, "SAM 2: three masks per point (else one, by the stability fallback)"),
}
SAMPLE_PHOTOS = ("astronaut", "coffee", "chelsea")  # scikit-image's bundled real photos (skimage.data)


# --- command line ------------------------------------------------------------------


class PhotoAction(argparse.Action):
    """--image and --sample-photo append to one list, in command-line order."""

    def __call__(self, parser, namespace, value, option_string=None):
        photos = list(getattr(namespace, "photos", None) or [])
        photos.append(("image" if option_string == "--image" else "sample", value))
        setattr(namespace, "photos", photos)


def int_or_none(text: str) -> Optional[int]:
    return None if text.lower() == "none" else int(text)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=list(MODELS), required=True)
    parser.add_argument("--config", choices=["tiny", "full"], default="full",
                        help="tiny: the committed test-sized architecture (vit_t, vit_b, sam2.1_tiny); full: the real one")
    parser.add_argument("--seed", type=int, default=0, help="seeded random weights (ignored with --weights)")
    parser.add_argument("--weights", type=Path, default=None,
                        help="existing weights instead of seeding: flat .h5 or .pt/.pth state dict (SAM, MobileSAM), "
                             "a {'model': ...} .pt (SAM 2)")
    parser.add_argument("--no-weights-copy", action="store_true",
                        help="with --weights: do not write the weights into the set; the manifest names the file")
    parser.add_argument("--image", type=Path, action=PhotoAction, dest="photos", help="a photo (repeatable)")
    parser.add_argument("--sample-photo", choices=SAMPLE_PHOTOS, action=PhotoAction, dest="photos",
                        help="one of scikit-image's bundled photos (repeatable)")
    parser.add_argument("--generator-package", choices=["auto", "mobile_sam", "segment_anything"], default="auto",
                        help="SAM family: whose SamAutomaticMaskGenerator (auto: the package of the model's classes)")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    parser.add_argument("--min-masks", type=int, default=0, help="fail when a photo yields fewer masks")
    parser.add_argument("--out", type=Path, required=True)
    group = parser.add_argument_group("generator parameters (default: upstream's for the model's family)")
    for name, (kind, help_text) in PARAMETERS.items():
        flag = "--" + name.replace("_", "-")
        if kind == BOOL:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif kind == "int_or_none":
            group.add_argument(flag, type=int_or_none, default=None, metavar="N|none", help=help_text)
        elif kind == "grids":
            group.add_argument(flag, type=Path, default=None, metavar="FILE", help=help_text)
        elif name == "output_mode":
            group.add_argument(flag, choices=["coco_rle"], default="coco_rle", help=help_text)
        else:
            group.add_argument(flag, type=kind, default=None, help=help_text)
    args = parser.parse_args(argv)
    if not args.photos:
        parser.error("no photo: give --image PATH or --sample-photo NAME")
    if args.config not in MODELS[args.model]["configs"]:
        parser.error(f"--model {args.model} has no {args.config} config here "
                     f"(have: {', '.join(MODELS[args.model]['configs'])})")
    if args.weights is not None and not args.weights.is_file():
        parser.error(f"--weights {args.weights}: no such file")
    if args.no_weights_copy and args.weights is None:
        parser.error("--no-weights-copy needs --weights (seeded weights exist only in the set)")
    return args


# --- the generator -------------------------------------------------------------------


def generator_class(family: str, package: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family == "sam2":
            from sam2.automatic_mask_generator import SAM2AutomaticMaskGenerator
            return SAM2AutomaticMaskGenerator
        if package == "mobile_sam":
            from mobile_sam import SamAutomaticMaskGenerator
        else:
            from segment_anything import SamAutomaticMaskGenerator
        return SamAutomaticMaskGenerator


def generator_defaults(cls) -> Dict[str, Any]:
    """The constructor's parameters and defaults (the model and **kwargs left out)."""
    params = inspect.signature(cls.__init__).parameters
    defaults = {name: p.default for name, p in params.items()
                if name not in ("self", "model") and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    unknown = sorted(set(defaults) - set(PARAMETERS))
    if unknown:  # a newer upstream: every parameter must be an option
        raise SystemExit(f"export_amg.py: {cls.__qualname__} has parameters this script has no option for: {unknown}")
    return defaults


def generator_parameters(args: argparse.Namespace, cls) -> Dict[str, Any]:
    """What the generator gets: the options given, upstream's defaults for the rest."""
    defaults = generator_defaults(cls)
    params = dict(defaults)
    for name in PARAMETERS:
        value = getattr(args, name)
        if name == "output_mode":
            params[name] = value
            continue
        if name == "point_grids" and value is not None:
            grids = json.loads(value.read_text())
            params["point_grids"] = [np.asarray(g, dtype=np.float64).reshape(-1, 2) for g in grids]
            if args.points_per_side is None:
                params["points_per_side"] = None
            continue
        if value is None:
            continue
        if name not in defaults:
            raise SystemExit(f"export_amg.py: --{name.replace('_', '-')} is not a parameter of {cls.__qualname__}")
        params[name] = value
    return params


def manifest_parameters(params: Dict[str, Any]) -> Dict[str, Any]:
    grids = params.get("point_grids")
    return {**params, "point_grids": None if grids is None else [g.tolist() for g in grids]}


# --- the model ----------------------------------------------------------------------


def build_model(args: argparse.Namespace, family: str, config_name: str):
    """(model, config.json dict, weights file name) with seeded weights or --weights."""
    if family == "sam2":
        import build_sam2
        import sam2_configs

        model = build_sam2.weighted_model(config_name, args.seed, args.weights)
        return model, sam2_configs.swift_config(model), sam2_configs.CONFIGS[config_name]["checkpoint_name"]
    cfg = sam_configs.resolve(config_name)
    torch.manual_seed(args.seed)  # as export_reference.build_weighted_model: the same seed, the same weights
    sam = build_sam(cfg)
    if args.weights:
        load_checkpoint_(sam, args.weights)
    else:
        seeded_init_(sam)
    return sam, cfg, FAMILIES[sam_configs.family(cfg)]["weights"]


def write_weights(out: OutDir, args: argparse.Namespace, family: str, model, name: str) -> Dict[str, Any]:
    """The weights as the other exporters write them, or (--no-weights-copy) where they are."""
    source = f"{args.model} ({args.config}) state_dict, " + (
        f"weights {args.weights.name}" if args.weights else f"seeded random weights (seed {args.seed})")
    if args.no_weights_copy:
        return {"weights_in_set": False,
                "weights_source": Path(os.path.relpath(args.weights.resolve(), out.root.resolve())).as_posix(),
                "weights_sha256": sha256_of(args.weights)}
    if family == "sam2":
        import build_sam2

        build_sam2.save_checkpoint(model, out.path(name))
    else:
        write_state_dict_h5(model, out.path(name), None, source)
    entry: Dict[str, Any] = {"weights_in_set": True, "weights_sha256": sha256_of(out.path(name))}
    if args.weights:
        entry.update(weights_source=str(args.weights), weights_source_sha256=sha256_of(args.weights))
    return entry


def upstream_patches(family: str, model, generator) -> List[Dict[str, str]]:
    """Where the generator's predictor had to be told about a non-1024 input (SAM 2 tiny)."""
    if family != "sam2" or model.image_size == 1024:
        return []
    sizes = [(model.image_size // s,) * 2 for s in (4, 8, 16)]
    generator.predictor._bb_feat_sizes = sizes
    return [{"what": f"generator.predictor._bb_feat_sizes = {sizes}",
             "why": "SAM2ImagePredictor.__init__ hard-codes the 1024 input's feature sizes [(256, 256), (128, 128), (64, 64)]"}]


# --- photos -------------------------------------------------------------------------


def load_photos(args: argparse.Namespace) -> List[Dict[str, Any]]:
    """Each photo as uint8 RGB [H, W, 3]: a file as scripts/amg.py reads it (cv2.imread, BGR to RGB),
    a sample from skimage.data."""
    import cv2

    photos, names = [], set()
    for kind, value in args.photos:
        if kind == "image":
            bgr = cv2.imread(str(value))
            if bgr is None:
                raise SystemExit(f"export_amg.py: cannot read {value}")
            pixels, name, source = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), value.stem, str(value)
            decoder = "cv2.imread + cvtColor(BGR2RGB), as segment_anything scripts/amg.py"
        else:
            import skimage.data

            pixels, name, source, decoder = getattr(skimage.data, value)(), value, f"skimage.data.{value}()", "skimage.data"
        if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] != 3:
            raise SystemExit(f"export_amg.py: {source} is not uint8 RGB: {pixels.dtype} {pixels.shape}")
        if name in names:
            raise SystemExit(f"export_amg.py: two photos named {name}")
        names.add(name)
        photos.append({"name": name, "pixels": np.ascontiguousarray(pixels), "source": source, "decoder": decoder})
    return photos


def save_png(path: Path, pixels: np.ndarray) -> None:
    import cv2

    if not cv2.imwrite(str(path), cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR)):
        raise SystemExit(f"export_amg.py: cannot write {path}")
    if not np.array_equal(cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB), pixels):
        raise SystemExit(f"export_amg.py: {path} does not read back as the photo")


def summary(values: List[float]) -> Optional[Dict[str, float]]:
    if not values:
        return None
    v = np.asarray(values, dtype=np.float64)
    return {"min": float(v.min()), "median": float(np.median(v)), "max": float(v.max())}


# --- manifest -------------------------------------------------------------------------


def versions() -> Dict[str, Optional[str]]:
    def version(dist: str) -> Optional[str]:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    found = {dist: version(dist) for dist in (
        "torch", "torchvision", "numpy", "segment-anything", "mobilesam-mirror", "sam2", "timm", "hydra-core",
        "pycocotools", "opencv-python-headless", "scikit-image", "h5py")}
    return {"python": platform.python_version(), **found}


class SetDir(OutDir):
    """OutDir that may wipe and rewrite an earlier set of this script, nothing else."""

    @staticmethod
    def _is_our_export(root: Path) -> bool:
        manifest = root / "manifest.json"
        return manifest.exists() and json.loads(manifest.read_text()).get("exporter_script") == EXPORTER_MARK


def write_readme(out: OutDir, manifest: Dict[str, Any]) -> None:
    params = manifest["generator_parameters"]
    changed = {k: v for k, v in params.items() if v != manifest["upstream_defaults"].get(k, v)}
    weights = (f"`{manifest['weights']}`" if manifest["weights_in_set"]
               else f"`{manifest['weights_source']}` (not copied; SHA-256 in manifest.json)")
    seeded = "seeded random weights (seed {})".format(manifest["seed"]) if manifest["seed"] is not None else "given weights"
    photos = "\n".join(f"| `{p['file']}` | {p['width']}x{p['height']} | {p['mask_count']} | {p['generate_seconds']:.2f} |"
                       for p in manifest["images"])
    text = f"""# Segment-everything reference set: `{manifest['model']}` ({manifest['config_name']})

Generated by `{EXPORTER_MARK}` (do not edit; rerun it):

    python {manifest['command']}

`{manifest['generator']}` (upstream, unmodified) with {seeded}: {weights}, `config.json`
(`samconvert WEIGHTS --config config.json`). `masks/<name>.json` is the generator's output as
segment_anything's `scripts/amg.py --convert-to-rle` writes it; `manifest.json` has every generator
parameter, the versions and each photo's SHA-256.

Parameters other than upstream's defaults: {', '.join(f'`{k}={v}`' for k, v in changed.items()) or 'none'}
(random weights score far below upstream's thresholds).

| photo | size | masks | PyTorch generate() s ({manifest['torch_threads']} threads) |
|---|---|---|---|
{photos}
"""
    out.path("README.md").write_text(text)


# --- main -----------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)
    family = MODELS[args.model]["family"]
    config_name = MODELS[args.model]["configs"][args.config]
    model, cfg, weights_name = build_model(args, family, config_name)
    package = "sam2" if family == "sam2" else args.generator_package
    if package == "auto":
        package = FAMILIES[sam_configs.family(cfg)]["package"]
    cls = generator_class(family, package)
    params = generator_parameters(args, cls)
    photos = load_photos(args)

    out = SetDir(args.out)
    # a stub until the end, so that a rerun may wipe a run that failed half-way
    out.save_json("manifest.json", {"kind": KIND, "exporter_script": EXPORTER_MARK, "incomplete": True})
    out.save_json("config.json", cfg)
    weights = write_weights(out, args, family, model, weights_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # timm / torchvision deprecations on import
        generator = cls(model, **params)
    patches = upstream_patches(family, model, generator)

    images, problems = [], []
    for photo in photos:
        name, pixels = photo["name"], photo["pixels"]
        save_png(out.path(f"images/{name}.png"), pixels)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                annotations = generator.generate(pixels)
            except IndexError as exc:
                if params["crop_n_layers"] == 0:
                    raise
                # upstream: with crops and no mask left, box_area(crop_boxes) of an empty [0] tensor fails
                raise SystemExit(f"export_amg.py: {name}: the generator failed ({exc}); with crop layers upstream "
                                 "fails when no mask is left at all: relax the thresholds") from exc
        seconds = time.perf_counter() - start
        with out.path(f"masks/{name}.json").open("w") as f:
            json.dump(annotations, f)  # exactly scripts/amg.py's --convert-to-rle output
        entry = {
            "name": name, "file": f"images/{name}.png", "masks": f"masks/{name}.json", "source": photo["source"],
            "decoder": photo["decoder"], "width": int(pixels.shape[1]), "height": int(pixels.shape[0]),
            "sha256": sha256_of(out.path(f"images/{name}.png")),
            "pixels_sha256": hashlib.sha256(pixels.tobytes()).hexdigest(),
            "mask_count": len(annotations), "generate_seconds": round(seconds, 3),
            "predicted_iou": summary([a["predicted_iou"] for a in annotations]),
            "stability_score": summary([a["stability_score"] for a in annotations]),
            "area": summary([a["area"] for a in annotations]),
            "upstream_warnings": sorted({f"{w.category.__name__}: {str(w.message).splitlines()[0]}" for w in caught}),
        }
        images.append(entry)
        print(f"{name}: {len(annotations)} masks, {seconds:.2f} s", file=sys.stderr)
        if len(annotations) < args.min_masks:
            problems.append(f"{name}: {len(annotations)} masks < --min-masks {args.min_masks}")

    manifest = {
        "kind": KIND,
        "exporter_script": EXPORTER_MARK,
        "model": args.model,
        "model_family": family,
        "image_encoder_family": cfg["imageEncoder"].get("family", "tiny_vit"),
        "config_name": config_name,
        "config_file": "config.json",
        "config": cfg,
        # the file samconvert reads: in the set, or (--no-weights-copy) relative to the set
        "weights": weights.get("weights_source", weights_name) if not weights["weights_in_set"] else weights_name,
        **weights,
        "seed": None if args.weights else args.seed,
        "generator": f"{cls.__module__}.{cls.__qualname__}",
        "generator_parameters": manifest_parameters(params),
        "upstream_defaults": manifest_parameters(generator_defaults(cls)),
        "output_mode": params["output_mode"],
        "mask_format": "masks/<name>.json: json.dump(generator.generate(photo)) as segment_anything scripts/amg.py "
                       "--convert-to-rle; segmentation {size: [H, W], counts: COCO RLE string}, area, bbox XYWH, "
                       "predicted_iou, point_coords [[x, y]], stability_score, crop_box XYWH",
        "upstream_patches": patches,
        "notes": family_notes(family),
        "versions": versions(),
        "torch_threads": torch.get_num_threads(),
        "load_average_at_start": list(os.getloadavg()),
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]) if argv is None
                   else " ".join([EXPORTER_MARK, *argv]),
        "images": images,
    }
    write_readme(out, manifest)
    manifest["files"] = file_entries(out.root)
    out.save_json("manifest.json", manifest)
    print(json.dumps({"out": str(out.root), "masks": {i["name"]: i["mask_count"] for i in images},
                      "seconds": {i["name"]: i["generate_seconds"] for i in images}}, indent=1))
    if problems:
        raise SystemExit("export_amg.py: " + "; ".join(problems))
    return manifest


def family_notes(family: str) -> List[str]:
    if family != "sam2":
        return ["masks are thresholded at the model's mask_threshold (0.0); stability_score_offset shifts it both ways",
                "min_mask_region_area > 0 runs postprocess_small_regions (cv2) after generation, then NMS again"]
    return [
        "object_score_logits: computed by the mask decoder and discarded by SAM2ImagePredictor._predict, so they "
        "change no mask here; no shift of the object-score head is applied",
        "mask_threshold is the generator's (stability score and binarisation); the predictor's own stays 0.0",
        "min_mask_region_area goes to SAM2ImagePredictor as max_hole_area/max_sprinkle_area, which need the "
        "sam2._C CUDA extension: without it upstream warns and skips the step (see upstream_warnings); "
        "generate() never calls postprocess_small_regions",
        "multimask_output false: one mask per point by the stability fallback (dynamic_multimask_via_stability)",
    ]


if __name__ == "__main__":
    main()

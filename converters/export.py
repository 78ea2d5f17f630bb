#!/usr/bin/env python3
"""Front door: every export of a MobileSAM model plus its PyTorch reference set, in one folder.

Usage (what ``make references`` runs)::

    venv/bin/python converters/export.py --model vit_t --seed 0 --config tiny --out reference_outputs/tiny

    # the real vit_t size, seeded or from the published checkpoint:
    venv/bin/python converters/export.py --model vit_t --seed 0 --config full --out /tmp/full
    venv/bin/python converters/export.py --model vit_t --checkpoint mobile_sam.pt --config full --out /tmp/full

Runs, into ``--out`` (the layout of the full-size set ``fixtures/mobilesam-seed0``):

1. ``export_reference.py``: config.json, mobile_sam.h5 (flat) and mobile_sam_nested.h5,
   image_points_embeddings.bin (dense PE), TorchScript ImageEncoder.onnx, the official
   mobile_sam_decoder.onnx, references/ (inputs, outputs, per-module dumps keyed by
   PyTorch module path), README.md and manifest.json;
2. ``export_split.py``: the seed article's split pair PromptEncoder.onnx / MaskDecoder.onnx
   (TorchScript, opset 17, N dynamic), each checked with onnxruntime against PyTorch;
3. ``export_dynamo.py``: dynamo-based ImageEncoder.onnx / mobile_sam_decoder.onnx with
   external data, into ``dynamo/`` (own manifest.json);

then completes manifest.json: every file (sha256/bytes, shape/dtype of .npy), the cases,
which tensors feed which outputs (``dataflow``), each model file's inputs/outputs
(``exports``), default ``tolerances`` for samverify, all onnxruntime-vs-PyTorch
figures (``onnxruntime_vs_pytorch``) and provenance (versions, seed, checkpoint sha256).
Last (``--styles``, on for the tiny config), ``export_styles.py`` writes ``exports/``: the same
model in every export style users produce (TorchScript opsets 14/16/17, dynamo, onnxslim, fp16,
int8), each checked with onnxruntime against the finished set's references, with its own
manifest.json (the set's manifest.json does not list it).
Exits non-zero when an ONNX file failed to export or landed further from PyTorch than
the default tolerance.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_dynamo  # noqa: E402
import export_reference  # noqa: E402
import export_split  # noqa: E402
import export_styles  # noqa: E402
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_  # noqa: E402

MODELS = ("vit_t",)
EXPORTER_MARK = "converters/export.py"
# samverify's defaults (Sources/SAMVerify/Tolerance.swift), written out so the set carries them;
# read as manifest.tolerances {atol, rtol} (ReferenceSet.swift).
TOLERANCES = {"atol": 1e-4, "rtol": 1e-4}


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True,
                        help="model type; only vit_t (MobileSAM: TinyViT encoder + SAM decoder) for now")
    weights = parser.add_mutually_exclusive_group(required=True)
    weights.add_argument("--seed", type=int, help="seeded random weights (also seeds the synthetic image/prompts)")
    weights.add_argument("--checkpoint", type=Path, help="state dict (.pt/.pth) or flat .h5 instead of seeded weights")
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), default="full")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--module-dumps", choices=["auto", "on", "off"], default="auto",
                        help="per-module output dumps (auto: on for tiny only; at full size they are gigabytes)")
    parser.add_argument("--no-dynamo", action="store_true", help="skip the dynamo-based exports (dynamo/)")
    parser.add_argument("--styles", choices=["auto", "on", "off"], default="auto",
                        help="exports/: every export style, export_styles.py (auto: on for tiny only; "
                             "at full size it is hundreds of MB)")
    parser.add_argument("--no-onnx", action="store_true", help="skip every ONNX export (h5 + references only)")
    parser.add_argument("--image", type=Path, default=None, metavar="PATH",
                        help="a photo (PNG/JPEG) for the references instead of the synthetic image (export_reference.py --image)")
    args = parser.parse_args(argv)
    if args.model not in MODELS:
        parser.error(f"--model {args.model!r} is not supported: this exporter builds only "
                     f"{', '.join(MODELS)} (MobileSAM) for now")
    if args.checkpoint is not None and not args.checkpoint.is_file():
        parser.error(f"--checkpoint {args.checkpoint}: no such file")
    if args.image is not None and not args.image.is_file():
        parser.error(f"--image {args.image}: no such file")
    return args


def reference_argv(args: argparse.Namespace) -> List[str]:
    argv = ["--config", args.config, "--out", str(args.out), "--module-dumps", args.module_dumps]
    if args.checkpoint is not None:
        argv += ["--checkpoint", str(args.checkpoint)]  # image/prompt seed: export_reference's default, 0
    else:
        argv += ["--seed", str(args.seed)]
    if args.no_onnx:
        argv.append("--no-onnx")
    if args.image is not None:
        argv += ["--image", str(args.image)]
    return argv


def io_signature(path: Path) -> Dict[str, Dict[str, List[Any]]]:
    """Inputs/outputs of an ONNX file with their shapes (dimension names where dynamic)."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph

    def dims(value) -> List[Any]:
        return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]

    return {"inputs": {v.name: dims(v) for v in graph.input},
            "outputs": {v.name: dims(v) for v in graph.output}}


def exports_section(root: Path, split_cases: List[str]) -> Dict[str, Any]:
    """What each model file is and how it was made."""
    torchscript = f"torch.onnx.export(dynamo=False, opset_version={export_reference.OPSET}, do_constant_folding=True)"
    described = {
        "ImageEncoder.onnx": {"exporter": torchscript, "module": "sam.image_encoder"},
        "mobile_sam_decoder.onnx": {"exporter": torchscript,
                                    "module": "mobile_sam.utils.onnx.SamOnnxModel(sam, return_single_mask=False)"},
        "PromptEncoder.onnx": {
            "exporter": torchscript, "module": "export_split.SplitPromptEncoder (self.pe = sam.prompt_encoder)",
            "what": "_embed_points(pad=False) as torch.where, labels -1/0/1 and box corners 2/3; "
                    "dense = no_mask_embed broadcast", "verified_on_cases": split_cases},
        "MaskDecoder.onnx": {
            "exporter": torchscript, "module": "export_split.SplitMaskDecoder (self.md = sam.mask_decoder)",
            "what": "mask_decoder.predict_masks: all 4 masks (logits) and scores", "verified_on_cases": split_cases},
        "dynamo/ImageEncoder.onnx": {
            "exporter": "torch.onnx.export(dynamo=True, external_data=True)",
            "module": "export_dynamo.Wrapped (self.model = sam.image_encoder)",
            "external_data": "dynamo/ImageEncoder.onnx.data", "manifest": "dynamo/manifest.json"},
        "dynamo/mobile_sam_decoder.onnx": {
            "exporter": "torch.onnx.export(dynamo=True, external_data=True)",
            "module": "mobile_sam.utils.onnx.SamOnnxModel(sam, return_single_mask=False)",
            "external_data": "dynamo/mobile_sam_decoder.onnx.data", "manifest": "dynamo/manifest.json"},
    }
    section: Dict[str, Any] = {}
    for rel, entry in described.items():
        if (root / rel).exists():
            section[rel] = {**entry, **io_signature(root / rel)}
    section["mobile_sam.h5"] = {"format": "HDF5, sam.state_dict(), one dataset per flat dotted key (BatchNorm unfused)"}
    section["mobile_sam_nested.h5"] = {"format": "HDF5, the same state dict as nested groups"}
    section["image_points_embeddings.bin"] = {"format": "raw little-endian f32 [1,C,g,g], no header: "
                                                        "prompt_encoder.get_dense_pe()"}
    return section


def split_dataflow() -> Dict[str, Any]:
    return {
        "stage": "split_onnx (PromptEncoder.onnx then MaskDecoder.onnx; point-only cases)",
        "inputs": ["references/<case>/split_points.npy (points)", "references/<case>/split_labels.npy (labels)",
                   "references/image_embeddings.npy (imageEmbeddings)",
                   "image_points_embeddings.bin (imagePositionalEncoding)"],
        "outputs": ["references/<case>/split_sparse_embeddings.npy (sparsePromptEmbeddings)",
                    "references/<case>/split_masks.npy (masks)",
                    "references/<case>/split_iou_predictions.npy (iouPredictions)"],
        "how": "densePromptEmbeddings = PromptEncoder.onnx output (no_mask_embed broadcast, no file); "
               "same numbers as stage split_decoder",
    }


def readme_section(exports: Dict[str, Any]) -> str:
    lines = ["", "## Model files besides the h5 (`manifest.exports` has every input/output shape)", ""]
    for rel, entry in exports.items():
        if "exporter" in entry:
            ins = ", ".join(f"`{k}` {v}" for k, v in entry["inputs"].items())
            outs = ", ".join(f"`{k}` {v}" for k, v in entry["outputs"].items())
            lines.append(f"* `{rel}`: {entry['module']}; in {ins}; out {outs}")
    lines += [
        "* `PromptEncoder.onnx` / `MaskDecoder.onnx` are the seed article's split pair, made as the full drop's "
        "(wrappers holding `self.pe` / `self.md`, TorchScript, opset 17, N dynamic, no padding point)",
        "* `dynamo/`: the same encoder and official decoder from the dynamo-based exporter "
        "(external data; see `dynamo/manifest.json`)",
        f"* `manifest.tolerances`: {json.dumps(TOLERANCES)} (samverify's defaults); "
        "`manifest.onnxruntime_vs_pytorch`: how far onnxruntime landed from PyTorch on every ONNX file here",
        "",
    ]
    return "\n".join(lines)


def version(dist: str) -> Optional[str]:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    root = args.out
    export_reference.main(reference_argv(args), exporter=EXPORTER_MARK)
    manifest = json.loads((root / "manifest.json").read_text())
    report: Dict[str, Any] = dict(manifest.get("onnxruntime_vs_pytorch", {}))
    checks: Dict[str, Any] = dict(manifest.get("checks", {}))
    split_cases: List[str] = []

    if not args.no_onnx:
        sam = build_sam(sam_configs.resolve(args.config))
        load_checkpoint_(sam, root / "mobile_sam.h5")  # exactly the weights the references were made with
        try:
            paths = export_split.export_split_pair(sam, root)
            split = export_split.verify_split_pair(sam, root, paths["prompt_encoder"], paths["mask_decoder"])
            split_cases = split.pop("split_cases")
            checks["split_pytorch_wrapper_vs_references_max_abs"] = split.pop("split_pytorch_wrapper_vs_references_max_abs")
            report.update(split)
        except Exception as exc:  # recorded, and the run fails below
            report["split_onnx_error"] = f"{type(exc).__name__}: {exc}"
        if not args.no_dynamo:
            try:
                dynamo = export_dynamo.main([
                    "--config", args.config, "--weights", str(root / "mobile_sam.h5"),
                    "--references", str(root / "references"), "--out", str(root / "dynamo"),
                ])
                report.update({f"dynamo_{k}": v for k, v in dynamo["onnxruntime_vs_pytorch"].items()})
            except Exception as exc:
                report["dynamo_error"] = f"{type(exc).__name__}: {exc}"

    exports = exports_section(root, split_cases)
    manifest["model_type"] = args.model
    manifest["provenance"].update(model_type=args.model, onnxscript=version("onnxscript"))
    manifest["tolerances"] = dict(TOLERANCES)
    manifest["tolerances_note"] = ("samverify reads tolerances {atol, rtol} for the whole set, "
                                   "tolerances.cases.<case> {atol, rtol, outputs: {<output>: {atol, rtol}}} per case; "
                                   "an element fails only where |error| > atol and > rtol * |reference|")
    manifest["dataflow"].append(split_dataflow())
    manifest["exports"] = exports
    manifest["onnxruntime_vs_pytorch"] = report
    manifest["checks"] = checks
    manifest["files"] = export_reference.file_entries(root)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    with (root / "README.md").open("a") as readme:
        readme.write(readme_section(exports))

    problems = [f"{k}: {v}" for k, v in report.items() if k.endswith("_error")]
    if not args.no_onnx and (args.styles == "on" or (args.styles == "auto" and args.config == "tiny")):
        try:
            export_styles.main(["--config", args.config, "--weights", str(root / "mobile_sam.h5"),
                                "--references", str(root)])
        except SystemExit as exc:  # export_styles.py names the files that failed
            problems.append(str(exc))
    problems += [f"{k} = {v:.3g} > atol {TOLERANCES['atol']}" for k, v in report.items()
                 if k.endswith("_max_abs") and isinstance(v, float) and v > TOLERANCES["atol"]]
    print(json.dumps({"out": str(root), "onnxruntime_vs_pytorch": report}, indent=1))
    if problems:
        raise SystemExit("export.py: " + "; ".join(problems))
    return manifest


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Export a SAM (ViT) image encoder with samexporter, normalisation and padding in the graph.

Usage::

    # the committed fixture: the tiny ViT set's encoder
    venv/bin/python converters/export_samexporter.py --config vit_tiny \\
        --weights reference_outputs/vit_tiny/sam.h5 --references reference_outputs/vit_tiny \\
        --out Tests/SAMImportTests/Fixtures/samexporter_vit_tiny.onnx

    # full-size ViT-B from an upstream-style checkpoint (converters/write_pth.py), on demand
    venv/bin/python converters/export_samexporter.py --config vit_b \\
        --weights /tmp/vit_b_pth/sam_vit_b.pth --references /tmp/vit_b_set --out /tmp/vit_b_samexporter/sam_vit_b_encoder.onnx

Runs samexporter 0.5.0's own ``export_encoder.run_export`` with ``use_preprocess=True`` (what
``python -m samexporter.export_encoder --use-preprocess`` does; opset 18, its default): the graph
takes the resized, unpadded image as float [H, W, 3] in 0..255, subtracts ``pixel_mean``, divides
by ``pixel_std``, permutes to [1, 3, H, W] and zero-pads to the input size (samexporter's
``ImageEncoderOnnxModel.preprocess``). For the published sizes (vit_b/l/h) ``run_export`` builds
the model from ``--weights`` with ``segment_anything``'s ``sam_model_registry`` (a ``.pth``, as
for the published checkpoints); any other config is registered under its own name, built with
``build_model`` from ``--weights`` (.h5 or .pth). samexporter writes ViT-H's weights to external
data (``<name>_data.bin``), the others inline.

With ``--references`` onnxruntime runs the file on the set's ``references/resized_image.npy`` and
the largest difference from ``references/image_embeddings.npy`` is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from importlib import metadata
from pathlib import Path
from typing import Optional

import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from samexporter import export_encoder  # noqa: E402

OPSET = 18  # samexporter export_encoder's default --opset
PUBLISHED = ("vit_b", "vit_l", "vit_h")


def register(config: str, weights: Path) -> None:
    """A registry entry building `config` from `weights`, for configs segment_anything does not publish."""
    def build(checkpoint: Optional[str] = None):
        sam = build_sam(sam_configs.resolve(config))
        load_checkpoint_(sam, Path(checkpoint))
        return sam
    export_encoder.sam_model_registry[config] = build


def onnxruntime_vs_references(path: Path, references: Path) -> float:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    image = np.load(references / "references/resized_image.npy").astype(np.float32)
    (embeddings,) = session.run(None, {"input_image": image})
    expected = np.load(references / "references/image_embeddings.npy")
    return float(np.max(np.abs(embeddings.astype(np.float64) - expected)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=[n for n, c in sam_configs.CONFIGS.items() if sam_configs.family(c) == "vit"],
                        required=True)
    parser.add_argument("--weights", type=Path, required=True, help=".pth (published sizes) or .h5/.pth (others)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--references", type=Path, help="a reference set of these weights")
    args = parser.parse_args()
    if args.config in PUBLISHED and args.weights.suffix not in (".pth", ".pt"):
        parser.error("segment_anything's registry loads a .pth: write one with converters/write_pth.py")
    if args.config not in PUBLISHED:
        register(args.config, args.weights)
    torch.manual_seed(0)  # run_export traces with a torch.randn example image
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        export_encoder.run_export(model_type=args.config, checkpoint=str(args.weights), output=str(args.out),
                                  use_preprocess=True, opset=OPSET)
    report = {"out": str(args.out), "bytes": args.out.stat().st_size,
              "samexporter": metadata.version("samexporter"), "torch": torch.__version__, "opset": OPSET}
    if args.references:
        report["onnxruntime_image_embeddings_max_abs"] = onnxruntime_vs_references(args.out, args.references)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

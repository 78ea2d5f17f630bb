#!/usr/bin/env python3
"""Export a full-size image encoder with torch's default (dynamo) exporter, weights in external data.

Usage (ViT-H: 2.5 GB of weights, over protobuf's 2 GB limit)::

    venv/bin/python converters/export_encoder_dynamo.py --config vit_h \\
        --weights /tmp/vit_h_set/sam.h5 --references /tmp/vit_h_set --out /tmp/vit_h_onnx/ImageEncoder.onnx

Loads ``--weights`` into the upstream classes (``build_model``, ``sam_configs``) and writes what a
user gets from ``torch.onnx.export(encoder, (image,), path, dynamo=True, external_data=True)``
with default options, the encoder held by a wrapper (names under ``model.``, as export_dynamo.py
does for the tiny set): ``ImageEncoder.onnx`` (graph) and ``ImageEncoder.onnx.data`` (every
weight). With ``--references`` onnxruntime runs it on the set's ``references/input_image.npy`` and
the largest difference from ``references/image_embeddings.npy`` is printed with the file sizes
and the time each step took.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_  # noqa: E402
from export_dynamo import Wrapped, export_dynamo, ort_run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), required=True)
    parser.add_argument("--weights", type=Path, required=True, help="state dict: flat .h5 or .pth")
    parser.add_argument("--out", type=Path, required=True, help="the .onnx to write (its .data beside it)")
    parser.add_argument("--references", type=Path, help="a reference set of these weights")
    args = parser.parse_args()
    torch.set_grad_enabled(False)
    sam = build_sam(sam_configs.resolve(args.config))
    load_checkpoint_(sam, args.weights)
    size = sam.image_encoder.img_size
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"torch": torch.__version__, "export": "torch.onnx.export(dynamo=True, external_data=True), defaults"}
    start = time.monotonic()
    export_dynamo(Wrapped(sam.image_encoder).eval(), (torch.zeros(1, 3, size, size),), args.out,
                  input_names=["image"], output_names=["image_embeddings"])
    report["export_seconds"] = round(time.monotonic() - start, 1)
    report["files"] = {p.name: p.stat().st_size for p in sorted(args.out.parent.glob(args.out.name + "*"))}
    if args.references:
        image = np.load(args.references / "references/input_image.npy")
        start = time.monotonic()
        (embeddings,) = ort_run(args.out, {"image": image})
        report["onnxruntime_seconds"] = round(time.monotonic() - start, 1)
        expected = np.load(args.references / "references/image_embeddings.npy")
        report["onnxruntime_image_embeddings_max_abs"] = float(np.abs(embeddings.astype(np.float64) - expected).max())
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

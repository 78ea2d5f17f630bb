#!/usr/bin/env python3
"""Export a SAM-HQ reference set's image encoder as ONNX (``ImageEncoder.onnx``), checked with onnxruntime.

Usage::

    venv/bin/python converters/export_sam_hq_onnx.py --set /tmp/hq-vit_b      # SAM-HQ ViT-B
    venv/bin/python converters/export_sam_hq_onnx.py --set /tmp/hq-vit_tiny   # Light HQ-SAM (TinyViT)

    # then time it (onnxruntime CPU, 2 threads, sequential; 1 warm-up, 5 timed runs)
    venv/bin/python benchmarks/ort_encoder_bench.py /tmp/hq-vit_b/ImageEncoder.onnx \\
        /tmp/hq-vit_b/references/input_image.npy --threads 2 --warmups 1 --runs 5

The set (``export_sam_hq.py``'s folder) gives the configuration (``config.json``) and the weights
(``sam_hq.h5``, else ``sam_hq.pth``), loaded strictly into the upstream ``segment_anything_hq``
classes. Their image encoder is exported with torch's TorchScript exporter (``dynamo=False``, opset
17, as ``export_reference.py`` exports SAM's): input ``image`` (normalised, padded
[1, 3, S, S], the set's ``references/input_image.npy``), outputs the encoder's two results as
upstream returns them, ``image_embeddings`` [1, C, g, g] and ``interm_embeddings`` =
``interm_embeddings[0]`` (channels last: [1, g, g, C_vit] for the ViT, the output of the first
global-attention block; [1, 64, 64, C] for TinyViT, ``layers[1]``'s output). The ViT's later global
blocks' early features, which MaskDecoderHQ never reads, are not outputs. Weight names are those of
``sam.image_encoder``'s state dict, as in the set's other ONNX exports.

onnxruntime (CPU) then runs the file on ``references/input_image.npy`` and both outputs are
compared with PyTorch's (and PyTorch's with the set's ``image_embeddings.npy`` / ``vit_features.npy``,
which says the weights are the set's). The figures are printed as JSON. The file is written into the
set folder (or ``--out``); the set's manifest does not list it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_model import load_checkpoint_  # noqa: E402
from export_reference import OPSET, _torchscript_export, max_abs  # noqa: E402
from export_sam_hq import build_sam_hq  # noqa: E402

INPUT_NAMES = ["image"]
OUTPUT_NAMES = ["image_embeddings", "interm_embeddings"]


@contextmanager
def first_early_feature(encoder: torch.nn.Module):
    """The encoder returning (image embeddings, interm_embeddings[0]) instead of (embeddings, list):
    the exported graph keeps only what MaskDecoderHQ reads, and the weight names stay the encoder's
    own (a wrapper module would prefix them)."""
    forward = encoder.forward

    def two_outputs(image: torch.Tensor):
        embeddings, interm = forward(image)
        return embeddings, interm[0]

    encoder.forward = two_outputs
    try:
        yield encoder
    finally:
        del encoder.forward  # the class's forward again


def weights_of(folder: Path) -> Path:
    for name in ("sam_hq.h5", "sam_hq.pth"):
        if (folder / name).exists():
            return folder / name
    raise SystemExit(f"{folder}: neither sam_hq.h5 nor sam_hq.pth (not an export_sam_hq.py set?)")


def export(folder: Path, out: Path) -> Dict[str, Any]:
    import onnxruntime as ort

    cfg = json.loads((folder / "config.json").read_text())
    weights = weights_of(folder)
    sam = build_sam_hq(cfg)
    load_checkpoint_(sam, weights)
    refs = folder / "references"
    image = np.load(refs / "input_image.npy")
    with torch.no_grad(), first_early_feature(sam.image_encoder) as encoder:
        embeddings, early = (t.numpy() for t in encoder(torch.from_numpy(image)))
        started = time.perf_counter()
        _torchscript_export(encoder, (torch.from_numpy(image),), out, input_names=INPUT_NAMES,
                            output_names=OUTPUT_NAMES)
        export_s = time.perf_counter() - started
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    ort_embeddings, ort_early = session.run(OUTPUT_NAMES, {INPUT_NAMES[0]: image})
    return {
        "out": str(out), "bytes": out.stat().st_size, "weights": str(weights), "opset": OPSET,
        "exporter": "torch.onnx.export(dynamo=False)", "export_s": round(export_s, 1),
        "torch": torch.__version__, "onnxruntime": ort.__version__,
        "outputs": {name: list(value.shape) for name, value in zip(OUTPUT_NAMES, (ort_embeddings, ort_early))},
        "onnxruntime_vs_torch": {
            "image_embeddings_max_abs": max_abs(ort_embeddings, embeddings),
            "interm_embeddings_max_abs": max_abs(ort_early, early),
        },
        "torch_vs_set": {
            "image_embeddings_max_abs": max_abs(embeddings, np.load(refs / "image_embeddings.npy")),
            "vit_features_max_abs": max_abs(early.transpose(0, 3, 1, 2), np.load(refs / "vit_features.npy")),
        },
    }


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, required=True, help="a SAM-HQ reference set (export_sam_hq.py's folder)")
    parser.add_argument("--out", type=Path, help="the .onnx to write (default: SET/ImageEncoder.onnx)")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    print(json.dumps(export(args.set, args.out or args.set / "ImageEncoder.onnx"), indent=1))


if __name__ == "__main__":
    main()

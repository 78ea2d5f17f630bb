#!/usr/bin/env python3
"""Export the tiny MobileSAM with the dynamo-based ONNX exporter (torch >= 2.9 default).

Usage::

    venv/bin/python converters/export_dynamo.py \
        --weights reference_outputs/tiny/mobile_sam.h5 --out reference_outputs/tiny/dynamo

Loads the committed tiny state dict into the upstream classes (``build_model``,
``sam_configs``) and writes what a user gets from
``torch.onnx.export(..., dynamo=True, external_data=True)`` with default options:

    ImageEncoder.onnx (+ .onnx.data)        TinyViT wrapped as ``model`` (names get ``model.``)
    mobile_sam_decoder.onnx (+ .onnx.data)  the official ``SamOnnxModel`` (multimask)
    manifest.json                           sha256/bytes, versions, onnxruntime vs PyTorch

Both parts export (torch 2.15, onnxscript optimizer on). What the exporter does to
the weights, which the Swift importer (Sources/SAMImport) has to undo:

* BatchNorm is fused into the preceding Conv by the optimizer (``FuseBatchNormIntoConv``):
  the folded weight keeps the conv's name (``model.layers.0.blocks.0.conv1.c.weight``),
  the new bias is called ``<weight name>_bias``.
* Linear weights used by MatMul are stored transposed ([in, out]) under generic names
  (``val_118``); LayerNorm2d affines become ``unsqueeze_*`` [C,1,1]. Scope is only in
  each node's ``metadata_props`` (``pkg.torch.onnx.name_scopes``, ``namespace``).
* TinyViT attention biases appear as the eval-mode cache ``<attn>.ab`` [H, N, N]
  (``attention_biases[:, attention_bias_idxs]``), not as ``attention_biases``.
* In the decoder, constant folding bakes ``get_dense_pe()`` (already flattened and
  permuted for the transformer: ``permute_2`` [1, g*g, C]), the concatenated
  ``iou_token``/``mask_tokens`` (``expand_1`` [1, 5, C]) and the reshaped
  ``no_mask_embed`` (``view`` [1, C, 1, 1]) into unnamed initializers.

To keep the committed fixture small, the per-node ``pkg.torch.onnx.stack_trace`` and
``pkg.torch.onnx.fx_node`` metadata (debug text, most of the graph bytes) are removed
after export; every other byte of the export is kept. The encoder's weights are
dominated by the two [2,196,196] attention-bias caches of stage 2 (614 KB).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import onnx
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from mobile_sam.utils.onnx import SamOnnxModel  # noqa: E402

DEBUG_METADATA = ("pkg.torch.onnx.stack_trace", "pkg.torch.onnx.fx_node")
EXPORTER_MARK = "converters/export_dynamo.py"


class Wrapped(torch.nn.Module):
    """What people commonly export: the encoder held by a wrapper attribute (``model.`` prefix)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return self.model(image)


# The exporter records each node's class path (metadata ``namespace``, ``pkg.torch.onnx.class_hierarchy``).
# A user's wrapper lives in their own script, ``__main__.Wrapped``; keep that path when export.py
# imports this module too, so both ways write the same bytes.
Wrapped.__module__ = "__main__"


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), default="tiny")
    parser.add_argument("--weights", type=Path, default=root / "reference_outputs/tiny/mobile_sam.h5")
    parser.add_argument("--references", type=Path, default=root / "reference_outputs/tiny/references",
                        help="input_image.npy, image_embeddings.npy and point1/onnx_*.npy for the onnxruntime check")
    parser.add_argument("--out", type=Path, default=root / "reference_outputs/tiny/dynamo")
    return parser.parse_args(argv)


def export_dynamo(model: torch.nn.Module, args: tuple, path: Path, **kwargs) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, str(path), dynamo=True, external_data=True, **kwargs)


def strip_debug_metadata(path: Path) -> None:
    """Drops the stack-trace/fx-node text from every node; weights and graph stay as exported."""
    model = onnx.load(str(path), load_external_data=False)
    for node in model.graph.node:
        keep = [p for p in node.metadata_props if p.key not in DEBUG_METADATA]
        del node.metadata_props[:]
        node.metadata_props.extend(keep)
    onnx.save(model, str(path))


def ort_run(path: Path, feeds: dict) -> list:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    """Runs the CLI (``argv`` as for the command line); returns what it writes as manifest.json."""
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    cfg = sam_configs.resolve(args.config)
    sam = build_sam(cfg)
    load_checkpoint_(sam, args.weights)

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.onnx*"):
        old.unlink()
    refs = args.references
    image = np.load(refs / "input_image.npy")
    checks = {}

    encoder_path = out / "ImageEncoder.onnx"
    export_dynamo(Wrapped(sam.image_encoder).eval(), (torch.from_numpy(image),), encoder_path,
                  input_names=["image"], output_names=["imageEmbeddings"])
    strip_debug_metadata(encoder_path)
    (embeddings,) = ort_run(encoder_path, {"image": image})
    checks["image_embeddings_max_abs"] = float(np.abs(embeddings - np.load(refs / "image_embeddings.npy")).max())

    decoder_path = out / "mobile_sam_decoder.onnx"
    pe = sam.prompt_encoder
    size = sam.image_encoder.img_size
    dummy = (
        torch.randn(1, pe.embed_dim, *pe.image_embedding_size),
        torch.randint(0, size, (1, 5, 2)).float(),
        torch.randint(0, 4, (1, 5)).float(),
        torch.randn(1, 1, *pe.mask_input_size),
        torch.tensor([1.0]),
        torch.tensor([float(size), float(size)]),
    )
    points = torch.export.Dim("num_points")
    export_dynamo(
        SamOnnxModel(sam, return_single_mask=False).eval(), dummy, decoder_path,
        input_names=["image_embeddings", "point_coords", "point_labels", "mask_input",
                     "has_mask_input", "orig_im_size"],
        output_names=["masks", "iou_predictions", "low_res_masks"],
        dynamic_shapes={"image_embeddings": None, "point_coords": {1: points}, "point_labels": {1: points},
                        "mask_input": None, "has_mask_input": None, "orig_im_size": None},
    )
    strip_debug_metadata(decoder_path)
    case = refs / "point1"
    feeds = {k: np.load(case / f"onnx_{k}.npy") for k in ("point_coords", "point_labels", "mask_input", "has_mask_input")}
    feeds["image_embeddings"] = np.load(refs / "image_embeddings.npy")
    feeds["orig_im_size"] = np.array(np.load(refs / "resized_image.npy").shape[:2], dtype=np.float32)
    _, iou, low_res = ort_run(decoder_path, feeds)
    checks["point1_low_res_masks_max_abs"] = float(np.abs(low_res - np.load(case / "onnx_low_res_masks.npy")).max())
    checks["point1_iou_predictions_max_abs"] = float(np.abs(iou - np.load(case / "onnx_iou_predictions.npy")).max())

    files = {p.name: {"bytes": p.stat().st_size, "sha256": sha256(p)} for p in sorted(out.glob("*.onnx*"))}
    manifest = {
        "exporter_script": EXPORTER_MARK,
        "weights": str(args.weights.name),
        "config": args.config,
        "torch": torch.__version__,
        "onnx": onnx.__version__,
        "export": "torch.onnx.export(dynamo=True, external_data=True), default opset and optimizer",
        "removed_node_metadata": list(DEBUG_METADATA),
        "onnxruntime_vs_pytorch": checks,
        "files": files,
        "total_bytes": sum(f["bytes"] for f in files.values()),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(json.dumps(manifest, indent=1))
    return manifest


if __name__ == "__main__":
    main()

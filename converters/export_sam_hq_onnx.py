#!/usr/bin/env python3
"""Export a SAM-HQ reference set's image encoder (``ImageEncoder.onnx``) and official decoder
(``sam_hq_decoder.onnx``) as ONNX, each checked with onnxruntime.

Usage::

    venv/bin/python converters/export_sam_hq_onnx.py --set /tmp/hq-vit_b      # SAM-HQ ViT-B
    venv/bin/python converters/export_sam_hq_onnx.py --set /tmp/hq-vit_tiny   # Light HQ-SAM (TinyViT)
    # the decoder with upstream's switches (scripts/export_onnx_model.py --hq-token-only --multimask-output)
    venv/bin/python converters/export_sam_hq_onnx.py --set /tmp/hq-vit_b --hq-token-only --multimask-output

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
which says the weights are the set's).

The decoder is exported as SysCV sam-hq's ``scripts/export_onnx_model.py`` exports it: the package's
``SamOnnxModel`` (``segment_anything_hq/utils/onnx.py``: prompt embedding, ``embedding_encoder`` +
``compress_vit_feat`` of ``interm_embeddings[0]``, ``MaskDecoderHQ.predict_masks``, the mask selection
by ``multimask_output`` and ``hq_token_only``, mask upscaling) with the TorchScript exporter, opset 17,
constant folding, the point count dynamic; inputs ``image_embeddings``, ``interm_embeddings`` (the
encoder's early features stacked, channels last: [n, 1, g, g, C_vit], only the first read),
``point_coords``, ``point_labels``, ``mask_input``, ``has_mask_input``, ``orig_im_size``; outputs
``masks``, ``iou_predictions``, ``low_res_masks``. The dummy inputs that trace it are drawn with a fixed
seed (``--seed``), so the file is reproducible. onnxruntime runs it on every case of the set whose
``multimask_output`` and ``hq_token_only`` are the export's, on the set's image embeddings and
``vit_features``, and its low-res masks and scores are compared with the predictor's.

The figures are printed as JSON. The files are written into the set folder (or ``--out``,
``--decoder-out``); the set's manifest does not list them.
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

ONNX_ATOL = 1e-3  # onnxruntime vs PyTorch (different kernels, float32), as for the other exports
from export_sam_hq import build_sam_hq  # noqa: E402
from segment_anything_hq.utils.onnx import SamOnnxModel  # noqa: E402

INPUT_NAMES = ["image"]
OUTPUT_NAMES = ["image_embeddings", "interm_embeddings"]
DECODER_INPUTS = ["image_embeddings", "interm_embeddings", "point_coords", "point_labels", "mask_input",
                  "has_mask_input", "orig_im_size"]
DECODER_OUTPUTS = ["masks", "iou_predictions", "low_res_masks"]


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


def export_decoder(folder: Path, out: Path, hq_token_only: bool, multimask_output: bool, seed: int) -> Dict[str, Any]:
    import onnxruntime as ort

    cfg = json.loads((folder / "config.json").read_text())
    weights = weights_of(folder)
    sam = build_sam_hq(cfg)
    load_checkpoint_(sam, weights)
    refs = folder / "references"
    embeddings = np.load(refs / "image_embeddings.npy")
    vit_features = np.load(refs / "vit_features.npy")  # [1, C_vit, g, g]
    with torch.no_grad():
        _, interm = sam.image_encoder(torch.from_numpy(np.load(refs / "input_image.npy")))
    onnx_model = SamOnnxModel(sam, hq_token_only=hq_token_only, multimask_output=multimask_output)
    pe = sam.prompt_encoder
    torch.manual_seed(seed)  # the dummy inputs only trace the graph
    dummy = (
        torch.randn(1, pe.embed_dim, *pe.image_embedding_size),
        torch.randn(len(interm), 1, *pe.image_embedding_size, vit_features.shape[1]),
        torch.randint(0, sam.image_encoder.img_size, (1, 5, 2)).float(),
        torch.randint(0, 4, (1, 5)).float(),
        torch.randn(1, 1, *pe.mask_input_size),
        torch.tensor([1.0]),
        torch.tensor([1500.0, 2250.0]),
    )
    with torch.no_grad():
        _ = onnx_model(*dummy)
        started = time.perf_counter()
        _torchscript_export(onnx_model, dummy, out, input_names=DECODER_INPUTS, output_names=DECODER_OUTPUTS,
                            dynamic_axes={"point_coords": {1: "num_points"}, "point_labels": {1: "num_points"}})
        export_s = time.perf_counter() - started
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    # The early features as the encoder hands them over (channels last), the first being the set's vit_features.
    stacked = np.stack([vit_features.transpose(0, 2, 3, 1)] * len(interm))
    resized = np.load(refs / "resized_image.npy")
    worst_masks = worst_iou = 0.0
    cases = []
    for case in sorted(p for p in refs.iterdir() if (p / "onnx_point_coords.npy").exists()):
        flags = (bool(np.load(case / "multimask_output.npy").ravel()[0]), bool(np.load(case / "hq_token_only.npy").ravel()[0]))
        if flags != (multimask_output, hq_token_only):
            continue
        feeds = {"image_embeddings": embeddings, "interm_embeddings": stacked,
                 "point_coords": np.load(case / "onnx_point_coords.npy"), "point_labels": np.load(case / "onnx_point_labels.npy"),
                 "mask_input": np.load(case / "onnx_mask_input.npy"), "has_mask_input": np.load(case / "onnx_has_mask_input.npy"),
                 "orig_im_size": np.array(resized.shape[:2], dtype=np.float32)}
        _, iou, low_res = session.run(DECODER_OUTPUTS, feeds)
        worst_masks = max(worst_masks, max_abs(low_res, np.load(case / "low_res_masks.npy")))
        worst_iou = max(worst_iou, max_abs(iou, np.load(case / "iou_predictions.npy")))
        cases.append(case.name)
    if not cases:
        raise SystemExit(f"{folder}: no case with multimask_output={multimask_output}, hq_token_only={hq_token_only}")
    if not max(worst_masks, worst_iou) < ONNX_ATOL:
        raise AssertionError(f"{out.name} vs the predictor: masks {worst_masks}, iou {worst_iou} (tolerance {ONNX_ATOL})")
    return {
        "out": str(out), "bytes": out.stat().st_size, "weights": str(weights), "opset": OPSET,
        "exporter": "torch.onnx.export(dynamo=False), segment_anything_hq SamOnnxModel",
        "hq_token_only": hq_token_only, "multimask_output": multimask_output, "seed": seed,
        "export_s": round(export_s, 1), "interm_embeddings": [len(interm), 1, *pe.image_embedding_size, vit_features.shape[1]],
        "onnxruntime_vs_predictor": {"cases": cases, "low_res_masks_max_abs": worst_masks, "iou_predictions_max_abs": worst_iou},
    }


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, required=True, help="a SAM-HQ reference set (export_sam_hq.py's folder)")
    parser.add_argument("--out", type=Path, help="the encoder .onnx to write (default: SET/ImageEncoder.onnx)")
    parser.add_argument("--decoder-out", type=Path, help="the decoder .onnx to write (default: SET/sam_hq_decoder.onnx)")
    parser.add_argument("--hq-token-only", action="store_true", help="the decoder returns the HQ mask alone")
    parser.add_argument("--multimask-output", action="store_true",
                        help="the decoder returns the best of SAM's masks 1-3 (plus the HQ mask) instead of mask 0")
    parser.add_argument("--seed", type=int, default=0, help="seed of the dummy inputs that trace the decoder")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    report = {"encoder": export(args.set, args.out or args.set / "ImageEncoder.onnx"),
              "decoder": export_decoder(args.set, args.decoder_out or args.set / "sam_hq_decoder.onnx",
                                        args.hq_token_only, args.multimask_output, args.seed)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

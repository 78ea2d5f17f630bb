#!/usr/bin/env python3
"""The seed article's split export: ``PromptEncoder.onnx`` + ``MaskDecoder.onnx``.

Usage (``converters/export.py`` calls ``export_split_pair``; standalone it reads a
reference set that ``export.py``/``export_reference.py`` wrote)::

    venv/bin/python converters/export_split.py --weights reference_outputs/tiny/mobile_sam.h5 \
        --config tiny --references reference_outputs/tiny --out /tmp/split

What the full-size set ``fixtures/mobilesam-seed0`` ships (see its README.md), made
the same way: TorchScript-based ``torch.onnx.export(dynamo=False)``, opset 17,
constant folding on, the point count N dynamic (``num_points``):

    PromptEncoder.onnx  points f32 [1,N,2] (input frame), labels f32 [1,N]
                        -> sparsePromptEmbeddings [1,N,C], densePromptEmbeddings [1,C,g,g]
    MaskDecoder.onnx    imageEmbeddings [1,C,g,g], imagePositionalEncoding [1,C,g,g],
                        sparsePromptEmbeddings [1,N,C], densePromptEmbeddings [1,C,g,g]
                        -> masks [1,4,m,m] (all four, logits), iouPredictions [1,4]

The wrappers hold the upstream modules as ``self.pe`` / ``self.md``, so the
initializers that keep their PyTorch names are ``pe.*`` / ``md.*`` as in the full-size set.
The prompt encoder is ``_embed_points(pad=False)`` (no padding point, no boxes, no
mask input) written with ``torch.where`` as the full-size set's graph has it, plus the
box-corner labels 2 and 3 (``point_embeddings[2]`` / ``[3]`` added, as
``_embed_boxes`` does), which the full-size set's file also embeds; for labels -1/0/1 it is
bit for bit ``_embed_points``. The dense output is ``no_mask_embed`` broadcast.
The mask decoder is ``predict_masks``.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_  # noqa: E402

OPSET = 17
PROMPT_ENCODER_FILE = "PromptEncoder.onnx"
MASK_DECODER_FILE = "MaskDecoder.onnx"


class SplitPromptEncoder(nn.Module):
    """points [1,N,2], labels [1,N] -> sparse [1,N,C], dense [1,C,g,g]."""

    def __init__(self, prompt_encoder: nn.Module) -> None:
        super().__init__()
        self.pe = prompt_encoder

    def forward(self, points: torch.Tensor, labels: torch.Tensor):
        pe = self.pe
        # PromptEncoder._embed_points(points, labels, pad=False), its boolean-mask
        # in-place updates written as torch.where (the TorchScript exporter turns
        # them into NonZero/ScatterND shaped by the trace's label counts), plus
        # labels 2/3 (box corners), as _embed_boxes adds point_embeddings[2]/[3].
        sparse = pe.pe_layer.forward_with_coords(points + 0.5, pe.input_image_size)
        labels = labels.unsqueeze(-1).expand_as(sparse)
        sparse = torch.where(labels == -1, pe.not_a_point_embed.weight, sparse)
        for i in range(pe.num_point_embeddings):
            sparse = torch.where(labels == i, sparse + pe.point_embeddings[i].weight, sparse)
        grid = pe.image_embedding_size
        dense = pe.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(1, -1, grid[0], grid[1])
        return sparse, dense


class SplitMaskDecoder(nn.Module):
    """MaskDecoder.predict_masks: all four masks and scores."""

    def __init__(self, mask_decoder: nn.Module) -> None:
        super().__init__()
        self.md = mask_decoder

    def forward(self, image_embeddings: torch.Tensor, image_pe: torch.Tensor,
                sparse_prompt_embeddings: torch.Tensor, dense_prompt_embeddings: torch.Tensor):
        return self.md.predict_masks(
            image_embeddings=image_embeddings, image_pe=image_pe,
            sparse_prompt_embeddings=sparse_prompt_embeddings,
            dense_prompt_embeddings=dense_prompt_embeddings,
        )


PROMPT_ENCODER_IO = {
    "inputs": ["points", "labels"],
    "outputs": ["sparsePromptEmbeddings", "densePromptEmbeddings"],
}
MASK_DECODER_IO = {
    "inputs": ["imageEmbeddings", "imagePositionalEncoding", "sparsePromptEmbeddings", "densePromptEmbeddings"],
    "outputs": ["masks", "iouPredictions"],
}


def _torchscript_export(model: nn.Module, args: tuple, path: Path, io: Dict[str, List[str]],
                        dynamic_axes: Dict[str, Dict[int, str]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, str(path), dynamo=False, opset_version=OPSET,
                          do_constant_folding=True, export_params=True,
                          input_names=io["inputs"], output_names=io["outputs"], dynamic_axes=dynamic_axes)


def dummy_prompt(sam, n: int) -> tuple:
    """Fixed points/labels (every label kind) so the export does not depend on an RNG."""
    size = sam.image_encoder.img_size
    points = torch.linspace(0.1, 0.9, 2 * n).reshape(1, n, 2) * size
    labels = torch.tensor([([1.0, 0.0, -1.0, 2.0, 3.0] * n)[:n]])
    return points, labels


@torch.no_grad()
def split_example_inputs(sam) -> Dict[str, tuple]:
    """The example inputs both split files are exported with (no RNG: fixed values).

    ``prompt_encoder``: (points, labels), 5 points with every label kind;
    ``mask_decoder``: (embeddings, dense PE, sparse, dense), the sparse/dense pair that
    prompt makes. Float32; ``converters/export_styles.py`` casts them for its fp16 exports.
    """
    pe = sam.prompt_encoder
    grid = pe.image_embedding_size
    points, labels = dummy_prompt(sam, 5)
    sparse, dense = SplitPromptEncoder(pe).eval()(points, labels)
    embeddings = torch.linspace(-1.0, 1.0, pe.embed_dim * grid[0] * grid[1]).reshape(1, pe.embed_dim, *grid)
    return {"prompt_encoder": (points, labels), "mask_decoder": (embeddings, pe.get_dense_pe(), sparse, dense)}


@torch.no_grad()
def export_split_pair(sam, out_dir: Path) -> Dict[str, Path]:
    """Writes PromptEncoder.onnx and MaskDecoder.onnx into out_dir; returns their paths."""
    pe, md = sam.prompt_encoder, sam.mask_decoder
    prompt_encoder, mask_decoder = SplitPromptEncoder(pe).eval(), SplitMaskDecoder(md).eval()
    inputs = split_example_inputs(sam)
    pe_path = out_dir / PROMPT_ENCODER_FILE
    _torchscript_export(prompt_encoder, inputs["prompt_encoder"], pe_path, PROMPT_ENCODER_IO,
                        {"points": {1: "num_points"}, "labels": {1: "num_points"}})
    md_path = out_dir / MASK_DECODER_FILE
    _torchscript_export(mask_decoder, inputs["mask_decoder"], md_path, MASK_DECODER_IO,
                        {"sparsePromptEmbeddings": {1: "num_points"}})
    return {"prompt_encoder": pe_path, "mask_decoder": md_path}


# --- onnxruntime against PyTorch -----------------------------------------------------------


def _session(path: Path):
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def _max_abs(a, b) -> float:
    return float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())


def split_case_folders(references: Path) -> List[Path]:
    """Case folders holding the split path's PyTorch inputs/outputs (split_points.npy ...)."""
    return sorted(p.parent for p in references.glob("*/split_points.npy"))


@torch.no_grad()
def verify_split_pair(sam, set_root: Path, pe_path: Path, md_path: Path) -> Dict[str, Any]:
    """onnxruntime vs PyTorch on every split case of the reference set at set_root.

    Compares against the stored PyTorch references (split_sparse_embeddings,
    split_masks, split_iou_predictions); the mask decoder is fed the stored PyTorch
    sparse embeddings, so each file is measured on its own. One extra prompt with
    every label kind (-1, 0, 1, 2, 3) checks the labels no stored case has against
    the PyTorch wrapper. Returns max abs differences over all of them.
    """
    prompt_encoder, mask_decoder = SplitPromptEncoder(sam.prompt_encoder).eval(), SplitMaskDecoder(sam.mask_decoder).eval()
    pe_session, md_session = _session(pe_path), _session(md_path)
    refs = set_root / "references"
    embeddings = np.load(refs / "image_embeddings.npy")
    grid = tuple(embeddings.shape[1:])
    dense_pe = np.fromfile(set_root / "image_points_embeddings.bin", dtype="<f4").reshape(1, *grid)
    dense_ref = prompt_encoder(torch.zeros(1, 1, 2), torch.ones(1, 1))[1].numpy()

    report = {"split_sparse_embeddings_max_abs": 0.0, "split_dense_embeddings_max_abs": 0.0,
              "split_masks_max_abs": 0.0, "split_iou_predictions_max_abs": 0.0,
              "split_pytorch_wrapper_vs_references_max_abs": 0.0}
    cases = split_case_folders(refs)
    for folder in cases:
        points, labels = np.load(folder / "split_points.npy"), np.load(folder / "split_labels.npy")
        points, labels = points.astype(np.float32), labels.astype(np.float32)
        sparse_ref = np.load(folder / "split_sparse_embeddings.npy")
        sparse, dense = pe_session.run(None, {"points": points, "labels": labels})
        wrapper_sparse = prompt_encoder(torch.from_numpy(points), torch.from_numpy(labels))[0].numpy()
        masks, iou = md_session.run(None, {
            "imageEmbeddings": embeddings, "imagePositionalEncoding": dense_pe,
            "sparsePromptEmbeddings": sparse_ref, "densePromptEmbeddings": dense_ref,
        })
        _raise(report, "split_sparse_embeddings_max_abs", _max_abs(sparse, sparse_ref))
        _raise(report, "split_dense_embeddings_max_abs", _max_abs(dense, dense_ref))
        _raise(report, "split_masks_max_abs", _max_abs(masks, np.load(folder / "split_masks.npy")))
        _raise(report, "split_iou_predictions_max_abs", _max_abs(iou, np.load(folder / "split_iou_predictions.npy")))
        _raise(report, "split_pytorch_wrapper_vs_references_max_abs", _max_abs(wrapper_sparse, sparse_ref))

    points, labels = dummy_prompt(sam, 7)
    points = points * 0.77  # not the export's dummy values
    (sparse,) = pe_session.run(["sparsePromptEmbeddings"], {"points": points.numpy(), "labels": labels.numpy()})
    report["split_all_labels_sparse_max_abs"] = _max_abs(sparse, prompt_encoder(points, labels)[0].numpy())
    report["split_cases"] = [f.name for f in cases]
    return report


def _raise(report: Dict[str, Any], key: str, value: float) -> None:
    report[key] = max(report[key], value)


# --- standalone ------------------------------------------------------------------------------


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), default="tiny")
    parser.add_argument("--weights", type=Path, required=True, help="state dict (.pt/.pth) or flat .h5")
    parser.add_argument("--references", type=Path, default=None,
                        help="a reference set (manifest.json, references/, image_points_embeddings.bin) "
                             "to check the files against with onnxruntime")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    sam = build_sam(sam_configs.resolve(args.config))
    load_checkpoint_(sam, args.weights)
    args.out.mkdir(parents=True, exist_ok=True)
    paths = export_split_pair(sam, args.out)
    report = {"files": {k: str(v) for k, v in paths.items()}}
    if args.references:
        report["onnxruntime_vs_pytorch"] = verify_split_pair(sam, args.references, paths["prompt_encoder"],
                                                             paths["mask_decoder"])
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()

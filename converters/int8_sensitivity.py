"""Which of a SAM / MobileSAM image encoder's matrices cost masks when rounded to int8.

Rounds the matrices ``samconvert --dtype int8`` quantizes (the image encoder's linear weights and
TinyViT's pointwise ``Conv2d_BN`` filters) as it does, per output row, scale = max |row| / 127, in
PyTorch, a group of them at a time, and runs the predictor on the reference set's prompts
(``export_reference.prompt_cases``) against the float32 model:

    venv/bin/python converters/int8_sensitivity.py --config vit_l --seed 0
    venv/bin/python converters/int8_sensitivity.py --config vit_b --checkpoint sam_vit_b.pth --image photo.jpg

For each group: the relative L2 error of the image embeddings, the prompts whose three masks all keep
IoU >= 0.98 with float32's, those whose best mask does, those whose best mask is the same one, and the
lowest IoUs. Groups: every matrix (what ``--dtype int8`` stores), each layer kind alone, each quarter
of the matrices in module order alone, and every matrix but those of the first quarter. Errors from
several groups do not add up: each is measured alone.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np
import torch

import sam_configs
from build_model import build_sam, load_checkpoint_, seeded_init_
from export_reference import photo_pixels, pixels_to_torch, prompt_cases, synthetic_pixels
from mobile_sam.modeling import tiny_vit_sam
from segment_anything import SamPredictor

IOU_BAR = 0.98


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="full (MobileSAM), vit_b, vit_l or vit_h (sam_configs.py)")
    p.add_argument("--seed", type=int, default=0, help="seeded random weights and prompts (export_reference.py's)")
    p.add_argument("--checkpoint", type=Path, help="state dict (.pt/.pth) or flat .h5 instead of seeded weights")
    p.add_argument("--image", type=Path, help="a photo instead of the seeded synthetic image")
    p.add_argument("--json", type=Path, help="also write the rows here")
    return p.parse_args(argv)


def quantized_matrices(sam) -> Dict[str, torch.nn.Module]:
    """The modules whose weights samconvert --dtype int8 stores as int8, in module order."""
    found = {}
    for name, module in sam.image_encoder.named_modules():
        if isinstance(module, torch.nn.Linear):
            found[name] = module
        elif isinstance(module, tiny_vit_sam.Conv2d_BN) and module.c.kernel_size == (1, 1) \
                and module.c.groups == 1 and module.c.in_channels > 1:
            found[name + ".c"] = module.c
    return found


def used_in_forward(sam, matrices: Dict[str, torch.nn.Module], image: torch.Tensor) -> Dict[str, torch.nn.Module]:
    """Those the encoder's forward calls (TinyViT's classifier ``head`` is stored but never run)."""
    called = set()
    hooks = [m.register_forward_hook(lambda mod, i, o, n=n: called.add(n)) for n, m in matrices.items()]
    sam.image_encoder(image)
    for hook in hooks:
        hook.remove()
    return {n: m for n, m in matrices.items() if n in called}


def rounded_to_int8(weight: torch.Tensor) -> torch.Tensor:
    """Per output row, symmetric: code = round(w / s), s = max |row| / 127; returns code * s."""
    rows = weight.reshape(weight.shape[0], -1)
    scale = rows.abs().amax(dim=1, keepdim=True) / 127
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return (torch.round(rows / scale) * scale).reshape(weight.shape)


def kind_of(name: str) -> str:
    """A matrix's layer kind: its name without block indices (blocks.3.attn.qkv -> attn.qkv)."""
    parts = [p for p in name.split(".") if not p.isdigit()]
    return ".".join(parts[-2:]) if len(parts) >= 2 else name


def groups_of(names: List[str]) -> Dict[str, Callable[[str], bool]]:
    quarter = max(1, (len(names) + 3) // 4)
    position = {n: i for i, n in enumerate(names)}
    groups: Dict[str, Callable[[str], bool]] = {"every matrix": lambda n: True}
    for kind in sorted({kind_of(n) for n in names}):
        groups[f"{kind} alone"] = lambda n, k=kind: kind_of(n) == k
    for q in range(4):
        first, last = q * quarter, min(len(names), (q + 1) * quarter) - 1
        if first <= last:
            groups[f"matrices {first}-{last} alone"] = lambda n, a=first, b=last: a <= position[n] <= b
    groups[f"every matrix but 0-{quarter - 1}"] = lambda n: position[n] >= quarter
    return groups


def iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return 1.0 if union == 0 else float(np.logical_and(a, b).sum() / union)


def main(argv=None) -> List[Dict]:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    torch.manual_seed(args.seed)
    sam = build_sam(sam_configs.resolve(args.config))
    if args.checkpoint:
        load_checkpoint_(sam, args.checkpoint)
    else:
        seeded_init_(sam)
    size = sam.image_encoder.img_size
    pixels = photo_pixels(args.image, size) if args.image else synthetic_pixels(args.seed, size)
    image = sam.preprocess(pixels_to_torch(pixels)[0])[None]
    matrices = used_in_forward(sam, quantized_matrices(sam), image)
    originals = {n: m.weight.detach().clone() for n, m in matrices.items()}
    height, width = pixels.shape[:2]
    cases = prompt_cases(args.seed, width, height)

    def run(selected: Callable[[str], bool], mask_input: np.ndarray | None):
        for name, module in matrices.items():
            module.weight.copy_(rounded_to_int8(originals[name]) if selected(name) else originals[name])
        embeddings = sam.image_encoder(image)
        predictor = SamPredictor(sam)
        predictor.original_size = predictor.input_size = (height, width)
        predictor.features, predictor.is_image_set = embeddings, True
        outputs = []
        for case in cases:
            mask = None
            if "mask_from" in case:  # the float32 run's first low-res mask of that case, as export_reference does
                mask = mask_input if mask_input is not None else outputs[0][2][:1]
            outputs.append(predictor.predict(point_coords=case.get("points"), point_labels=case.get("labels"),
                                             box=case.get("box"), mask_input=mask, multimask_output=True))
        return embeddings, outputs

    reference_embeddings, reference = run(lambda n: False, None)
    first_low_res = reference[0][2][:1]
    rows = []
    print(f"{args.config}: {len(matrices)} matrices, {len(cases)} prompts; IoU bar {IOU_BAR}")
    print(f"{'rounded to int8':34s} {'emb. error':>10s} {'every':>6s} {'best':>5s} {'same':>5s} {'min best':>9s} {'min any':>8s}")
    for label, selected in groups_of(list(matrices)).items():
        embeddings, outputs = run(selected, first_low_res)
        error = float((embeddings - reference_embeddings).norm() / reference_embeddings.norm())
        best, every, same = [], [], 0
        for (masks0, scores0, _), (masks1, scores1, _) in zip(reference, outputs):
            b0, b1 = int(np.argmax(scores0)), int(np.argmax(scores1))
            same += b0 == b1
            best.append(iou(masks0[b0], masks1[b1]))
            every.append(min(iou(masks0[k], masks1[k]) for k in range(len(masks0))))
        row = {"group": label, "matrices": sum(map(selected, matrices)), "embedding_relative_error": error,
               "every_mask_at_bar": sum(v >= IOU_BAR for v in every), "best_mask_at_bar": sum(v >= IOU_BAR for v in best),
               "same_best_mask": same, "prompts": len(cases), "lowest_best_iou": min(best), "lowest_iou": min(every)}
        rows.append(row)
        n = len(cases)
        print(f"{label:34s} {error:10.4f} {row['every_mask_at_bar']:>3d}/{n:<2d} {row['best_mask_at_bar']:>2d}/{n:<2d} "
              f"{same:>2d}/{n:<2d} {row['lowest_best_iou']:9.3f} {row['lowest_iou']:8.3f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"config": args.config, "seed": None if args.checkpoint else args.seed,
                                         "iou_bar": IOU_BAR, "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    main()

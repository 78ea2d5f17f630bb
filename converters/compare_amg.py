#!/usr/bin/env python3
"""Match two segment-everything mask files one to one by mask IoU (a development aid).

Usage::

    venv/bin/python converters/compare_amg.py OURS.json UPSTREAM.json [--iou 0.95] [--min-matched 0.9]
    venv/bin/python converters/compare_amg.py out/amg/photo.json reference_outputs/tiny_amg/masks/photo.json

Both files are lists of annotations as ``converters/export_amg.py`` writes them (segment_anything's
``scripts/amg.py --convert-to-rle`` format: COCO RLE ``segmentation``, ``predicted_iou``,
``stability_score`` ...) for the same photo. Every pair's mask IoU comes from pycocotools (on the RLEs);
masks are matched one to one maximising the summed IoU (Hungarian, scipy; greedy by IoU without scipy).
Prints how many masks of each side have a partner at IoU >= --iou, the IoU distribution of the matched
pairs and how far their predicted IoU and stability score differ. With --min-matched, exits 1 when
either side's matched fraction is below it. The Swift verifier does the same natively.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Tuple

import numpy as np
from pycocotools import mask as mask_utils


def load(path: Path) -> List[dict]:
    annotations = json.loads(path.read_text())
    if not isinstance(annotations, list):
        raise SystemExit(f"{path}: not a list of annotations")
    return annotations


def rles(annotations: List[dict]) -> List[dict]:
    return [{"size": a["segmentation"]["size"], "counts": a["segmentation"]["counts"].encode("ascii")}
            for a in annotations]


def match(iou: np.ndarray) -> List[Tuple[int, int]]:
    """One-to-one pairs (ours, upstream) maximising the summed IoU."""
    if iou.size == 0:
        return []
    try:
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(-iou)
        return list(zip(rows.tolist(), cols.tolist()))
    except ImportError:  # greedy: the best remaining pair first
        pairs, used_r, used_c = [], set(), set()
        for flat in np.argsort(-iou, axis=None, kind="stable"):
            r, c = divmod(int(flat), iou.shape[1])
            if r not in used_r and c not in used_c:
                pairs.append((r, c))
                used_r.add(r)
                used_c.add(c)
        return pairs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ours", type=Path)
    parser.add_argument("upstream", type=Path)
    parser.add_argument("--iou", type=float, default=0.95, help="a matched pair needs at least this mask IoU")
    parser.add_argument("--min-matched", type=float, default=None, help="exit 1 below this matched fraction")
    args = parser.parse_args(argv)
    ours, upstream = load(args.ours), load(args.upstream)
    sizes = {tuple(a["segmentation"]["size"]) for a in ours + upstream}
    if len(sizes) > 1:
        raise SystemExit(f"masks of different sizes: {sorted(sizes)}")
    iou = np.zeros((len(ours), len(upstream)))
    if ours and upstream:
        iou = np.asarray(mask_utils.iou(rles(ours), rles(upstream), [0] * len(upstream)), dtype=np.float64)
    pairs = [(r, c) for r, c in match(iou) if iou[r, c] >= args.iou]
    matched = np.array([iou[r, c] for r, c in pairs])
    frac_ours = len(pairs) / len(ours) if ours else 1.0
    frac_upstream = len(pairs) / len(upstream) if upstream else 1.0
    print(f"masks: ours {len(ours)}, upstream {len(upstream)}")
    print(f"matched at IoU >= {args.iou}: {len(pairs)} = {frac_ours:.4f} of ours, {frac_upstream:.4f} of upstream")
    if len(matched):
        q = np.quantile(matched, [0.0, 0.01, 0.05, 0.5])
        print(f"matched IoU: min {q[0]:.6f}  p1 {q[1]:.6f}  p5 {q[2]:.6f}  median {q[3]:.6f}  mean {matched.mean():.6f}  "
              f"exact {int((matched == 1.0).sum())}/{len(matched)}")
        for key in ("predicted_iou", "stability_score"):
            diff = np.array([abs(ours[r][key] - upstream[c][key]) for r, c in pairs])
            print(f"{key}: max |difference| {diff.max():.3g}, mean {diff.mean():.3g}")
    unmatched = [i for i in range(len(upstream)) if i not in {c for _, c in pairs}]
    if unmatched:
        best = iou[:, unmatched].max(axis=0) if len(ours) else np.zeros(len(unmatched))
        print("upstream masks without a partner (index: best IoU, predicted_iou, stability_score): " + ", ".join(
            f"{i}: {b:.3f}, {upstream[i]['predicted_iou']:.4f}, {upstream[i]['stability_score']:.4f}"
            for i, b in list(zip(unmatched, best))[:10]) + (" ..." if len(unmatched) > 10 else ""))
    if args.min_matched is not None and min(frac_ours, frac_upstream) < args.min_matched:
        print(f"FAIL: matched fraction below {args.min_matched}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

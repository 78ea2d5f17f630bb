#!/usr/bin/env python3
"""Export a SAM 2 / 2.1 video reference set: upstream SAM2VideoPredictor tracking a synthetic clip.

Usage::

    # the committed tiny set (every prompt kind, two rounds, objects absent on a frame):
    venv/bin/python converters/export_sam2_video.py --model tiny_video --seed 0 --scenario all-prompts \\
        --object-score-gain 10 --formats pt,safetensors --out reference_outputs/sam2_tiny_video
    # the same with the predictor's switches on (add_all_frames_to_correct_as_cond, non_overlap_masks):
    venv/bin/python converters/export_sam2_video.py --model tiny_video --seed 0 --scenario all-prompts \
        --object-score-gain 10 --formats pt --corrections-as-conditioning --non-overlap-masks --dump-frames 5 \
        --out reference_outputs/sam2_tiny_video_switches
    # full size (seeded weights; --checkpoint sam2.1_hiera_tiny.pt for published ones):
    venv/bin/python converters/export_sam2_video.py --model sam2.1_hiera_tiny --seed 0 --scenario standard \\
        --dump-frames 1,4,7 --formats pt,safetensors,h5 --out /work/video-sets/sam21t-seed0
    venv/bin/python converters/export_sam2_video.py --model sam2.1_hiera_tiny --seed 0 --scenario disappear \\
        --auto-object-score-bias --object-score-gain 40 --bias-scan 5.35,5.55,0.05 --dump-frames 1,2,4,7 \\
        --formats pt,safetensors --out /work/video-sets/sam21t-disappear

The model is ``sam2_configs.CONFIGS[--model]`` built as ``sam2.build_sam.build_sam2_video_predictor``
builds it (``build_sam2.build_video``: the SAM2VideoPredictor class, the configuration's overrides,
then the image post-processing overrides and the video ones, ``binarize_mask_from_pts_for_mem_enc``
and ``fill_hole_area=8``), with the seeded weights of ``build_sam2.seeded_init_`` (the same seed gives
the same weights as export_sam2.py's image model) or ``--checkpoint``. Tracking is upstream's,
unmodified, except where stated: hole filling (``--fill-holes``, the default) replaces
``sam2.utils.misc.get_connected_components``, which on a CPU-only install cannot import sam2's CUDA
kernel (upstream then skips the step with a warning), with an exact port of that kernel; the
object-score head's last layer gets ``--object-score-gain`` on its weights and ``--object-score-bias``
on its bias (chosen from trial runs without the latter; both kept in the saved weights); and memory
attention's memory is cast to float32 where upstream would hand it bfloat16 only (a frame tracked
before any past object pointer exists: upstream fails there without autocast, sam2 #308 / #577).

Run: one ``init_state(video_path=DIR/frames)``; for each round r = 0, 1, ... of prompts.json: every
entry of round r in file order (``add_new_points_or_box`` with clear_old_points=True and
normalize_coords=True, or ``add_new_mask``), then ``propagate_in_video(start_frame_idx=--start-frame,
max_frame_num_to_track=--max-frames, reverse=--reverse)`` to its end. The references are what the
last round's propagation yielded.

``export_sam2_video.py --verify DIR [DIR ...]`` reloads sets: shapes, finite values, the checkpoint
formats and config.json against the model, and tracking rerun from the set's own checkpoint (must
give the same files bit for bit).

Writes, into ``--out``:

    checkpoint.pt               {"model": state_dict}, as the published files (video weights included);
    checkpoint.safetensors/.h5  the same tensors (--formats; .h5: one float32 dataset per dotted key)
    config.json                 sam2_configs.swift_config (the image model) plus "video":
                                sam2_configs.video_config (every tracking setting, read from the model)
    frames/00000.jpg ...        the clip (JPEG quality 95, 4:4:4), what init_state loads
    masks/obj<id>_f<frame>.png  mask prompts (0/255, frame-sized)
    prompts.json                [{"frame", "object", "points": [[x, y, label]], "box": [x0, y0, x1, y1],
                                  "mask": "masks/...png", "round"}], frame pixels
    reference.json              the run: model, seed, versions, frames yielded, objects, rounds, flags,
                                per-frame object scores, cond frames, hole filling, dumps
    reference/logits/<stem>.npy         video_res_masks yielded for the frame, float32 [objects, 1, H, W]
    reference/object_scores/<stem>.npy  float32 [objects]: each object's stored object_score_logits
    reference/low_res/<stem>.npy        float32 [objects, 1, S/4, S/4]: the pred_masks (holes filled) used
    reference/modules/<stem>/object_<id>/<name>.npy   the memory path of the last round (see reference.json)
    reference/prompt_calls/r<R>_c<K>.npy  for an add_* call whose output the last propagation did not use
                                (a correction on a tracked frame): the video_res_masks it returned, and its
                                module dumps in r<R>_c<K>/object_<id>/
    reference/decoded/<stem>.npy        uint8 [H, W, 3]: PIL's decoding of the first frame's JPEG
    reference/input/<stem>.npy          float32 [3, S, S]: the first frame as init_state holds it (--input-dump)
    README.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
import warnings
from collections import deque
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

os.environ.setdefault("TQDM_DISABLE", "1")  # propagate_in_video's progress bar

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_sam2  # noqa: E402
import sam2_configs  # noqa: E402
from export_reference import OutDir  # noqa: E402

import sam2.utils.misc as sam2_misc  # noqa: E402

EXPORTER_MARK = "converters/export_sam2_video.py"
JPEG_QUALITY = 95
SCENARIOS = ("standard", "disappear", "all-prompts")
MODULE_NAMES = ("vision_features", "memory", "memory_pos", "pix_feat_with_mem", "obj_ptr", "object_score_logits",
                "low_res_multimasks", "ious", "maskmem_features", "maskmem_features_fp32", "maskmem_pos_enc")
PREFLIGHT_NAMES = ("maskmem_features", "maskmem_features_fp32", "maskmem_pos_enc", "pred_masks", "object_score_logits")


class SetDir(OutDir):
    """OutDir that may wipe and rewrite an earlier export of this script."""

    @staticmethod
    def _is_our_export(root: Path) -> bool:
        manifest = root / "reference.json"
        return manifest.exists() and json.loads(manifest.read_text()).get("exporter_script") == EXPORTER_MARK


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(sam2_configs.CONFIGS), required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, default=None, help="a published-style .pt instead of seeded weights")
    parser.add_argument("--scenario", choices=SCENARIOS, default="standard",
                        help="standard: object 1 two clicks (one negative) and object 2 a box on frame 0, a correction "
                             "click on object 1 at frame 4 in round 1; disappear: object 1 the same clicks, object 2 "
                             "a mask on frame 0, its shape leaves the frame, one round; all-prompts: standard plus "
                             "object 3 prompted by a mask on frame 2")
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--width", type=int, default=None, help="default 640 (64 for tiny_video)")
    parser.add_argument("--height", type=int, default=None, help="default 480 (48 for tiny_video)")
    holes = parser.add_mutually_exclusive_group()
    holes.add_argument("--fill-holes", dest="fill_holes", action="store_true", default=True,
                       help="(default) run fill_holes_in_mask_scores with a port of sam2's CUDA connected components")
    holes.add_argument("--no-fill-holes", dest="fill_holes", action="store_false",
                       help="leave upstream's CPU behaviour: the step is skipped with a warning")
    bias = parser.add_mutually_exclusive_group()
    bias.add_argument("--object-score-bias", type=float, default=None,
                      help="add B to the object-score head's last bias (default: chosen, see --auto-object-score-bias)")
    bias.add_argument("--auto-object-score-bias", action="store_true",
                      help="choose B from trial runs: standard keeps every object present on every frame; disappear "
                           "makes object 2 present on its prompt frame and the next, absent on a later one; "
                           "all-prompts makes one object absent on a frame where another is present (the default "
                           "when no B is given)")
    parser.add_argument("--object-score-gain", type=float, default=1.0,
                        help="multiply the object-score head's last weights by G first (seeded weights give scores "
                             "that hardly vary between frames and objects; a gain spreads them so a shift can put one "
                             "object below zero and keep another above with a margin); kept in the saved weights")
    parser.add_argument("--bias-scan", type=str, default=None,
                        help="LO,HI,STEP: the shifts auto mode tries (default: from a run without shift)")
    parser.add_argument("--bias-steps", type=int, default=25, help="shifts in auto mode's default scan")
    parser.add_argument("--score-margin", type=float, default=0.1,
                        help="|object score| every (frame, object) of the last propagation must keep under the chosen B")
    dumps = parser.add_mutually_exclusive_group()
    dumps.add_argument("--dump-frames", type=str, default=None, help="comma-separated frame indices for module dumps")
    dumps.add_argument("--dump-all", action="store_true", help="module dumps on every frame (default for tiny_video)")
    parser.add_argument("--reverse", action="store_true")
    parser.add_argument("--start-frame", type=int, default=None)
    parser.add_argument("--max-frames", type=int, default=None)
    parser.add_argument("--formats", type=str, default="pt", help="comma-separated subset of pt,safetensors,h5 (pt always)")
    parser.add_argument("--correction-frame", type=int, default=4, help="frame of round 1's correction click")
    parser.add_argument("--corrections-as-conditioning", action="store_true",
                        help="SAM2VideoPredictor's add_all_frames_to_correct_as_cond=True: a correction on a tracked "
                             "frame makes it a conditioning frame (upstream's default: off)")
    parser.add_argument("--non-overlap-masks", action="store_true",
                        help="SAM2VideoPredictor's non_overlap_masks=True: at each pixel of the output logits only the "
                             "highest-scoring object keeps its logit, the others are clamped to -10 (default: off)")
    parser.add_argument("--input-dump", action=argparse.BooleanOptionalAction, default=None,
                        help="write reference/input/<first stem>.npy, the first frame as init_state holds it "
                             "(default: on, off for tiny_video to keep the committed set small)")
    parser.add_argument("--no-feature-cache", action="store_true",
                        help="recompute the image encoder in every trial run (the cache only skips identical work)")
    args = parser.parse_args(argv)
    tiny = args.model.startswith("tiny")
    args.width = args.width or (64 if tiny else 640)
    args.height = args.height or (48 if tiny else 480)
    if args.input_dump is None:
        args.input_dump = not tiny
    args.formats = sorted(set(["pt"] + [f.strip() for f in args.formats.split(",") if f.strip()]))
    unknown = set(args.formats) - {"pt", "safetensors", "h5"}
    if unknown:
        parser.error(f"unknown --formats {sorted(unknown)}")
    if args.dump_frames is not None:
        args.dump_frames = sorted({int(v) for v in args.dump_frames.split(",") if v.strip()})
    elif args.dump_all or tiny:
        args.dump_frames = None  # all
    else:
        args.dump_frames = sorted({1, args.frames // 2, args.frames - 1})
    return args


# --- connected components: sam2/csrc/connected_components.cu ------------------------------------
#
# The kernel (block-based union-find, adapted from Connected_components_PyTorch) labels 2x2 blocks:
# init_labeling gives block (row, col) (both even) the label row*W+col; merge unions a block with its
# top-left, top, top-right and left blocks when a foreground pixel of the block touches a foreground
# pixel of that block horizontally, vertically or diagonally (8-connectivity); union always links the
# larger root to the smaller (atomicMin), so every component ends with its smallest block index as
# root; final_labeling writes root+1 to the block's foreground pixels and 0 elsewhere; the counts are
# each pixel's component area (0 on background). Returned: (labels, counts), int32 [N, 1, H, W].


def _kernel_labels(img: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The kernel's steps, run one block after another (the result does not depend on the order)."""
    H, W = img.shape
    flat = img.reshape(-1).astype(bool)
    parent = np.arange(H * W, dtype=np.int64)

    def find(n: int) -> int:
        while parent[n] != n:
            n = int(parent[n])
        return n

    def union(a: int, b: int) -> None:
        a, b = find(a), find(b)
        if a < b:
            parent[b] = a
        elif b < a:
            parent[a] = b

    blocks = [(row, col) for row in range(0, H, 2) for col in range(0, W, 2)]
    for row, col in blocks:
        idx = row * W + col
        P = 0
        if flat[idx]:
            P |= 0x777
        if row + 1 < H and flat[idx + W]:
            P |= 0x777 << 4
        if col + 1 < W and flat[idx + 1]:
            P |= 0x777 << 1
        if col == 0:
            P &= 0xEEEE
        if col + 1 >= W:
            P &= 0x3333
        elif col + 2 >= W:
            P &= 0x7777
        if row == 0:
            P &= 0xFFF0
        if row + 1 >= H:
            P &= 0xFF
        if P:
            if P & 1 and flat[idx - W - 1]:
                union(idx, idx - 2 * W - 2)
            if (P >> 1 & 1 and flat[idx - W]) or (P >> 2 & 1 and flat[idx - W + 1]):
                union(idx, idx - 2 * W)
            if P >> 3 & 1 and flat[idx + 2 - W]:
                union(idx, idx - 2 * W + 2)
            if (P >> 4 & 1 and flat[idx - 1]) or (P >> 8 & 1 and flat[idx + W - 1]):
                union(idx, idx - 2)
    labels = np.zeros(H * W, np.int32)
    for row, col in blocks:
        idx = row * W + col
        y = find(idx) + 1
        for dy in (0, 1):
            for dx in (0, 1):
                if row + dy < H and col + dx < W:
                    p = idx + dy * W + dx
                    labels[p] = y if flat[p] else 0
    area = np.bincount(labels, minlength=H * W + 1)
    counts = np.where(labels > 0, area[labels], 0).astype(np.int32)
    return labels.reshape(H, W), counts.reshape(H, W)


def _fast_labels(img: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The same labels with scipy: 8-connected components, each named by its smallest block index + 1."""
    from scipy import ndimage

    H, W = img.shape
    fg = img.astype(bool)
    components, n = ndimage.label(fg, structure=np.ones((3, 3), dtype=bool))
    ys, xs = np.nonzero(fg)
    block = (ys // 2 * 2) * W + (xs // 2 * 2)
    first = np.full(n + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, components[ys, xs], block)
    labels = np.zeros((H, W), np.int32)
    labels[ys, xs] = (first[components[ys, xs]] + 1).astype(np.int32)
    area = np.bincount(components.ravel(), minlength=n + 1)
    counts = np.where(fg, area[components], 0).astype(np.int32)
    return labels, counts


def _bfs_components(img: np.ndarray) -> np.ndarray:
    """Plain 8-connected flood fill (component ids in scan order), for checking the two above."""
    H, W = img.shape
    ids = np.zeros((H, W), np.int64)
    n = 0
    for y in range(H):
        for x in range(W):
            if img[y, x] and not ids[y, x]:
                n += 1
                ids[y, x] = n
                queue = deque([(y, x)])
                while queue:
                    cy, cx = queue.popleft()
                    for dy in (-1, 0, 1):
                        for dx in (-1, 0, 1):
                            ny, nx = cy + dy, cx + dx
                            if 0 <= ny < H and 0 <= nx < W and img[ny, nx] and not ids[ny, nx]:
                                ids[ny, nx] = n
                                queue.append((ny, nx))
    return ids


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    if not np.array_equal(a > 0, b > 0):
        return False
    pairs = set(zip(a[a > 0].tolist(), b[b > 0].tolist()))
    return len(pairs) == len(set(p[0] for p in pairs)) == len(set(p[1] for p in pairs))


def check_connected_components_port(seed: int = 0) -> Dict[str, Any]:
    """The kernel port, the scipy path and a flood fill agree on random masks of several densities
    and sizes: same 8-connected partition, same label values, same counts."""
    rng = np.random.default_rng(seed)
    cases = 0
    for (h, w) in [(2, 2), (4, 6), (10, 8), (24, 24), (16, 30)]:
        for density in (0.2, 0.45, 0.6, 0.8):
            img = rng.random((h, w)) < density
            lk, ck = _kernel_labels(img)
            lf, cf = _fast_labels(img)
            bfs = _bfs_components(img)
            assert _same_partition(lk, bfs), "kernel port is not 8-connectivity"
            assert np.array_equal(lk, lf) and np.array_equal(ck, cf), "scipy path differs from the kernel port"
            cases += 1
    return {"cases": cases, "result": "kernel port == scipy 8-connectivity == flood fill (labels and counts)"}


def connected_components_port(mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Drop-in for sam2.utils.misc.get_connected_components: (labels, counts) int32 [N, 1, H, W]."""
    array = mask.to(torch.uint8).cpu().numpy()
    N, C, H, W = array.shape
    assert C == 1 and H % 2 == 0 and W % 2 == 0, "the kernel needs [N, 1, H, W] with even H and W"
    labels = np.zeros(array.shape, np.int32)
    counts = np.zeros(array.shape, np.int32)
    for n in range(N):
        try:
            labels[n, 0], counts[n, 0] = _fast_labels(array[n, 0])
        except ImportError:
            labels[n, 0], counts[n, 0] = _kernel_labels(array[n, 0])
        if H * W <= 4096:  # small masks (the tiny set): check the scipy path against the kernel's steps
            lk, ck = _kernel_labels(array[n, 0])
            assert np.array_equal(lk, labels[n, 0]) and np.array_equal(ck, counts[n, 0])
    return torch.from_numpy(labels).to(mask.device), torch.from_numpy(counts).to(mask.device)


# --- the clip ---------------------------------------------------------------------------------


@dataclass
class Shape:
    kind: str  # ellipse, rectangle, diamond
    color: Tuple[int, int, int]
    half: Tuple[float, float]  # half width, half height
    start: Tuple[float, float]
    velocity: Tuple[float, float]
    stripe: float
    leaves: bool = False
    positions: List[Tuple[float, float]] = field(default_factory=list)


def make_shapes(rng: np.random.Generator, n: int, W: int, H: int, scenario: str) -> List[Shape]:
    m = min(W, H)
    speed = max(1.5, 0.0125 * max(W, H))
    specs = [
        ("ellipse", (215, 45, 50), (0.17 * m, 0.12 * m), (0.28, 0.38)),
        ("rectangle", (45, 85, 215), (0.14 * m, 0.10 * m), (0.70, 0.36)),
        ("diamond", (60, 190, 80), (0.12 * m, 0.13 * m), (0.50, 0.72)),
    ]
    shapes = []
    for i, (kind, color, half, (fx, fy)) in enumerate(specs):
        start = (fx * W + rng.uniform(-0.04, 0.04) * W, fy * H + rng.uniform(-0.04, 0.04) * H)
        angle = rng.uniform(0, 2 * np.pi)
        velocity = (speed * np.cos(angle), speed * np.sin(angle))
        leaves = scenario == "disappear" and i == 1
        if leaves:
            # to the right edge, wholly outside by 60% of the clip
            exit_frame = max(2.0, 0.6 * (n - 1))
            velocity = ((W + half[0] - start[0]) / exit_frame + 0.5, rng.uniform(-0.3, 0.3) * speed)
        shapes.append(Shape(kind, color, half, start, velocity, stripe=max(2.0, m / 14.0), leaves=leaves))
    for shape in shapes:
        x, y = shape.start
        vx, vy = shape.velocity
        for _ in range(n):
            shape.positions.append((x, y))
            x, y = x + vx, y + vy
            if not shape.leaves:  # bounce off the borders
                if x - shape.half[0] < 0 or x + shape.half[0] > W - 1:
                    vx = -vx
                    x = min(max(x, shape.half[0]), W - 1 - shape.half[0])
                if y - shape.half[1] < 0 or y + shape.half[1] > H - 1:
                    vy = -vy
                    y = min(max(y, shape.half[1]), H - 1 - shape.half[1])
    return shapes


def shape_mask(shape: Shape, t: int, W: int, H: int) -> np.ndarray:
    cx, cy = shape.positions[t]
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    dx, dy = (x - cx) / shape.half[0], (y - cy) / shape.half[1]
    if shape.kind == "ellipse":
        return dx * dx + dy * dy <= 1.0
    if shape.kind == "rectangle":
        return (np.abs(dx) <= 1.0) & (np.abs(dy) <= 1.0)
    return np.abs(dx) + np.abs(dy) <= 1.0


def background(seed: int, W: int, H: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 101)
    y, x = np.mgrid[0:H, 0:W].astype(np.float64) / max(W, H)
    channels = []
    for _ in range(3):
        fy, fx, phase = rng.uniform(2.0, 6.0), rng.uniform(2.0, 6.0), rng.uniform(0, 2 * np.pi)
        channels.append(120 + 45 * np.sin(2 * np.pi * (fy * y + fx * x) + phase)
                        + 25 * np.sin(2 * np.pi * (3 * fx * x - 2 * fy * y)))
    return np.stack(channels, axis=-1) + rng.normal(0.0, 10.0, size=(H, W, 3))


def synthetic_clip(seed: int, n: int, W: int, H: int, scenario: str) -> Tuple[List[np.ndarray], List[List[np.ndarray]], List[Shape]]:
    """Frames (uint8 [H, W, 3]) and each shape's visible mask per frame (later shapes are on top)."""
    rng = np.random.default_rng(seed + 7)
    shapes = make_shapes(rng, n, W, H, scenario)
    base = background(seed, W, H)
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    frames, visible = [], []
    for t in range(n):
        pixels = base + np.random.default_rng(seed * 1000 + t).normal(0.0, 3.0, size=(H, W, 3))
        full = [shape_mask(s, t, W, H) for s in shapes]
        for s, mask in zip(shapes, full):
            cx, cy = s.positions[t]
            stripes = np.where(((x - cx + y - cy) // s.stripe) % 2 == 0, 1.0, 0.78)
            colour = np.array(s.color, np.float64)[None, None, :] * stripes[..., None]
            pixels = np.where(mask[..., None], colour + 0.25 * (pixels - 128), pixels)
        frames.append(np.clip(np.rint(pixels), 0, 255).astype(np.uint8))
        vis = []
        for i, mask in enumerate(full):
            covered = np.zeros_like(mask)
            for later in full[i + 1:]:
                covered |= later
            vis.append(mask & ~covered)
        visible.append(vis)
    return frames, visible, shapes


# --- prompts ------------------------------------------------------------------------------------


def _inside_point(mask: np.ndarray) -> List[float]:
    """The mask's centroid, or the mask pixel nearest to it when the centroid falls outside."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        raise SystemExit("a prompted shape is not visible on its prompt frame; try another --seed")
    cx, cy = xs.mean(), ys.mean()
    if not mask[int(round(cy)), int(round(cx))]:
        k = int(np.argmin((xs - cx) ** 2 + (ys - cy) ** 2))
        cx, cy = float(xs[k]), float(ys[k])
    return [round(float(cx), 1), round(float(cy), 1)]


def _background_point(masks: Sequence[np.ndarray], W: int, H: int) -> List[float]:
    """A background pixel far from every shape (the farthest on a coarse grid)."""
    union = np.zeros_like(masks[0])
    for m in masks:
        union |= m
    ys, xs = np.nonzero(union)
    best, best_d = None, -1.0
    for gy in np.linspace(0.1, 0.9, 9):
        for gx in np.linspace(0.1, 0.9, 9):
            px, py = int(gx * (W - 1)), int(gy * (H - 1))
            if union[py, px]:
                continue
            d = float(np.min((xs - px) ** 2 + (ys - py) ** 2)) if len(xs) else 0.0
            if d > best_d:
                best, best_d = [float(px), float(py)], d
    return best


def _box(mask: np.ndarray, W: int, H: int) -> List[float]:
    ys, xs = np.nonzero(mask)
    margin = 0.03 * min(W, H)
    return [round(max(0.0, xs.min() - margin), 1), round(max(0.0, ys.min() - margin), 1),
            round(min(W - 1.0, xs.max() + margin), 1), round(min(H - 1.0, ys.max() + margin), 1)]


def scenario_prompts(args: argparse.Namespace, visible: List[List[np.ndarray]]) -> Tuple[List[Dict[str, Any]], Dict[str, np.ndarray]]:
    """prompts.json entries (insertion order = ascending object id) and the mask PNGs they name."""
    W, H, n = args.width, args.height, args.frames
    entries: List[Dict[str, Any]] = [
        {"frame": 0, "object": 1, "round": 0,
         "points": [_inside_point(visible[0][0]) + [1], _background_point(visible[0], W, H) + [0]]},
    ]
    masks: Dict[str, np.ndarray] = {}
    if args.scenario == "disappear":
        # A mask prompt: its frame's output is the mask itself (object score +10 whatever the score head
        # says). With seeded weights a prompt frame's score (no memory) sits below every tracked frame's,
        # so with points or a box no shift makes the object present there and absent later.
        name = "masks/obj2_f0.png"
        masks[name] = visible[0][1]
        entries.append({"frame": 0, "object": 2, "round": 0, "mask": name})
    else:
        entries.append({"frame": 0, "object": 2, "round": 0, "box": _box(visible[0][1], W, H)})
    if args.scenario == "all-prompts":
        frame = min(2, n - 1)
        name = f"masks/obj3_f{frame}.png"
        masks[name] = visible[frame][2]
        entries.append({"frame": frame, "object": 3, "round": 0, "mask": name})
    if args.scenario in ("standard", "all-prompts"):
        frame = min(args.correction_frame, n - 1)
        entries.append({"frame": frame, "object": 1, "round": 1, "points": [_inside_point(visible[frame][0]) + [1]]})
    return entries, masks


# --- capture of the memory path -----------------------------------------------------------------


def _np(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().float().cpu().numpy().copy()


def _bchw(seq: torch.Tensor, size: Tuple[int, int]) -> np.ndarray:
    """(HW)BC -> BCHW, as upstream reshapes its flattened features."""
    return _np(seq.permute(1, 2, 0).reshape(seq.shape[1], seq.shape[2], *size))


class Capture:
    """Wraps SAM2VideoPredictor / SAM2Base methods on the model instance (upstream code runs unchanged)
    to record, per single-frame inference (frame, object) and per preflight memory encoding, what the
    memory path computed. Arrays are kept for frames in ``keep_frames`` (None: all)."""

    def __init__(self, model: Any, keep_frames: Optional[set], fill_holes: bool) -> None:
        self.model = model
        self.keep_frames = keep_frames
        self.phase, self.round, self.call = "idle", 0, None
        self.state: Optional[Dict[str, Any]] = None
        self.records: List[Dict[str, Any]] = []
        self.preflight: List[Dict[str, Any]] = []
        self.current: Optional[Dict[str, Any]] = None
        self.last_any_res: Optional[np.ndarray] = None
        self.cc_calls = 0
        self.bf16_casts: List[Dict[str, Any]] = []
        self.cc_failures = 0
        self._originals: Dict[str, Any] = {}
        self._install(fill_holes)

    def keep(self, frame: int) -> bool:
        return self.keep_frames is None or frame in self.keep_frames

    def _wrap(self, owner: Any, name: str, make: Callable[[Callable], Callable]) -> None:
        original = getattr(owner, name)
        self._originals[(id(owner), name)] = (owner, name, original)
        setattr(owner, name, make(original))

    def remove(self) -> None:
        for owner, name, original in self._originals.values():
            if owner is sam2_misc:
                setattr(owner, name, original)
            else:
                delattr(owner, name)  # instance attribute: the class method shows again
        self._originals.clear()

    def _obj_idx(self, output_dict: Dict[str, Any]) -> int:
        return next(i for i, d in self.state["output_dict_per_obj"].items() if d is output_dict)

    def _install(self, fill_holes: bool) -> None:
        model, cap = self.model, self

        def run_single_frame_inference(original):
            def wrapper(**kw):
                frame, output_dict = kw["frame_idx"], kw["output_dict"]
                rec = {"phase": cap.phase, "round": cap.round, "call": cap.call, "frame": frame,
                       "obj_idx": cap._obj_idx(output_dict),
                       "is_init_cond_frame": bool(kw["is_init_cond_frame"]),
                       "points": 0 if kw["point_inputs"] is None else int(kw["point_inputs"]["point_labels"].shape[1]),
                       "mask_input": kw["mask_inputs"] is not None,
                       "prev_sam_mask_logits": kw.get("prev_sam_mask_logits") is not None,
                       "reverse": bool(kw["reverse"]), "run_mem_encoder": bool(kw["run_mem_encoder"]),
                       "available": {"cond": sorted(output_dict["cond_frame_outputs"]),
                                     "non_cond": sorted(output_dict["non_cond_frame_outputs"])},
                       "holes": {"components": 0, "pixels": 0}, "multimask": None, "arrays": {}}
                keep = cap.keep(frame)
                cap.current = rec
                compact, pred_masks_gpu = original(**kw)
                cap.current = None
                rec["object_score"] = float(compact["object_score_logits"].reshape(-1)[0])
                if keep:
                    a = rec["arrays"]
                    a["obj_ptr"] = _np(compact["obj_ptr"])
                    a["object_score_logits"] = _np(compact["object_score_logits"])
                    a["pred_masks"] = _np(pred_masks_gpu)
                    if compact["maskmem_features"] is not None:
                        a["maskmem_features"] = _np(compact["maskmem_features"])  # bfloat16 as stored
                        a["maskmem_pos_enc"] = _np(compact["maskmem_pos_enc"][-1])
                rec["filled_pixels_at_0.1"] = int((pred_masks_gpu == 0.1).sum()) if rec["holes"]["pixels"] else 0
                cap.records.append(rec)
                return compact, pred_masks_gpu
            return wrapper

        def track_step(original):
            def wrapper(*args, **kw):
                rec = cap.current
                if rec is not None and cap.keep(rec["frame"]):
                    feats, sizes = kw["current_vision_feats"], kw["feat_sizes"]
                    rec["arrays"]["vision_features"] = _bchw(feats[-1], sizes[-1])
                return original(*args, **kw)
            return wrapper

        def inner_track_step(original):
            def wrapper(*args, **kw):
                result = original(*args, **kw)
                rec = cap.current
                if rec is not None:
                    sam_outputs = result[1]
                    rec["multimask"] = int(sam_outputs[0].shape[1])
                    if cap.keep(rec["frame"]):
                        rec["arrays"]["low_res_multimasks"] = _np(sam_outputs[0])
                        rec["arrays"]["ious"] = _np(sam_outputs[2])
                return result
            return wrapper

        def memory_attention_forward(original):
            def wrapper(*args, **kw):
                rec = cap.current
                if kw["memory"].dtype != torch.float32:
                    # Upstream stores maskmem_features in bfloat16; torch.cat promotes them to float32 when
                    # an object pointer joins them, but a frame tracked before any past pointer exists (an
                    # object first prompted later in the clip, or reverse tracking) gets a bfloat16-only
                    # memory and, without autocast, memory attention's float32 Linear fails (sam2 issues
                    # #308, #577). The cast gives exactly what the promotion gives on every other frame.
                    kw["memory"] = kw["memory"].float()
                    cap.bf16_casts.append({"phase": cap.phase, "round": cap.round,
                                           "frame": rec["frame"] if rec else None,
                                           "obj_idx": rec["obj_idx"] if rec else None})
                    if rec is not None:
                        rec["memory_cast_from_bfloat16"] = True
                out = original(*args, **kw)
                if rec is not None:
                    memory, curr = kw["memory"], kw["curr"]
                    rec["memory_tokens"] = int(memory.shape[0])
                    rec["num_obj_ptr_tokens"] = int(kw.get("num_obj_ptr_tokens", 0))
                    if cap.keep(rec["frame"]):
                        side = int(round(out.shape[0] ** 0.5))
                        rec["arrays"]["memory"] = _np(memory)
                        rec["arrays"]["memory_pos"] = _np(kw["memory_pos"])
                        rec["arrays"]["pix_feat_with_mem"] = _bchw(out, (side, side))
                return out
            return wrapper

        def encode_new_memory(original):
            def wrapper(*args, **kw):
                features, pos = original(*args, **kw)
                target = cap.current
                if target is not None and (target.get("preflight") or cap.keep(target["frame"])):
                    target["arrays"]["maskmem_features_fp32"] = _np(features)
                return features, pos
            return wrapper

        def run_memory_encoder(original):
            def wrapper(**kw):
                frame, scores = kw["frame_idx"], kw["object_score_logits"]
                obj_idx, key, source = None, None, None
                for i, temp in cap.state["temp_output_dict_per_obj"].items():
                    for storage_key in ("cond_frame_outputs", "non_cond_frame_outputs"):
                        out = temp[storage_key].get(frame)
                        if out is not None and out["object_score_logits"] is scores:
                            obj_idx, key, source = i, storage_key, out
                entry = {"preflight": True, "round": cap.round, "frame": frame, "obj_idx": obj_idx, "storage": key,
                         "is_mask_from_pts": bool(kw["is_mask_from_pts"]),
                         "object_score": float(scores.reshape(-1)[0]), "arrays": {}}
                cap.current = entry
                features, pos = original(**kw)
                cap.current = None
                a = entry["arrays"]
                a["maskmem_features"] = _np(features)
                a["maskmem_pos_enc"] = _np(pos[-1])
                a["pred_masks"] = _np(source["pred_masks"])
                a["object_score_logits"] = _np(scores)
                cap.preflight.append(entry)
                return features, pos
            return wrapper

        def preflight(original):
            def wrapper(*args, **kw):
                cap.phase = "preflight"
                try:
                    return original(*args, **kw)
                finally:
                    cap.phase = "propagate"
            return wrapper

        def orig_video_res(original):
            def wrapper(*args, **kw):
                any_res, video_res = original(*args, **kw)
                if cap.phase == "propagate":
                    cap.last_any_res = _np(any_res)
                return any_res, video_res
            return wrapper

        self._wrap(model, "_run_single_frame_inference", run_single_frame_inference)
        self._wrap(model, "track_step", track_step)
        self._wrap(model, "_track_step", inner_track_step)
        self._wrap(model.memory_attention, "forward", memory_attention_forward)
        self._wrap(model, "_encode_new_memory", encode_new_memory)
        self._wrap(model, "_run_memory_encoder", run_memory_encoder)
        self._wrap(model, "propagate_in_video_preflight", preflight)
        self._wrap(model, "_get_orig_video_res_output", orig_video_res)

        max_area = model.fill_hole_area

        def connected_components(original):
            def wrapper(mask):
                cap.cc_calls += 1
                try:
                    labels, counts = original(mask)
                except Exception:
                    cap.cc_failures += 1
                    raise
                rec = cap.current
                if rec is not None and "holes" in rec:
                    hole = (labels > 0) & (counts <= max_area)
                    rec["holes"]["components"] += int(torch.unique(labels[hole]).numel())
                    rec["holes"]["pixels"] += int(hole.sum())
                return labels, counts
            return wrapper

        if fill_holes:
            self._wrap(sam2_misc, "get_connected_components", lambda _upstream: connected_components(connected_components_port))
        else:
            self._wrap(sam2_misc, "get_connected_components", connected_components)


# --- the run ------------------------------------------------------------------------------------


class FeatureCache:
    """forward_image results by frame content, shared by the trial runs of one export (the same
    frames, the same image encoder: the cache skips recomputing identical tensors)."""

    def __init__(self, model: Any) -> None:
        self.model, self.cache = model, {}
        original = model.forward_image

        def forward_image(img_batch):
            key = hashlib.sha256(img_batch.detach().cpu().numpy().tobytes()).hexdigest()
            if key not in self.cache:
                self.cache[key] = original(img_batch)
            out = self.cache[key]
            return {k: (list(v) if isinstance(v, list) else v) for k, v in out.items()}

        model.forward_image = forward_image

    def remove(self) -> None:
        del self.model.forward_image


def load_prompts(root: Path) -> List[Dict[str, Any]]:
    entries = json.loads((root / "prompts.json").read_text())
    for e in entries:
        e.setdefault("round", 0)
        has_points_or_box = "points" in e or "box" in e
        if has_points_or_box == ("mask" in e):
            raise SystemExit(f"prompt {e}: give points and/or box, or a mask")
    return entries


def run_tracking(model: Any, root: Path, entries: List[Dict[str, Any]], args: argparse.Namespace,
                 keep_frames: Optional[set]) -> Dict[str, Any]:
    """One init_state, every round's prompts then a propagation; everything the set needs."""
    capture = Capture(model, keep_frames, args.fill_holes)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            state = model.init_state(video_path=str(root / "frames"))
            capture.state = state
            rounds = sorted({e["round"] for e in entries})
            prompt_calls, propagations = [], []
            for r in rounds:
                capture.round = r
                capture.phase = "prompt"
                for k, e in enumerate([e for e in entries if e["round"] == r]):
                    capture.call = k
                    if "mask" in e:
                        mask = np.array(Image.open(root / e["mask"]).convert("L")) > 127
                        _, ids, masks = model.add_new_mask(state, frame_idx=e["frame"], obj_id=e["object"], mask=mask)
                    else:
                        points = labels = None
                        if e.get("points"):
                            points = np.array([p[:2] for p in e["points"]], dtype=np.float32)
                            labels = np.array([int(p[2]) for p in e["points"]], dtype=np.int32)
                        box = np.array(e["box"], dtype=np.float32) if e.get("box") else None
                        _, ids, masks = model.add_new_points_or_box(
                            state, frame_idx=e["frame"], obj_id=e["object"], points=points, labels=labels, box=box,
                            clear_old_points=True, normalize_coords=True)
                    prompt_calls.append({"round": r, "call": k, "frame": e["frame"], "object": e["object"],
                                         "obj_ids": list(ids), "video_res_masks": _np(masks)})
                capture.call = None
                capture.phase = "propagate"
                yielded = []
                for frame, ids, video_res in model.propagate_in_video(
                        state, start_frame_idx=args.start_frame, max_frame_num_to_track=args.max_frames,
                        reverse=args.reverse):
                    scores, cond = [], []
                    for obj_idx in range(len(ids)):
                        out_dict = state["output_dict_per_obj"][obj_idx]
                        is_cond = frame in out_dict["cond_frame_outputs"]
                        out = out_dict["cond_frame_outputs"][frame] if is_cond else out_dict["non_cond_frame_outputs"][frame]
                        scores.append(float(out["object_score_logits"].reshape(-1)[0]))
                        cond.append(is_cond)
                    yielded.append({"frame": frame, "obj_ids": list(ids), "logits": _np(video_res),
                                    "low_res": capture.last_any_res, "scores": scores, "cond": cond})
                propagations.append({"round": r, "frames": yielded})
            obj_ids = list(state["obj_ids"])
            cond_frames = {obj_ids[i]: sorted(state["output_dict_per_obj"][i]["cond_frame_outputs"]) for i in range(len(obj_ids))}
            non_cond_frames = {obj_ids[i]: sorted(state["output_dict_per_obj"][i]["non_cond_frame_outputs"]) for i in range(len(obj_ids))}
            first_input = _np(state["images"][propagations[-1]["frames"][0]["frame"]]) if propagations[-1]["frames"] else None
        upstream_warnings = sorted({str(w.message).split("\n")[0] for w in caught})
    finally:
        capture.remove()
    return {"capture": capture, "prompt_calls": prompt_calls, "propagations": propagations, "obj_ids": obj_ids,
            "rounds": rounds, "cond_frames": cond_frames, "non_cond_frames": non_cond_frames,
            "first_input": first_input, "warnings": upstream_warnings,
            "cc_calls": capture.cc_calls, "cc_failures": capture.cc_failures, "bf16_casts": capture.bf16_casts}


# --- the object-score bias ----------------------------------------------------------------------


def score_head_last_layer(model: Any) -> torch.nn.Linear:
    head = model.sam_mask_decoder.pred_obj_score_head
    return head if isinstance(head, torch.nn.Linear) else head.layers[-1]


def final_scores(run: Dict[str, Any]) -> Dict[int, Dict[int, float]]:
    """{frame: {object id: score}} of the last propagation."""
    return {f["frame"]: dict(zip(f["obj_ids"], f["scores"])) for f in run["propagations"][-1]["frames"]}


def fixed_scores(run: Dict[str, Any]) -> set:
    """(frame, object) whose score does not come from the score head: mask prompts used as output
    (use_mask_input_as_output_without_sam gives +-10 from the mask itself)."""
    fixed = set()
    ids = run["obj_ids"]
    for rec in run["capture"].records:
        if rec["mask_input"]:
            fixed.add((rec["frame"], ids[rec["obj_idx"]]))
    return fixed


def goal_met(scenario: str, scores: Dict[int, Dict[int, float]], fixed: set, margin: float,
             order: List[int]) -> Tuple[bool, str]:
    values = [(f, o, s) for f, per in scores.items() for o, s in per.items()]
    near = [(f, o, round(s, 4)) for f, o, s in values if abs(s) < margin]
    if near:
        return False, f"scores within +-{margin} of 0: {near}"
    if scenario == "standard":
        absent = [(f, o) for f, o, s in values if s <= 0]
        return (not absent), ("all present" if not absent else f"absent: {absent}")
    if scenario == "disappear":
        target = 2
        seq = [scores[f][target] for f in order]
        ok = len(seq) >= 3 and seq[0] > 0 and seq[1] > 0 and any(s < 0 for s in seq[2:])
        return ok, f"object {target} by frame: {[round(s, 3) for s in seq]}"
    present = sum(1 for _, _, s in values if s > 0)
    if 2 * present < len(values):
        return False, f"only {present} of {len(values)} (frame, object) outputs present"
    for f, per in scores.items():
        if any(s < 0 for s in per.values()) and any(s > 0 and (f, o) not in fixed for o, s in per.items()):
            return True, f"frame {f}: {({o: round(s, 3) for o, s in per.items()})}"
    return False, "no frame with one object absent and another (scored by the head) present"


def min_free_score(scores: Dict[int, Dict[int, float]], fixed: set) -> float:
    return min((abs(s) for f, per in scores.items() for o, s in per.items() if (f, o) not in fixed), default=0.0)


def default_scan(scenario: str, raw: Dict[int, Dict[int, float]], fixed: set, steps: int) -> List[float]:
    """Shifts to try: from a little below the smallest shift that makes any output present to a little
    above the one that makes every output present, if the scores moved by exactly the shift (they do
    on frames without memory; with memory, presence on earlier frames feeds back)."""
    free = [s for f, per in raw.items() for o, s in per.items() if (f, o) not in fixed]
    lo, hi = -max(free), -min(free)
    pad = 0.35 * (hi - lo) + 0.05
    lo, hi = lo - pad, hi + pad
    return [round(lo + (hi - lo) * k / (steps - 1), 3) for k in range(steps)]


def set_bias(layer: torch.nn.Linear, base: torch.Tensor, shift: float) -> None:
    with torch.no_grad():
        layer.bias.copy_(base + shift)


def choose_and_run(model: Any, root: Path, entries: List[Dict[str, Any]], args: argparse.Namespace,
                   keep_frames: Optional[set]) -> Tuple[Dict[str, Any], float, Dict[str, Any]]:
    """The run the set is written from, and the object-score shift it ran with. Auto: trial runs
    without dumps pick the shift (standard: the smallest of a few that keeps every output present;
    otherwise the one of a scan that meets the scenario's goal with the largest smallest |score|),
    then the final run repeats it with dumps and must give the same scores."""
    layer = score_head_last_layer(model)
    if args.object_score_gain != 1.0:
        with torch.no_grad():
            layer.weight.mul_(args.object_score_gain)
    base = layer.bias.detach().clone()
    log: Dict[str, Any] = {"trials": [], "gain": args.object_score_gain}

    def trial(shift: float, keep: Optional[set], quiet: bool = False) -> Dict[str, Any]:
        set_bias(layer, base, shift)
        start = time.time()
        run = run_tracking(model, root, entries, args, keep)
        run["seconds"] = time.time() - start
        scores = final_scores(run)
        order = [f["frame"] for f in run["propagations"][-1]["frames"]]
        fixed = fixed_scores(run)
        ok, why = goal_met(args.scenario, scores, fixed, args.score_margin, order)
        run["goal"], run["min_abs"] = (ok, why), min_free_score(scores, fixed)
        signs = " ".join("".join("+" if scores[f][o] > 0 else "-" for o in scores[f]) for f in order)
        print(f"trial B={shift:+.3f} ({run['seconds']:.1f} s): {'goal met' if ok else 'no'}; min |score| "
              f"{run['min_abs']:.3f}; presence by frame {signs}" + ("" if ok else f"; {why}"), flush=True)
        if not quiet:
            for f in order:
                print(f"   frame {f}: " + ", ".join(f"obj {o} {s:+.4f}" for o, s in scores[f].items()), flush=True)
        log["trials"].append({"shift": shift, "goal_met": ok, "why": why, "min_abs_score": run["min_abs"],
                              "scores": {str(f): {str(o): s for o, s in scores[f].items()} for f in order}})
        return run

    if args.object_score_bias is not None:
        log["mode"] = "explicit"
        return trial(args.object_score_bias, keep_frames), args.object_score_bias, log

    log["mode"] = f"auto ({args.scenario})"
    dry = trial(0.0, set())
    raw = final_scores(dry)
    fixed = fixed_scores(dry)
    if args.bias_scan:
        lo, hi, step = (float(v) for v in args.bias_scan.split(","))
        grid = [round(v, 3) for v in np.arange(lo, hi + step / 2, step)]
    elif args.scenario == "standard":
        low = min(s for f, per in raw.items() for o, s in per.items() if (f, o) not in fixed)
        first = round(max(2.0, args.score_margin + 1.0 - low), 3)
        grid = [first, round(first + 1.0, 3), round(first + 2.5, 3)]
    else:
        grid = default_scan(args.scenario, raw, fixed, args.bias_steps)
    best: Optional[Tuple[float, float]] = None
    for shift in grid:
        run = trial(shift, set(), quiet=True)
        if run["goal"][0]:
            if best is None or run["min_abs"] > best[1] + 1e-9:
                best = (shift, run["min_abs"])
            if args.scenario == "standard":
                break
    if best is None:
        raise SystemExit(f"no object-score shift in {grid} met the {args.scenario} goal; give --object-score-bias, "
                         "--bias-scan LO,HI,STEP, --object-score-gain or another --seed")
    shift = best[0]
    final = trial(shift, keep_frames)
    previous = next(t for t in log["trials"][:-1] if t["shift"] == shift)
    if previous["scores"] != log["trials"][-1]["scores"]:
        raise RuntimeError("the final run's scores differ from its trial's: the run is not deterministic")
    return final, shift, log



# --- writing ------------------------------------------------------------------------------------


def versions() -> Dict[str, Optional[str]]:
    def version(dist: str) -> Optional[str]:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {"python": platform.python_version(), "torch": torch.__version__, "sam2": version("sam2"),
            "numpy": np.__version__, "pillow": version("pillow"), "hydra-core": version("hydra-core"),
            "scipy": version("scipy")}


def stem(frame: int) -> str:
    return f"{frame:05d}"


def memory_layout(model: Any, rec: Dict[str, Any], num_frames: int) -> Optional[Dict[str, Any]]:
    """Which stored outputs a non-initial frame's memory is built from, in order, from the outputs the
    object had when the frame ran (SAM2Base._prepare_memory_conditioned_features' selection with
    max_cond_frames_in_attn -1 and stride memory_temporal_stride_for_eval), checked against the
    number of memory tokens memory attention got."""
    if "memory_tokens" not in rec:
        return None
    f, reverse = rec["frame"], rec["reverse"]
    cond, non_cond = rec["available"]["cond"], set(rec["available"]["non_cond"])
    layout: Dict[str, Any] = {"cond_frames_t_pos_0": list(cond), "previous": [], "object_pointers": []}
    if model.max_cond_frames_in_attn != -1 and len(cond) > model.max_cond_frames_in_attn:
        layout["note"] = "max_cond_frames_in_attn limits the cond frames; selection not listed"
        return layout
    r = model.memory_temporal_stride_for_eval
    for t_pos in range(1, model.num_maskmem):
        t_rel = model.num_maskmem - t_pos
        if t_rel == 1:
            prev = f + 1 if reverse else f - 1
        elif not reverse:
            prev = ((f - 2) // r) * r - (t_rel - 2) * r
        else:
            prev = -(-(f + 2) // r) * r + (t_rel - 2) * r
        if prev in non_cond:
            layout["previous"].append({"t_pos": t_pos, "frame": prev})
    if model.use_obj_ptrs_in_encoder:
        max_ptrs = min(num_frames, model.max_obj_ptrs_in_encoder)
        for t in cond:
            if not model.only_obj_ptrs_in_the_past_for_eval or (t >= f if reverse else t <= f):
                pos = (f - t) * (-1 if reverse else 1) if model.use_signed_tpos_enc_to_obj_ptrs else abs(f - t)
                layout["object_pointers"].append({"frame": t, "tpos": pos})
        for t_diff in range(1, max_ptrs):
            t = f + t_diff if reverse else f - t_diff
            if t < 0 or t >= num_frames:
                break
            if t in non_cond:
                layout["object_pointers"].append({"frame": t, "tpos": t_diff})
    hw = model.sam_image_embedding_size ** 2
    split = model.hidden_dim // model.mem_dim if model.mem_dim < model.hidden_dim else 1
    ptr_tokens = len(layout["object_pointers"]) * split
    expected = (len(cond) + len(layout["previous"])) * hw + ptr_tokens
    layout["tokens_per_pointer"] = split
    layout["check"] = (expected == rec["memory_tokens"] and ptr_tokens == rec["num_obj_ptr_tokens"])
    if not layout["check"]:
        raise RuntimeError(f"memory layout of frame {f} does not add up: {expected} vs {rec['memory_tokens']}")
    return layout


def write_state_dict(model: Any, out: SetDir, formats: List[str], source: str) -> Dict[str, str]:
    files = {}
    state = model.state_dict()
    torch.save({"model": state}, out.path("checkpoint.pt"))
    files["pt"] = "checkpoint.pt"
    if "safetensors" in formats:
        from safetensors.torch import save_file

        save_file({k: v.detach().contiguous().clone() for k, v in state.items()}, str(out.path("checkpoint.safetensors")),
                  metadata={"format": "pt"})  # one key: safetensors writes a map's keys in no fixed order
        files["safetensors"] = "checkpoint.safetensors"
    if "h5" in formats:
        import h5py

        with h5py.File(out.path("checkpoint.h5"), "w") as f:
            f.attrs["source"] = source
            for key in sorted(state):
                f.create_dataset(key, data=state[key].detach().float().cpu().numpy())
        files["h5"] = "checkpoint.h5"
    return files


def write_set(out: SetDir, args: argparse.Namespace, model: Any, composed: Any, run: Dict[str, Any], shift: float,
              bias_log: Dict[str, Any], entries: List[Dict[str, Any]], cc_check: Optional[Dict[str, Any]],
              frames_rgb: Dict[int, np.ndarray]) -> Dict[str, Any]:
    capture: Capture = run["capture"]
    obj_ids = run["obj_ids"]
    if obj_ids != sorted(obj_ids):
        raise SystemExit(f"objects were inserted out of id order: {obj_ids}")
    final = run["propagations"][-1]
    final_round = final["round"]
    frames = final["frames"]
    num_frames = args.frames

    # per-frame outputs
    object_scores = {}
    for f in frames:
        s = stem(f["frame"])
        out.save_npy(f"reference/logits/{s}.npy", f["logits"].astype(np.float32))
        out.save_npy(f"reference/object_scores/{s}.npy", np.array(f["scores"], np.float32))
        out.save_npy(f"reference/low_res/{s}.npy", f["low_res"].astype(np.float32))
        object_scores[s] = {str(o): sc for o, sc in zip(f["obj_ids"], f["scores"])}
        assert np.isfinite(f["logits"]).all() and np.isfinite(f["low_res"]).all()
    if frames:
        first = frames[0]["frame"]
        out.save_npy(f"reference/decoded/{stem(first)}.npy", frames_rgb[first])
        if args.input_dump:
            out.save_npy(f"reference/input/{stem(first)}.npy", run["first_input"].astype(np.float32))

    # which record made each (frame, object) output of the last propagation
    def latest(pred: Callable[[Dict[str, Any]], bool]) -> Optional[Dict[str, Any]]:
        found = [r for r in capture.records if pred(r)]
        return found[-1] if found else None

    sources: Dict[Tuple[int, int], Dict[str, Any]] = {}
    for f in frames:
        for obj_idx, is_cond in enumerate(f["cond"]):
            if is_cond:
                rec = latest(lambda r: r["phase"] == "prompt" and r["frame"] == f["frame"] and r["obj_idx"] == obj_idx
                             and (r["is_init_cond_frame"] or model.add_all_frames_to_correct_as_cond))
            else:
                rec = latest(lambda r: r["phase"] == "propagate" and r["round"] == final_round
                             and r["frame"] == f["frame"] and r["obj_idx"] == obj_idx)
            assert rec is not None, (f["frame"], obj_idx)
            sources[(f["frame"], obj_idx)] = rec

    dump_frames = [f["frame"] for f in frames if capture.keep(f["frame"])]
    dumps = []
    for frame in dump_frames:
        for obj_idx, obj_id in enumerate(obj_ids):
            rec = sources[(frame, obj_idx)]
            folder = f"reference/modules/{stem(frame)}/object_{obj_id}"
            names = []
            for name in MODULE_NAMES:
                array = rec["arrays"].get(name)
                if array is not None:
                    out.save_npy(f"{folder}/{name}.npy", array.astype(np.float32))
                    names.append(name)
            dumps.append({
                "frame": frame, "stem": stem(frame), "object": obj_id, "folder": folder, "names": names,
                "source": f"{rec['phase']} round {rec['round']}" + (f" call {rec['call']}" if rec["call"] is not None else ""),
                "cond_frame": rec["phase"] == "prompt", "is_init_cond_frame": rec["is_init_cond_frame"],
                "points": rec["points"], "mask_input": rec["mask_input"], "prev_sam_mask_logits": rec["prev_sam_mask_logits"],
                "multimask_output": rec["multimask"], "object_score": rec["object_score"],
                "memory_tokens": rec.get("memory_tokens"), "num_obj_ptr_tokens": rec.get("num_obj_ptr_tokens"),
                "memory_layout": memory_layout(model, rec, num_frames),
                "memory_cast_from_bfloat16": rec.get("memory_cast_from_bfloat16", False),
                "holes_filled": rec["holes"],
            })

    # preflight memory encodings (the prompt frames), latest per (frame, object)
    preflight = {}
    for entry in capture.preflight:
        preflight[(entry["frame"], entry["obj_idx"])] = entry
    preflight_rows = []
    for (frame, obj_idx), entry in sorted(preflight.items()):
        obj_id = obj_ids[entry["obj_idx"]]
        folder = f"reference/modules/{stem(frame)}/object_{obj_id}"
        names = []
        for name in PREFLIGHT_NAMES:
            array = entry["arrays"].get(name)
            if array is not None:
                out.save_npy(f"{folder}/preflight_{name}.npy", array.astype(np.float32))
                names.append(f"preflight_{name}")
        replaced = entry["storage"] == "non_cond_frame_outputs" and any(
            r["phase"] == "propagate" and r["round"] >= entry["round"] and r["frame"] == frame and r["obj_idx"] == obj_idx
            for r in capture.records)
        preflight_rows.append({"frame": frame, "stem": stem(frame), "object": obj_id, "round": entry["round"],
                               "stored_as": entry["storage"], "is_mask_from_pts": entry["is_mask_from_pts"],
                               "object_score": entry["object_score"], "folder": folder, "names": names,
                               "replaced_by_propagation": replaced})

    # what each add_* call returned; module dumps for calls whose output the last propagation did not use
    used = {id(r) for r in sources.values() if r is not None}
    calls = []
    for call in run["prompt_calls"]:
        name = f"r{call['round']}_c{call['call']}"
        rec = latest(lambda r: r["phase"] == "prompt" and r["round"] == call["round"] and r["call"] == call["call"])
        row = {"name": name, "round": call["round"], "call": call["call"], "frame": call["frame"], "object": call["object"],
               "obj_ids": call["obj_ids"], "video_res_masks": None,
               "is_init_cond_frame": rec["is_init_cond_frame"], "points": rec["points"], "mask_input": rec["mask_input"],
               "prev_sam_mask_logits": rec["prev_sam_mask_logits"], "multimask_output": rec["multimask"],
               "object_score": rec["object_score"], "holes_filled": rec["holes"],
               "stored_as": "cond_frame_outputs" if (rec["is_init_cond_frame"] or model.add_all_frames_to_correct_as_cond)
               else "non_cond_frame_outputs",
               "output_used_by_last_propagation": id(rec) in used}
        if id(rec) not in used:
            # the last propagation did not use this output (a correction on a tracked frame, stored as a
            # non-cond output and recomputed): what the call returned and computed is kept here
            row["video_res_masks"] = out.save_npy(f"reference/prompt_calls/{name}.npy",
                                                  call["video_res_masks"].astype(np.float32))
        if id(rec) not in used and rec["arrays"]:
            folder = f"reference/prompt_calls/{name}/object_{call['object']}"
            row["module_names"] = []
            for module in MODULE_NAMES:
                array = rec["arrays"].get(module)
                if array is not None:
                    out.save_npy(f"{folder}/{module}.npy", array.astype(np.float32))
                    row["module_names"].append(module)
            row["memory_tokens"] = rec.get("memory_tokens")
            row["num_obj_ptr_tokens"] = rec.get("num_obj_ptr_tokens")
            row["memory_layout"] = memory_layout(model, rec, num_frames)
        calls.append(row)

    # rounds: scores by frame, and how far the last propagation is from the one before
    rounds = []
    for prop in run["propagations"]:
        rounds.append({"round": prop["round"], "frames": [stem(f["frame"]) for f in prop["frames"]],
                       "object_scores": {stem(f["frame"]): {str(o): s for o, s in zip(f["obj_ids"], f["scores"])}
                                         for f in prop["frames"]},
                       "cond": {stem(f["frame"]): [o for o, c in zip(f["obj_ids"], f["cond"]) if c] for f in prop["frames"]}})
    if len(run["propagations"]) > 1:
        prev = {f["frame"]: f for f in run["propagations"][-2]["frames"]}
        diffs = {}
        for f in frames:
            p = prev.get(f["frame"])
            if p is not None and p["logits"].shape == f["logits"].shape:
                diffs[stem(f["frame"])] = float(np.abs(p["logits"] - f["logits"]).max())
        rounds[-1]["logits_max_abs_diff_vs_previous_round"] = diffs

    holes_final = {}
    for (frame, obj_idx), rec in sources.items():
        holes_final.setdefault(stem(frame), {})[str(obj_ids[obj_idx])] = rec["holes"] if rec is not None else None
    holes_all = {"components": sum(r["holes"]["components"] for r in capture.records),
                 "pixels": sum(r["holes"]["pixels"] for r in capture.records)}

    cfg = sam2_configs.swift_config(model)
    cfg["video"] = sam2_configs.video_config(model, composed)
    out.save_json("config.json", cfg)
    source = f"{EXPORTER_MARK} --model {args.model} " + (f"--checkpoint {args.checkpoint.name}" if args.checkpoint else f"--seed {args.seed}")
    weights = write_state_dict(model, out, args.formats, source)

    head = score_head_last_layer(model)
    reference = {
        "exporter_script": EXPORTER_MARK,
        "model": args.model,
        "hydra_config": sam2_configs.CONFIGS[args.model]["hydra"],
        "predictor": "sam2.sam2_video_predictor.SAM2VideoPredictor (sam2.build_sam.build_sam2_video_predictor overrides)",
        "seed": None if args.checkpoint else args.seed,
        "checkpoint_source": str(args.checkpoint) if args.checkpoint else None,
        "weights": weights,
        "versions": versions(),
        "command": " ".join(["converters/export_sam2_video.py"] + [a for a in _argv_without_out(sys.argv[1:])]),
        "threads": torch.get_num_threads(),
        "scenario": args.scenario,
        "width": args.width, "height": args.height, "frame_size": [args.width, args.height],
        "frame_count": num_frames,
        "frames_dir": "frames",
        "jpeg": {"quality": JPEG_QUALITY, "subsampling": "4:4:4",
                 "loader": "PIL Image.open(...).convert('RGB').resize((S, S)) (bicubic), /255, ImageNet mean/std"},
        "image_size": model.image_size,
        "frames": [stem(f["frame"]) for f in frames],
        "objects": obj_ids,
        "rounds": len(run["rounds"]),
        "prompts": "prompts.json",
        "reverse": bool(args.reverse), "start_frame": args.start_frame, "max_frames": args.max_frames,
        "fill_holes": bool(args.fill_holes),
        "fill_hole_area": model.fill_hole_area,
        "add_all_frames_to_correct_as_cond": bool(model.add_all_frames_to_correct_as_cond),
        "non_overlap_masks": bool(model.non_overlap_masks),
        "object_score_bias_shift": float(shift),
        "object_score_gain": float(bias_log["gain"]),
        "object_score_bias": {"shift": float(shift), "mode": bias_log["mode"], "weight_gain": float(bias_log["gain"]),
                              "layer": "sam_mask_decoder.pred_obj_score_head" + ("" if isinstance(model.sam_mask_decoder.pred_obj_score_head, torch.nn.Linear)
                                                                                else f".layers.{len(model.sam_mask_decoder.pred_obj_score_head.layers) - 1}") + ".bias",
                              "bias_after_shift": [float(v) for v in head.bias.detach().reshape(-1)],
                              "trials": bias_log["trials"]},
        "object_scores": object_scores,
        "cond_frames": {str(k): v for k, v in run["cond_frames"].items()},
        "non_cond_frames": {str(k): v for k, v in run["non_cond_frames"].items()},
        "rounds_detail": rounds,
        "prompt_calls": calls,
        "dumps": dumps,
        "dump_names": list(MODULE_NAMES),
        "preflight_dumps": preflight_rows,
        "holes_filled": {"last_propagation_outputs": holes_final, "all_single_frame_inferences": holes_all,
                         "connected_components_calls": run["cc_calls"], "connected_components_failures": run["cc_failures"]},
        "upstream_warnings": run["warnings"],
        "patches": {
            "memory_bfloat16_to_float32": {
                "what": ("memory attention's memory cast to float32 when it is all bfloat16 (maskmem_features "
                         "without any object pointer); upstream fails there on CPU without autocast (sam2 #308, #577); "
                         "elsewhere torch.cat already promotes it to float32, so the values are the same"),
                "applied": [{"phase": c["phase"], "round": c["round"], "frame": c["frame"],
                             "object": None if c["obj_idx"] is None else obj_ids[c["obj_idx"]]} for c in run["bf16_casts"]],
            },
        },
        "tolerances": {"atol": 1e-4, "rtol": 1e-4},
    }
    if args.fill_holes:
        reference["connected_components"] = "8-connectivity"
        reference["fill_holes_how"] = ("sam2.utils.misc.get_connected_components replaced by a port of sam2/csrc/"
                                       "connected_components.cu (block union-find, 8-connected; labels = smallest 2x2-block "
                                       "index + 1, counts = component area), run on `mask <= 0`; holes are background "
                                       "components of area <= fill_hole_area, set to 0.1")
        reference["connected_components_port_check"] = cc_check
    else:
        reference["fill_holes_how"] = ("upstream as on a CPU-only install: get_connected_components cannot import sam2._C, "
                                       "fill_holes_in_mask_scores catches it, warns and returns the scores unchanged")
    out.save_json("reference.json", reference)
    write_readme(out, args, reference)
    return reference


def _argv_without_out(argv: List[str]) -> List[str]:
    result, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--out":
            skip = True
            continue
        if a.startswith("--out="):
            continue
        result.append(a)
    return result


def write_readme(out: SetDir, args: argparse.Namespace, ref: Dict[str, Any]) -> None:
    weights = f"checkpoint `{args.checkpoint.name}`" if args.checkpoint else f"seeded random weights (seed {args.seed})"
    text = f"""# SAM 2 video reference set: `{args.model}`, scenario `{args.scenario}`

Generated by `{EXPORTER_MARK}` (do not edit; rerun it):

    python {ref['command']} --out <this folder>

Upstream `sam2` {ref['versions']['sam2']} `SAM2VideoPredictor` built as `build_sam2_video_predictor` builds it,
{weights}; the object-score head's last layer: weights times {ref['object_score_gain']:g}, bias shifted by
{ref['object_score_bias_shift']:+g} (both in the saved weights).
{ref['frame_count']} frames {args.width}x{args.height} (`frames/`), prompts in `prompts.json` ({ref['rounds']} round(s)),
objects {ref['objects']}; holes filled: {ref['fill_holes']}. `reference.json` describes the run and every file:
`reference/logits|object_scores|low_res/<stem>.npy` per frame of the last propagation, module dumps of the
memory path under `reference/modules/<stem>/object_<id>/`.
"""
    out.path("README.md").write_text(text)


# --- checking a written set --------------------------------------------------------------------


def set_predictor_switches(model: Any, corrections_as_conditioning: bool, non_overlap_masks: bool) -> None:
    """SAM2VideoPredictor's switches build_sam2_video_predictor leaves at their defaults (False), set as
    its constructor arguments would set them; config.json's "video" then records them (video_config)."""
    model.add_all_frames_to_correct_as_cond = bool(corrections_as_conditioning)
    model.non_overlap_masks = bool(non_overlap_masks)


def verify_set(root: Path, rerun: bool = True) -> Dict[str, Any]:
    """Reload a set: shapes, finiteness, scores against reference.json, the checkpoint formats against
    each other, and (``rerun``) upstream's tracking again from the set's own checkpoint, config and
    prompts, whose outputs must equal the files bit for bit."""
    ref = json.loads((root / "reference.json").read_text())
    cfg = json.loads((root / "config.json").read_text())
    n, H, W, S = len(ref["objects"]), ref["height"], ref["width"], ref["image_size"]
    report: Dict[str, Any] = {"set": str(root), "frames": len(ref["frames"]), "objects": ref["objects"]}
    for s in ref["frames"]:
        logits = np.load(root / "reference/logits" / f"{s}.npy")
        low = np.load(root / "reference/low_res" / f"{s}.npy")
        scores = np.load(root / "reference/object_scores" / f"{s}.npy")
        assert logits.shape == (n, 1, H, W) and logits.dtype == np.float32, (s, logits.shape)
        assert low.shape == (n, 1, S // 4, S // 4) and scores.shape == (n,), (s, low.shape, scores.shape)
        assert np.isfinite(logits).all() and np.isfinite(low).all() and np.isfinite(scores).all()
        expected = [ref["object_scores"][s][str(o)] for o in ref["objects"]]
        assert np.array_equal(scores, np.array(expected, np.float32)), s
    for d in ref["dumps"] + ref["preflight_dumps"]:
        for name in d["names"]:
            array = np.load(root / d["folder"] / f"{name}.npy")
            assert np.isfinite(array).all(), (d["folder"], name)
    state = torch.load(root / "checkpoint.pt", map_location="cpu", weights_only=True)["model"]
    if (root / "checkpoint.safetensors").exists():
        from safetensors.torch import load_file

        other = load_file(str(root / "checkpoint.safetensors"))
        assert list(other) == list(state) or sorted(other) == sorted(state)
        assert all(torch.equal(other[k], state[k]) for k in state), "safetensors differs from .pt"
        report["safetensors"] = "equal to checkpoint.pt"
    if (root / "checkpoint.h5").exists():
        import h5py

        with h5py.File(root / "checkpoint.h5", "r") as f:
            assert sorted(f.keys()) == sorted(state)
            assert all(f[k].dtype == np.float32 and np.array_equal(f[k][()], state[k].float().numpy()) for k in state)
        report["h5"] = "equal to checkpoint.pt (float32, one dataset per key)"
    model, composed = build_sam2.build_video(ref["model"])
    model.load_state_dict(state, strict=True)
    model.eval()
    set_predictor_switches(model, cfg["video"]["add_all_frames_to_correct_as_cond"], cfg["video"]["non_overlap_masks"])
    assert sam2_configs.swift_config(model) == {k: v for k, v in cfg.items() if k != "video"}
    assert sam2_configs.video_config(model, composed) == cfg["video"]
    report["checkpoint"] = f"loads strictly into {ref['model']} ({len(state)} tensors); config.json matches the model"
    if rerun:
        args = argparse.Namespace(fill_holes=ref["fill_holes"], start_frame=ref["start_frame"],
                                  max_frames=ref["max_frames"], reverse=ref["reverse"])
        with torch.no_grad():
            run = run_tracking(model, root, load_prompts(root), args, set())
        final = run["propagations"][-1]["frames"]
        assert [stem(f["frame"]) for f in final] == ref["frames"]
        worst = 0.0
        for f in final:
            s = stem(f["frame"])
            same = (np.array_equal(f["logits"], np.load(root / "reference/logits" / f"{s}.npy"))
                    and np.array_equal(f["low_res"], np.load(root / "reference/low_res" / f"{s}.npy"))
                    and np.array_equal(np.array(f["scores"], np.float32), np.load(root / "reference/object_scores" / f"{s}.npy")))
            if not same:
                worst = max(worst, float(np.abs(f["logits"] - np.load(root / "reference/logits" / f"{s}.npy")).max()))
        report["rerun_from_checkpoint"] = "bit-identical" if worst == 0.0 else f"differs, logits max abs {worst}"
        if worst:
            raise SystemExit(report)
    return report


# --- main ---------------------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--verify":
        reports = []
        for path in argv[1:]:
            report = verify_set(Path(path))
            print(json.dumps(report, indent=1), flush=True)
            reports.append(report)
        return {"verified": reports}
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    started = time.time()
    model = build_sam2.weighted_model(args.model, args.seed, args.checkpoint, video=True)
    composed = build_sam2.video_composed(args.model)  # the config it was built from (the RoPE grid sizes)
    set_predictor_switches(model, args.corrections_as_conditioning, args.non_overlap_masks)
    grid = model.image_size // model.backbone_stride
    total_stride = model.image_size // sam2_configs.video_config(model, composed)["memory_encoder"]["mask_downsampler"]["total_stride"]
    if total_stride != grid:
        raise SystemExit(f"--model {args.model}: the memory encoder's mask grid ({total_stride}) is not the image "
                         f"feature grid ({grid}); the model cannot track (use tiny_video for the tiny widths)")
    if args.fill_holes:
        cc_check = check_connected_components_port(args.seed)
        print(f"connected components port: {cc_check['result']} ({cc_check['cases']} random masks)", flush=True)
    else:
        cc_check = None

    out = SetDir(args.out)
    frames, visible, _shapes = synthetic_clip(args.seed, args.frames, args.width, args.height, args.scenario)
    for t, frame in enumerate(frames):
        Image.fromarray(frame).save(out.path(f"frames/{stem(t)}.jpg"), quality=JPEG_QUALITY, subsampling=0)
    entries, masks = scenario_prompts(args, visible)
    for name, mask in masks.items():
        Image.fromarray(np.where(mask, 255, 0).astype(np.uint8)).save(out.path(name))
    out.save_json("prompts.json", entries)
    entries = load_prompts(out.root)
    frames_rgb = {t: np.array(Image.open(out.root / "frames" / f"{stem(t)}.jpg").convert("RGB")) for t in range(args.frames)}

    keep = None if args.dump_frames is None else set(args.dump_frames)
    cache = None if args.no_feature_cache else FeatureCache(model)
    try:
        run, shift, bias_log = choose_and_run(model, out.root, entries, args, keep)
    finally:
        if cache:
            cache.remove()
    print(f"object-score bias shift: {shift:+.3f} ({bias_log['mode']})", flush=True)
    ref = write_set(out, args, model, composed, run, shift, bias_log, entries, cc_check, frames_rgb)
    total = time.time() - started
    summary = {"out": str(out.root), "shift": shift, "frames": ref["frames"], "objects": ref["objects"],
               "object_scores": ref["object_scores"], "cond_frames": ref["cond_frames"],
               "holes_filled": ref["holes_filled"]["all_single_frame_inferences"],
               "last_round_vs_previous": ref["rounds_detail"][-1].get("logits_max_abs_diff_vs_previous_round"),
               "warnings": ref["upstream_warnings"], "seconds": round(total, 1),
               "bytes": sum(p.stat().st_size for p in out.root.rglob("*") if p.is_file())}
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()

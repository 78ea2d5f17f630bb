#!/usr/bin/env python3
"""Writes the committed fixtures of Tests/SAMEverythingTests: what upstream's own functions return.

    /work/venv/bin/python converters/make_amg_fixtures.py --out Tests/SAMEverythingTests/Fixtures

Every expected value comes from the upstream function itself (segment_anything.utils.amg; where
sam2.utils.amg has the same function, the script asserts both agree), torchvision.ops (nms,
batched_nms), pycocotools.mask (frPyObjects / encode / decode) and cv2
(connectedComponentsWithStats). Seeded (numpy default_rng(0), torch.manual_seed(0)), so the files
are reproducible byte for byte on one version set (converters/requirements.txt).

Float32 values in JSON are written as their uint32 bit patterns (so no decimal round trip is
involved); arrays go to .npy files and the JSON says where each case's slice starts.

Files (all in --out):
    grids.json, grids.npy            build_point_grid / build_all_layer_point_grids (float64 [N, 2])
    crop_boxes.json                  generate_crop_boxes (and 1 / box_area of a few sets, float32)
    stability.json, stability_logits.npy (float32 [K, H, W]), stability_binary.npy (uint8)
                                     calculate_stability_score, and logits > mask_threshold
    mask_boxes.json, mask_boxes.npy  batched_mask_to_box (uint8 masks [K, H, W])
    nms.json, nms_boxes.npy (float32 [N, 4]), nms_scores.npy (float32 [N]), nms_categories.npy (int64 [N])
                                     torchvision.ops.nms and batched_nms
    rle.json, rle_masks.npy (uint8, flat)
                                     mask_to_rle_pytorch, area_from_rle, rle_to_mask, coco_encode_rle,
                                     pycocotools decode, uncrop_masks followed by mask_to_rle_pytorch
    small_regions.json, small_regions_masks.npy (uint8 [K, H, W])
                                     remove_small_regions (both modes), cv2's labels (order and sizes)
    crop_geometry.json               is_box_near_crop_edge, uncrop_boxes_xyxy, uncrop_points, box_xyxy_to_xywh
"""

import argparse
import json
import math
import os

import cv2
import numpy as np
import torch
import torchvision
from pycocotools import mask as mask_utils

import segment_anything.utils.amg as sam_amg
import sam2.utils.amg as sam2_amg


def f32_bits(values):
    """float32 values as their uint32 bit patterns (ints), for exact JSON."""
    return np.asarray(values, dtype=np.float32).reshape(-1).view(np.uint32).astype(np.int64).tolist()


def write_json(out, name, obj):
    with open(os.path.join(out, name), "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")


def both(name, *args, **kwargs):
    """Calls segment_anything's and sam2's version of an amg function and checks they agree."""
    a = getattr(sam_amg, name)(*args, **kwargs)
    b = getattr(sam2_amg, name)(*args, **kwargs)
    assert_same(a, b, name)
    return a


def assert_same(a, b, name):
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert np.array_equal(a.numpy(), b.numpy(), equal_nan=a.is_floating_point()), name
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), name
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), name
        for x, y in zip(a, b):
            assert_same(x, y, name)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), name
        for k in a:
            assert_same(a[k], b[k], name)
    else:
        assert a == b, name


def blobby_mask(rng, h, w, density=0.5, blur=3.0, salt=0.0):
    """A random mask of smooth blobs (blurred noise, thresholded), optionally with salt pixels."""
    noise = rng.standard_normal((h, w)).astype(np.float32)
    smooth = cv2.GaussianBlur(noise, (0, 0), blur)
    cut = np.quantile(smooth, 1 - density)
    mask = smooth > cut
    if salt > 0:
        mask ^= rng.random((h, w)) < salt
    return mask


# ---------------------------------------------------------------------------------------------
def grids(out):
    cases = [(1, 0, 1), (2, 0, 1), (3, 0, 1), (5, 1, 1), (7, 0, 1), (16, 2, 2), (32, 3, 2), (20, 1, 2),
             (32, 2, 3), (10, 1, 4), (33, 1, 2), (24, 1, 5)]
    arrays, entries, offset = [], [], 0
    for n, layers, scale in cases:
        g = both("build_all_layer_point_grids", n, layers, scale)
        layer_entries = []
        for layer in g:
            assert layer.dtype == np.float64 and layer.shape[1] == 2
            layer_entries.append({"offset": offset, "count": int(layer.shape[0])})
            arrays.append(layer)
            offset += layer.shape[0]
        entries.append({"points_per_side": n, "layers": layers, "scale_per_layer": scale, "grids": layer_entries})
        # build_point_grid alone equals layer 0
        assert np.array_equal(both("build_point_grid", n), g[0])
    np.save(os.path.join(out, "grids.npy"), np.concatenate(arrays, axis=0))
    write_json(out, "grids.json", {"cases": entries})


def crop_boxes(out):
    sizes = [(85, 128), (128, 85), (1365, 2048), (2048, 1365), (1024, 1024), (1, 1), (3, 1000), (1500, 2250),
             (480, 640), (777, 301), (2, 2), (17, 9)]
    overlaps = [512 / 1500, 0.0, 0.5, 0.1, 1.0, 0.25, 0.999]
    entries = []
    for (h, w) in sizes:
        for layers in range(0, 3):
            for overlap in overlaps:
                boxes, idxs = both("generate_crop_boxes", (h, w), layers, overlap)
                entries.append({"height": h, "width": w, "layers": layers, "overlap_ratio": overlap,
                                "boxes": [v for b in boxes for v in b], "layer_indices": idxs})
    for (h, w, layers, overlap) in [(1365, 2048, 3, 512 / 1500), (85, 128, 3, 512 / 1500), (1500, 2250, 4, 0.3)]:
        boxes, idxs = both("generate_crop_boxes", (h, w), layers, overlap)
        # The cross-crop NMS scores: 1 / box_area of int64 crop boxes (float32).
        reciprocal = 1 / torchvision.ops.box_area(torch.tensor(boxes, dtype=torch.int64))
        assert reciprocal.dtype == torch.float32
        entries.append({"height": h, "width": w, "layers": layers, "overlap_ratio": overlap,
                        "boxes": [v for b in boxes for v in b], "layer_indices": idxs,
                        "reciprocal_area_bits": f32_bits(reciprocal.numpy())})
    write_json(out, "crop_boxes.json", {"cases": entries})


def stability(out, rng):
    k, h, w = 12, 24, 37
    logits = (rng.standard_normal((k, h, w)) * 3).astype(np.float32)
    cases = [(0.0, 1.0), (0.0, 0.5), (0.5, 0.95), (-1.0, 0.25), (0.1, 0.2), (0.0, 0.0), (0.0, -1.0), (0.3, 0.7)]
    # Sprinkle the exact float32 thresholds and their neighbours into every mask.
    special = []
    for t, o in cases:
        for v in (t + o, t - o, t):
            f = np.float32(v)
            special += [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    special = np.array(special, dtype=np.float32)
    flat = logits.reshape(k, -1)
    for i in range(k):
        where = rng.choice(h * w, size=len(special) * 2, replace=False)
        flat[i, where] = np.concatenate([special, special])
    # mask 0 entirely at one threshold, mask 1 constant far below (0/0 gives NaN), mask 2 all +inf/-inf/nan mix
    flat[1, :] = -100.0
    flat[2, : h * w // 3] = np.inf
    flat[2, h * w // 3: 2 * h * w // 3] = -np.inf
    flat[2, 2 * h * w // 3:] = np.nan
    masks = torch.from_numpy(logits)
    entries = []
    for t, o in cases:
        scores = both("calculate_stability_score", masks, t, o)
        assert scores.dtype == torch.float32
        hi = (masks > (t + o)).sum((-1, -2))
        lo = (masks > (t - o)).sum((-1, -2))
        entries.append({"mask_threshold": t, "threshold_offset": o, "scores_bits": f32_bits(scores.numpy()),
                        "intersections": hi.tolist(), "unions": lo.tolist()})
    thresholds = sorted({t for t, _ in cases})
    binary = np.stack([(masks > t).numpy().astype(np.uint8) for t in thresholds])
    np.save(os.path.join(out, "stability_logits.npy"), logits)
    np.save(os.path.join(out, "stability_binary.npy"), binary)

    # Rows wider than int16: upstream sums each row into int16 (wrapping), then rows into int32.
    # Logits by formula (restated in the Swift test): ((x * 31 + y * 17) % 101 - 20) / 10 in float32.
    wide = []
    for (wh, ww) in [(2, 40000), (3, 33000), (1, 70000)]:
        y, x = np.meshgrid(np.arange(wh), np.arange(ww), indexing="ij")
        vals = ((x * 31 + y * 17) % 101 - 20).astype(np.float32) / np.float32(10)
        t = torch.from_numpy(vals)[None]
        for thr, off in [(0.0, 1.0), (-3.0, 0.5)]:
            s = both("calculate_stability_score", t, thr, off)
            wide.append({"height": wh, "width": ww, "mask_threshold": thr, "threshold_offset": off,
                         "score_bits": f32_bits(s.numpy())[0]})
    write_json(out, "stability.json", {"count": k, "height": h, "width": w, "cases": entries,
                                       "binary_thresholds": thresholds, "wide_rows": wide})


def mask_boxes(out, rng):
    k, h, w = 24, 19, 23
    masks = np.zeros((k, h, w), dtype=bool)
    masks[1, 5, 7] = True  # single pixel
    masks[2, 0, 0] = True
    masks[3, h - 1, w - 1] = True
    masks[4, :, :] = True
    masks[5, :, 4] = True  # one column
    masks[6, 11, :] = True  # one row
    masks[7, 3, 20] = True
    masks[7, 15, 2] = True  # two far pixels
    for i in range(8, 16):
        masks[i] = blobby_mask(rng, h, w, density=rng.uniform(0.05, 0.6), blur=2.0)
    for i in range(16, k):
        masks[i] = rng.random((h, w)) < rng.uniform(0.001, 0.05)
    boxes = both("batched_mask_to_box", torch.from_numpy(masks))
    assert boxes.dtype == torch.int64
    # Other shapes (a 1x1, a 1xW, an Hx1), each alone.
    extra = []
    for m in [np.ones((1, 1), bool), np.zeros((1, 1), bool), rng.random((1, 40)) < 0.2, rng.random((31, 1)) < 0.2,
              np.zeros((1, 40), bool)]:
        b = both("batched_mask_to_box", torch.from_numpy(m))
        extra.append({"height": m.shape[0], "width": m.shape[1], "pixels": m.astype(int).reshape(-1).tolist(),
                      "box": b.tolist()})
    np.save(os.path.join(out, "mask_boxes.npy"), masks.astype(np.uint8))
    write_json(out, "mask_boxes.json", {"boxes": boxes.tolist(), "extra": extra})


def nms(out, rng):
    all_boxes, all_scores, all_cats, entries = [], [], [], []
    offset = 0

    def add(boxes, scores, cats, thresholds, note):
        nonlocal offset
        boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
        scores = np.asarray(scores, dtype=np.float32)
        cats = np.asarray(cats, dtype=np.int64)
        tb, ts, tc = torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(cats)
        results = []
        for thr in thresholds:
            keep = torchvision.ops.nms(tb, ts, thr)
            batched = torchvision.ops.batched_nms(tb, ts, tc, thr)
            results.append({"iou_threshold": thr, "nms": keep.tolist(), "batched": batched.tolist()})
        entries.append({"offset": offset, "count": len(scores), "note": note, "results": results})
        all_boxes.append(boxes)
        all_scores.append(scores)
        all_cats.append(cats)
        offset += len(scores)

    def random_boxes(n, scale=100.0):
        xy = rng.uniform(0, scale, (n, 2))
        wh = rng.uniform(1, scale / 3, (n, 2))
        return np.concatenate([xy, xy + wh], axis=1)

    thresholds = [0.0, 0.3, 0.5, 0.7, 0.9, 1.0]
    add(np.zeros((0, 4)), [], [], [0.5], "empty")
    add([[0, 0, 10, 10]], [0.5], [0], [0.5], "one box")
    for n in (5, 50, 200):
        add(random_boxes(n), rng.random(n), rng.integers(0, 3, n), thresholds, f"random {n}")
    # Ties: scores drawn from few values, so the sort's tie rule decides.
    b = random_boxes(120, 60.0)
    add(b, rng.integers(0, 4, 120) / 4.0, np.zeros(120), thresholds, "tied scores")
    add(b, np.ones(120), np.zeros(120), thresholds, "all scores equal")
    # Exact IoUs: IoU 0.5 exactly (inter 2, union 4) and 7/10 (0.7 in float32 is below 0.7 in float64),
    # 1/3, and boxes of zero area (0/0 is NaN, never suppresses).
    exact = [[0, 0, 3, 1], [1, 0, 4, 1],  # IoU 2/4
             [10, 0, 17, 1], [10, 0, 20, 1],  # IoU 7/10
             [30, 0, 32, 1], [31, 0, 33, 1],  # 1/3
             [40, 40, 40, 40], [40, 40, 40, 40],  # zero area twice
             [50, 50, 50, 60], [50, 50, 50, 60],  # zero width
             [60, 0, 70, 10], [60, 0, 70, 10],  # identical (IoU 1)
             [80, 0, 89, 10], [80, 0, 90, 10]]  # 9/10
    add(exact, np.arange(len(exact), 0, -1) / 20.0, np.zeros(len(exact)), [0.0, 1 / 3, 0.5, 0.7, 0.9, 1.0],
        "exact IoUs")
    # Integer boxes as the generator makes them (inclusive maxima, degenerate ones), scores 0/1.
    ib = np.sort(rng.integers(0, 64, (150, 2, 2)), axis=1).transpose(0, 2, 1).reshape(150, 4)[:, [0, 2, 1, 3]]
    add(ib, rng.integers(0, 2, 150), np.zeros(150), thresholds, "integer boxes, 0/1 scores")
    # Categories with large coordinates: the coordinate trick's float32 offsets round.
    big = random_boxes(300, 5000.0)
    add(big, rng.random(300), rng.integers(0, 7, 300), thresholds, "categories, large coordinates")
    # Over 1000 boxes: batched_nms runs per category (vanilla) and re-sorts the kept ones.
    add(random_boxes(1100, 400.0), rng.random(1100), rng.integers(0, 4, 1100), [0.5, 0.7], "vanilla path")
    add(random_boxes(1100, 400.0), rng.integers(0, 5, 1100) / 5.0, rng.integers(0, 4, 1100), [0.7],
        "vanilla path, tied scores")

    np.save(os.path.join(out, "nms_boxes.npy"), np.concatenate(all_boxes, axis=0).astype(np.float32))
    np.save(os.path.join(out, "nms_scores.npy"), np.concatenate(all_scores).astype(np.float32))
    np.save(os.path.join(out, "nms_categories.npy"), np.concatenate(all_cats).astype(np.int64))
    write_json(out, "nms.json", {"cases": entries})


def rle(out, rng):
    masks, entries, offset = [], [], 0

    def coco_string(mask):
        """pycocotools' own encoder on the mask; the generator's coco_encode_rle must agree."""
        return mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))["counts"].decode("ascii")

    def expected(mask):
        t = torch.from_numpy(mask)[None]
        unc = both("mask_to_rle_pytorch", t)[0]
        coco = both("coco_encode_rle", unc)
        assert coco["counts"] == coco_string(mask), "coco_encode_rle vs pycocotools.encode"
        back = both("rle_to_mask", unc)
        assert np.array_equal(back, mask)
        dec = mask_utils.decode({"size": [mask.shape[0], mask.shape[1]], "counts": coco["counts"].encode()})
        assert np.array_equal(dec.astype(bool), mask)
        area = both("area_from_rle", unc)
        assert area == int(mask.sum())
        return {"counts": [int(c) for c in unc["counts"]], "coco": coco["counts"], "area": int(area)}

    def add_stored(mask, note):
        nonlocal offset
        mask = np.asarray(mask, dtype=bool)
        e = {"height": mask.shape[0], "width": mask.shape[1], "offset": offset, "note": note}
        e.update(expected(mask))
        masks.append(mask.astype(np.uint8).reshape(-1))
        offset += mask.size
        entries.append(e)

    add_stored(np.zeros((7, 5)), "all zero")
    add_stored(np.ones((7, 5)), "all one")
    add_stored(rng.random((13, 1)) < 0.5, "single column")
    add_stored(rng.random((1, 13)) < 0.5, "single row")
    add_stored(np.ones((1, 1)), "1x1 one")
    add_stored(np.zeros((1, 1)), "1x1 zero")
    for i in range(8):
        h, w = rng.integers(5, 40, 2)
        add_stored(blobby_mask(rng, h, w, density=rng.uniform(0.1, 0.8), blur=2.0, salt=0.02), "blobby")
    for i in range(4):
        h, w = rng.integers(3, 30, 2)
        add_stored(rng.random((h, w)) < rng.uniform(0.05, 0.95), "noise")
    add_stored(np.tile([[1, 0], [0, 1]], (9, 8)), "checkerboard")

    # Big masks by rectangles (restated by the Swift test): long runs (> 2^16, > 2^20) need
    # multi-character COCO values, and the delta rule against counts[i - 2] gives negative values.
    big = []
    for (h, w, rects) in [
        (300, 300, [(150, 151, 150, 151)]),
        (300, 300, []),
        (1200, 1000, [(0, 1200, 0, 1), (600, 601, 999, 1000)]),
        (1100, 1000, [(10, 20, 5, 900), (500, 1100, 0, 10), (1099, 1100, 999, 1000)]),
        (257, 1031, [(0, 257, 0, 1031)]),
        (520, 700, [(0, 1, 0, 1), (3, 500, 30, 33), (510, 520, 600, 700)]),
    ]:
        m = np.zeros((h, w), dtype=bool)
        for (y0, y1, x0, x1) in rects:
            m[y0:y1, x0:x1] = True
        e = {"height": h, "width": w, "rects": [list(r) for r in rects]}
        e.update(expected(m))
        big.append(e)

    # uncrop_masks then mask_to_rle_pytorch, as the generator runs them on each crop's masks.
    uncrop = []
    for (oh, ow, crop) in [(40, 50, [0, 0, 50, 40]), (40, 50, [0, 0, 27, 21]), (40, 50, [23, 19, 50, 40]),
                           (40, 50, [10, 5, 37, 31]), (40, 50, [0, 12, 50, 30]), (40, 50, [15, 0, 30, 40]),
                           (33, 17, [1, 1, 16, 32])]:
        x0, y0, x1, y1 = crop
        for kind in ("blobby", "full", "border", "empty"):
            if kind == "blobby":
                m = blobby_mask(rng, y1 - y0, x1 - x0, density=0.4, blur=1.5, salt=0.05)
            elif kind == "full":
                m = np.ones((y1 - y0, x1 - x0), bool)
            elif kind == "border":
                m = np.zeros((y1 - y0, x1 - x0), bool)
                m[0, :] = m[-1, :] = m[:, 0] = m[:, -1] = True
            else:
                m = np.zeros((y1 - y0, x1 - x0), bool)
            padded = both("uncrop_masks", torch.from_numpy(m)[None], crop, oh, ow)
            assert padded.shape == (1, oh, ow)
            unc = both("mask_to_rle_pytorch", padded)[0]
            masks.append(m.astype(np.uint8).reshape(-1))
            uncrop.append({"orig_height": oh, "orig_width": ow, "crop_box": crop, "offset": offset,
                           "counts": [int(c) for c in unc["counts"]]})
            offset += m.size

    np.save(os.path.join(out, "rle_masks.npy"), np.concatenate(masks).astype(np.uint8))
    write_json(out, "rle.json", {"stored": entries, "rectangles": big, "uncrop": uncrop})


def small_regions(out, rng):
    h, w = 48, 64
    masks = []
    for i in range(8):
        masks.append(blobby_mask(rng, h, w, density=rng.uniform(0.2, 0.8), blur=rng.uniform(1.5, 4.0),
                                 salt=rng.uniform(0.0, 0.03)))
    # Equal-size islands (every one small, ties for the largest): cv2 numbers components by the
    # 2x2 block (row pair, column pair) where each is first met, not by its first pixel in raster order.
    m = np.zeros((h, w), bool)
    m[0:3, 40:43] = True  # first pixel (0, 40), first block (0, 20)
    m[1:4, 0:3] = True  # first pixel (1, 0), first block (0, 0)  <- label 1 in cv2
    m[20:23, 20:23] = True
    masks.append(m)
    m = np.zeros((h, w), bool)
    m[3:5, 30:32] = True  # first block (1, 15)
    m[2:4, 50:52] = True  # first block (1, 25); first pixel (2, 50) comes before (3, 30)
    m[30:32, 7:9] = True
    m[40, 0] = True
    masks.append(m)
    masks.append(np.zeros((h, w), bool))
    masks.append(np.ones((h, w), bool))
    m = np.ones((h, w), bool)
    m[10:12, 10:12] = False  # holes of 4, 1 and a corner
    m[30, 40] = False
    m[47, 63] = False
    m[0:2, 0:5] = False
    masks.append(m)
    m = np.zeros((h, w), bool)
    m[::2, ::2] = True  # single pixels two apart: every one its own component
    masks.append(m)
    m = np.zeros((h, w), bool)
    idx = np.arange(min(h, w))
    m[idx, idx] = True  # a diagonal line: one 8-connected component (4-connected it would be many)
    m[5, 30] = True
    masks.append(m)
    masks = np.stack(masks)
    thresholds = [0, 1, 2, 5, 30, 200, 1000, 1e9]
    entries = []
    for i, mask in enumerate(masks):
        results = []
        for mode in ("holes", "islands"):
            for thr in thresholds:
                new, changed = both("remove_small_regions", mask, thr, mode)
                new = np.asarray(new, bool)
                results.append({"mode": mode, "area_thresh": thr, "changed": bool(changed),
                                "coco": mask_utils.encode(np.asfortranarray(new.astype(np.uint8)))["counts"].decode()})
        entries.append({"index": i, "results": results, "labels": cv2_labels(mask)})

    # Bigger masks for cv2's labels (with several threads cv2 labels stripes of rows apart and merges
    # them), stored as COCO RLE.
    big_labels = []
    for (bh, bw, density, blur, salt) in [(480, 640, 0.4, 6.0, 0.0003), (301, 257, 0.5, 3.0, 0.003)]:
        big = blobby_mask(rng, bh, bw, density=density, blur=blur, salt=salt)
        coco = mask_utils.encode(np.asfortranarray(big.astype(np.uint8)))["counts"].decode()
        results = []
        for mode in ("holes", "islands"):
            for thr in (50, 1e9):
                new, changed = both("remove_small_regions", big, thr, mode)
                results.append({"mode": mode, "area_thresh": thr, "changed": bool(changed),
                                "coco": mask_utils.encode(np.asfortranarray(np.asarray(new, np.uint8)))["counts"].decode()})
        big_labels.append({"height": bh, "width": bw, "coco": coco, "labels": cv2_labels(big),
                           "inverse_labels": cv2_labels(~big), "results": results})

    np.save(os.path.join(out, "small_regions_masks.npy"), masks.astype(np.uint8))
    write_json(out, "small_regions.json", {"cases": entries, "big": big_labels})


def cv2_labels(mask):
    """cv2's labels of a mask as sizes and, per label, its first pixel in raster order."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), 8)
    values, first_index = np.unique(labels.reshape(-1), return_index=True)
    first = np.full(n, -1, dtype=np.int64)
    first[values] = first_index
    return {"count": int(n), "sizes": stats[:, cv2.CC_STAT_AREA].astype(int).tolist(), "first_pixel": first.tolist()}


def crop_geometry(out, rng):
    cases = []
    for (oh, ow, crop) in [(100, 120, [0, 0, 120, 100]), (100, 120, [0, 0, 70, 60]), (100, 120, [40, 30, 120, 100]),
                           (100, 120, [25, 20, 95, 80]), (1365, 2048, [0, 0, 1060, 718]),
                           (1365, 2048, [988, 647, 2048, 1365]), (50, 50, [5, 5, 45, 45])]:
        x0, y0, x1, y1 = crop
        cw, ch = x1 - x0, y1 - y0
        boxes = []
        for _ in range(40):
            # boxes in crop coordinates, often within 20 +- 1 of an edge
            bx0 = int(rng.choice([0, 1, 19, 20, 21, rng.integers(0, cw)]))
            by0 = int(rng.choice([0, 1, 19, 20, 21, rng.integers(0, ch)]))
            bx1 = int(rng.choice([cw - 1, cw - 20, cw - 21, cw - 22, rng.integers(0, cw)]))
            by1 = int(rng.choice([ch - 1, ch - 20, ch - 21, ch - 22, rng.integers(0, ch)]))
            boxes.append([bx0, by0, bx1, by1])
        tb = torch.tensor(boxes, dtype=torch.int64)
        entry = {"orig_height": oh, "orig_width": ow, "crop_box": crop, "boxes": boxes, "results": []}
        for atol in (20.0, 0.0, 5.5):
            near = both("is_box_near_crop_edge", tb, crop, [0, 0, ow, oh], atol=atol)
            entry["results"].append({"atol": atol, "near": near.tolist()})
        entry["uncropped"] = both("uncrop_boxes_xyxy", tb, crop).tolist()
        entry["xywh"] = [both("box_xyxy_to_xywh", b).tolist() for b in tb]
        pts64 = torch.from_numpy(rng.uniform(0, max(cw, ch), (6, 2)))
        pts32 = pts64.float()
        entry["points64"] = pts64.tolist()
        entry["uncropped_points64"] = both("uncrop_points", pts64, crop).tolist()
        entry["points32_bits"] = f32_bits(pts32.numpy())
        entry["uncropped_points32_bits"] = f32_bits(both("uncrop_points", pts32, crop).numpy())
        cases.append(entry)
    # Large coordinates: float32 rounding before the comparison.
    big = torch.tensor([[16777200, 0, 16777230, 5], [16777217, 0, 16777219, 3]], dtype=torch.int64)
    near = both("is_box_near_crop_edge", big, [0, 0, 16777240, 100], [0, 0, 33554432, 200])
    cases.append({"orig_height": 200, "orig_width": 33554432, "crop_box": [0, 0, 16777240, 100],
                  "boxes": big.tolist(), "results": [{"atol": 20.0, "near": near.tolist()}],
                  "uncropped": big.tolist(), "xywh": [both("box_xyxy_to_xywh", b).tolist() for b in big],
                  "points64": [], "uncropped_points64": [], "points32_bits": [], "uncropped_points32_bits": []})
    write_json(out, "crop_geometry.json", {"cases": cases})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    grids(args.out)
    crop_boxes(args.out)
    stability(args.out, rng)
    mask_boxes(args.out, rng)
    nms(args.out, rng)
    rle(args.out, rng)
    small_regions(args.out, rng)
    crop_geometry(args.out, rng)
    total = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
    print(f"wrote {args.out} ({total} bytes)")


if __name__ == "__main__":
    main()

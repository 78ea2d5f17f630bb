#!/usr/bin/env python3
"""Writes the fixtures of SAM 2 video mode's image steps into this folder (run with the project venv:
/work/main/.venv/bin/python Tests/SAMImageTests/Fixtures/make_video_fixtures.py). Only the files
named below are written; make_fixtures.py's are left alone.

1. Pillow's default `Image.resize` filter, BICUBIC, which SAM 2's frame loader runs
   (`img_pil.convert("RGB").resize((S, S))` in sam2/utils/misc.py `_load_img_as_tensor`), on
   `pattern_image` (make_fixtures.py's formula, which the Swift tests restate):
   - `bicubic_<case>.npy`: the whole output (uint8 [H, W, 3]) of small cases;
   - `bicubic_<case>_rows.npy` (rows `LARGE_ROWS`, uint8 [len, W, 3]), `..._row_sums.npy`,
     `..._column_sums.npy` (int64 sums over all channels): the video-sized cases, which would
     be megabytes whole, and reference_outputs/demo/photo.png read and resized as upstream does.
2. Hole filling as sam2's `fill_holes_in_mask_scores`, on a 256x256 score map made by
   `hole_scores` (integer arithmetic only, restated exactly by the Swift test):
   `holes_filled_256.npy` (uint8 [len(HOLE_AREAS), 256 * 256 / 8]): for each max_area, the
   pixels that become 0.1, packed with np.packbits (row-major, most significant bit first).
   Upstream's connected components are a CUDA kernel (sam2/csrc/connected_components.cu) that
   this machine cannot run; the reference is scipy.ndimage.label with 8-connectivity, and the
   script first checks, on the fixture's map and on further random maps, that a sequential
   restatement of the kernel's 2x2-block union-find (`block_labels`) finds the same components.

Everything is deterministic; re-running rewrites identical bytes.
"""
import os

import numpy as np
import PIL
import scipy.ndimage
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
assert PIL.__version__ == "13.0.0", f"fixtures are pinned to Pillow 13.0.0, found {PIL.__version__}"


def path(name):
    return os.path.join(HERE, name)


def pattern_image(width, height):
    """make_fixtures.py pattern_image: a deterministic uint8 texture (hard on a cubic: it overshoots)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    channels = [(x * 131 + y * 71 + c * 29 + x * y * 7 + (x * x) % 13 * c) % 256 for c in range(3)]
    return np.stack(channels, -1).astype(np.uint8)


# --------------------------------------------------------------------------- bicubic resize

BICUBIC_CASES = [  # (name, width, height, out width, out height)
    ("enlarge", 10, 7, 23, 17),             # up by non-integer factors
    ("shrink", 37, 23, 16, 11),             # down by non-integer factors (support widened)
    ("square", 64, 48, 96, 96),             # non-square to square, both up
    ("mixed", 40, 30, 61, 11),              # one axis up, the other down
    ("vertical_only", 40, 30, 40, 17),
    ("horizontal_only", 40, 30, 13, 30),
    ("tall", 9, 60, 8, 20),                 # Pillow 13 runs the vertical pass first here
]
LARGE_CASES = [  # the video loader's real sizes: 4:3 and 16:9 frames to SAM 2's 1024 square
    ("640x480_1024", 640, 480, 1024, 1024),
    ("1920x1080_1024", 1920, 1080, 1024, 1024),
]
LARGE_ROWS = [0, 1, 2, 337, 511, 512, 1021, 1022, 1023]
# A photo file through upstream's whole chain, `Image.open(p).convert("RGB").resize((1024, 1024))`.
PHOTO = os.path.join(HERE, "..", "..", "..", "reference_outputs", "demo", "photo.png")


def bicubic(image, width, height):
    resized = Image.fromarray(image).resize((width, height))   # the default filter, as upstream calls it
    assert np.array_equal(np.array(resized), np.array(Image.fromarray(image).resize((width, height), Image.BICUBIC)))
    return np.array(resized)


def make_bicubic():
    for name, width, height, out_w, out_h in BICUBIC_CASES:
        np.save(path(f"bicubic_{name}.npy"), bicubic(pattern_image(width, height), out_w, out_h))
    large = [(name, bicubic(pattern_image(width, height), out_w, out_h)) for name, width, height, out_w, out_h in LARGE_CASES]
    with Image.open(PHOTO) as photo:
        large.append(("photo_1024", np.array(photo.convert("RGB").resize((1024, 1024)))))
    for name, out in large:
        np.save(path(f"bicubic_{name}_rows.npy"), out[LARGE_ROWS])
        np.save(path(f"bicubic_{name}_row_sums.npy"), out.astype(np.int64).sum(axis=(1, 2)))
        np.save(path(f"bicubic_{name}_column_sums.npy"), out.astype(np.int64).sum(axis=(0, 2)))


# --------------------------------------------------------------------------- holes

HOLE_SIZE = 256
HOLE_AREAS = [1, 8, 9, 64, 512]


def hole_scores(size):
    """Scores in steps of 1/8 with many exact zeros: a 3x3 box sum (edges replicated) of 15-bit
    LCG noise, minus half its range, floor-divided by 1024, over 8."""
    noise = np.empty(size * size, np.int64)
    state = 20240607
    for index in range(size * size):
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        noise[index] = (state >> 16) & 0x7FFF
    padded = np.pad(noise.reshape(size, size), 1, mode="edge")
    box = sum(padded[dy:dy + size, dx:dx + size] for dy in range(3) for dx in range(3))
    steps = (box - 9 * 16384) // 1024
    return (steps.astype(np.float32) / np.float32(8)).astype(np.float32)


def scipy_areas(background):
    """Per pixel, the area of its 8-connected background component (0 off the background)."""
    labels, _ = scipy.ndimage.label(background, structure=np.ones((3, 3), dtype=int))
    counts = np.bincount(labels.ravel())
    counts[0] = 0
    return counts[labels]


def block_labels(image):
    """connected_components.cu restated sequentially: label[] is a union-find forest over 2x2
    blocks (each named by its top-left pixel's flat index); `merge` joins a block to its
    top-left, top, top-right and left neighbours when a set pixel of the block touches (8-way)
    a set pixel of that neighbour. Returns per-pixel areas like `scipy_areas`. H, W even."""
    height, width = image.shape
    assert height % 2 == 0 and width % 2 == 0
    parent = {}

    def root(n):
        while parent[n] != n:
            n = parent[n]
        return n

    def union(a, b):
        a, b = root(a), root(b)
        if a != b:
            parent[max(a, b)] = min(a, b)

    def on(r, c):
        return 0 <= r < height and 0 <= c < width and bool(image[r, c])

    for row in range(0, height, 2):
        for col in range(0, width, 2):
            parent[row * width + col] = row * width + col
    for row in range(0, height, 2):
        for col in range(0, width, 2):
            me = row * width + col
            # which pixels of the block are set decides which outside pixels can touch it;
            # the bottom-right one is reached from the blocks below and right, never from here.
            top_left, top_right, bottom_left = on(row, col), on(row, col + 1), on(row + 1, col)
            if top_left and on(row - 1, col - 1):
                union(me, me - 2 * width - 2)
            if (top_left or top_right) and (on(row - 1, col) or on(row - 1, col + 1)):
                union(me, me - 2 * width)
            if top_right and on(row - 1, col + 2):
                union(me, me - 2 * width + 2)
            if (top_left or bottom_left) and (on(row, col - 1) or on(row + 1, col - 1)):
                union(me, me - 2)
    labels = np.zeros((height, width), np.int64)
    for row in range(height):
        for col in range(width):
            if image[row, col]:
                block = (row // 2 * 2) * width + col // 2 * 2
                labels[row, col] = root(block) + 1
    counts = np.bincount(labels.ravel())
    counts[0] = 0
    return counts[labels]


def make_holes():
    scores = hole_scores(HOLE_SIZE)
    background = scores <= 0
    areas = scipy_areas(background)
    assert np.array_equal(areas, block_labels(background)), "the kernel's blocks disagree with 8-connectivity"
    generator = np.random.default_rng(0)
    for _ in range(20):
        height, width = 2 * generator.integers(1, 20, size=2)
        random = generator.random((height, width)) < generator.uniform(0.2, 0.8)
        assert np.array_equal(scipy_areas(random), block_labels(random))
    four, _ = scipy.ndimage.label(background)   # scipy's default structure: 4-connectivity
    four_counts = np.bincount(four.ravel())
    four_counts[0] = 0
    assert not np.array_equal(areas, four_counts[four]), "4- and 8-connectivity agree on this map: it would not pin the connectivity"
    planes = []
    for max_area in HOLE_AREAS:
        filled = (areas > 0) & (areas <= max_area)
        planes.append(np.packbits(filled.ravel()))
    np.save(path("holes_filled_256.npy"), np.stack(planes))


if __name__ == "__main__":
    make_bicubic()
    make_holes()
    print("video fixtures written to", HERE)

#!/usr/bin/env python3
"""Writes the SAMImage test fixtures into this folder (run with the project venv:
/work/venv/bin/python Tests/SAMImageTests/Fixtures/make_fixtures.py).

Three kinds of files:

1. Tiny PNGs of every colour type and bit depth, written by the small PNG encoder below (Pillow
   cannot write 16-bit RGB, gray+alpha or low-bit palettes), holding closed-form patterns. For
   each, the script asserts that Pillow's `np.array(Image.open(f).convert("RGB"))` equals the
   expected RGB stated here (the `EXPECTED` rules), so the Swift tests can assert the same
   closed forms and thereby match Pillow. Plus broken files: truncated, zero width, absurd size,
   bad CRC, not an image.
2. JPEGs written and decoded by Pillow (lossy, so no closed form): `*.jpg` with `*.jpg.npy`
   holding Pillow's decoded RGB (uint8 [H, W, 3]).
3. Outputs of the upstream Python code on small synthetic inputs, as .npy: Pillow resize via
   `ResizeLongestSide.apply_image` (and plain `Image.resize(BILINEAR)`), `Sam.preprocess`,
   `Sam.postprocess_masks` (torch F.interpolate), `ResizeLongestSide.apply_coords`.

Everything is deterministic; re-running rewrites identical pixel content.
"""
import os
import struct
import types
import zlib

import numpy as np
import PIL
import torch
from PIL import Image

from mobile_sam.modeling.sam import Sam
from mobile_sam.utils.transforms import ResizeLongestSide

HERE = os.path.dirname(os.path.abspath(__file__))
assert PIL.__version__ == "13.0.0", f"fixtures are pinned to Pillow 13.0.0, found {PIL.__version__}"


def path(name):
    return os.path.join(HERE, name)


# --------------------------------------------------------------------------- PNG encoder

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def pack_rows(array, depth):
    """Rows of `array` ([H, W] or [H, W, C] integers) as PNG scanline bytes (no filter byte)."""
    rows = []
    for row in array:
        flat = np.asarray(row).reshape(-1)
        if depth == 16:
            rows.append(flat.astype(">u2").tobytes())
        elif depth == 8:
            rows.append(flat.astype(np.uint8).tobytes())
        else:
            bits = "".join(format(int(v), f"0{depth}b") for v in flat)
            bits += "0" * (-len(bits) % 8)
            rows.append(bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8)))
    return rows


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def encode_png(array, depth, color_type, extra=b"", interlace=False, width=None, height=None):
    array = np.asarray(array)
    h, w = array.shape[:2]
    raw = b""
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            sub = array[y0::dy, x0::dx]
            if sub.shape[0] == 0 or sub.shape[1] == 0:
                continue
            raw += b"".join(b"\x00" + r for r in pack_rows(sub, depth))
    else:
        raw = b"".join(b"\x00" + r for r in pack_rows(array, depth))
    header = struct.pack(">IIBBBBB", w if width is None else width, h if height is None else height,
                         depth, color_type, 0, 0, 1 if interlace else 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)


def pillow_rgb(name):
    with Image.open(path(name)) as image:
        return np.array(image.convert("RGB"))


# --------------------------------------------------------------------------- closed-form patterns
# Every pattern is a function of (x, y) on a W x H grid; the Swift tests restate them.
W, H = 7, 5
ys, xs = np.mgrid[0:H, 0:W]
index = ys * W + xs

GRAY8 = (xs * 37 + ys * 91) % 256
RGB8 = np.stack([(xs * 40) % 256, (ys * 60) % 256, (xs * ys * 13 + 7) % 256], -1)
ALPHA8 = (xs * 50 + ys * 3) % 256          # includes 0 (fully transparent) at x = 0, y = 0
GRAY16_TABLE = np.array([0, 1, 127, 255, 256, 257, 511, 4096, 32768, 65535])
GRAY16 = GRAY16_TABLE[index % 10]
WORD16 = lambda a, b, c: (xs * a + ys * b + c) % 65536
RGB16 = np.stack([WORD16(9001, 307, 0), WORD16(257, 12289, 255), WORD16(65535, 1, 128)], -1)
ALPHA16 = WORD16(4099, 1, 0)
PALETTE16 = np.array([[(i * 16) % 256, 255 - i * 16, (i * 73) % 256] for i in range(16)])


def low_gray(depth):
    return (xs + 2 * ys) % (2 ** depth)


def palette_indices(count):
    return index % count


EXPECTED = {}


def fixture_png(name, array, depth, color_type, expected, **options):
    write(name, encode_png(array, depth, color_type, **options))
    expected = np.asarray(expected, dtype=np.uint8)
    if expected.ndim == 2:
        expected = np.repeat(expected[..., None], 3, -1)
    actual = pillow_rgb(name)
    assert actual.shape == expected.shape and (actual == expected).all(), f"{name}: Pillow gives {actual.tolist()}"
    EXPECTED[name] = expected


def plte(colors, alphas=None):
    data = chunk(b"PLTE", bytes(int(v) for c in colors for v in c))
    if alphas is not None:
        data += chunk(b"tRNS", bytes(alphas))
    return data


def make_pngs():
    # gray 1/2/4 bits: Pillow scales to 0..255 (x255, x85, x17)
    for depth in (1, 2, 4):
        fixture_png(f"gray{depth}.png", low_gray(depth), depth, 0, low_gray(depth) * (255 // (2 ** depth - 1)))
    fixture_png("gray8.png", GRAY8, 8, 0, GRAY8)
    # 16-bit gray: Pillow opens "I;16" and clips to 255 on convert("RGB")
    fixture_png("gray16.png", GRAY16, 16, 0, np.minimum(GRAY16, 255))
    fixture_png("gray_alpha8.png", np.stack([GRAY8, ALPHA8], -1), 8, 4, GRAY8)
    # 16-bit gray+alpha, RGB, RGBA: the high byte of each sample
    fixture_png("gray_alpha16.png", np.stack([WORD16(4099, 12289, 0), ALPHA16], -1), 16, 4, WORD16(4099, 12289, 0) >> 8)
    fixture_png("rgb8.png", RGB8, 8, 2, RGB8)
    fixture_png("rgb16.png", RGB16, 16, 2, RGB16 >> 8)
    fixture_png("rgba8.png", np.concatenate([RGB8, ALPHA8[..., None]], -1), 8, 6, RGB8)
    fixture_png("rgba16.png", np.concatenate([RGB16, ALPHA16[..., None]], -1), 16, 6, RGB16 >> 8)
    # palettes of 1, 2, 4, 8 bits, the 8-bit one with transparency (ignored)
    for depth in (1, 2, 4, 8):
        count = min(2 ** depth, 16)
        indices = palette_indices(count)
        alphas = [0, 128, 255] if depth == 8 else None
        fixture_png(f"palette{depth}.png", indices, depth, 3, PALETTE16[indices], extra=plte(PALETTE16[:count], alphas))
    # tRNS on gray and RGB, and a gAMA of 1.0: all ignored
    fixture_png("gray8_trns.png", GRAY8, 8, 0, GRAY8, extra=chunk(b"tRNS", struct.pack(">H", int(GRAY8[0, 1]))))
    fixture_png("rgb8_trns_gamma.png", RGB8, 8, 2, RGB8,
                extra=chunk(b"gAMA", struct.pack(">I", 100000)) + chunk(b"tRNS", struct.pack(">HHH", *RGB8[0, 0].tolist())))
    # Adam7 interlacing
    fixture_png("rgb8_interlaced.png", RGB8, 8, 2, RGB8, interlace=True)
    fixture_png("gray2_interlaced.png", low_gray(2), 2, 0, low_gray(2) * 85, interlace=True)

    # Broken files.
    whole = encode_png(RGB8, 8, 2)
    write("truncated.png", whole[: len(whole) - 30])   # cut inside the IDAT chunk
    write("zero_width.png", encode_png(RGB8, 8, 2, width=0))
    write("huge.png", encode_png(RGB8, 8, 2, width=40000, height=5))  # 40000 wide: refused before decoding
    bad_crc = bytearray(whole)
    bad_crc[29] ^= 0xFF   # a byte of the IHDR CRC
    write("bad_crc.png", bytes(bad_crc))
    write("not_an_image.png", b"this is a text file, not an image\n")
    write("empty.png", b"")
    for name in ("truncated.png", "zero_width.png", "bad_crc.png", "not_an_image.png"):
        try:
            pillow_rgb(name)
        except Exception:
            continue
        raise AssertionError(f"Pillow unexpectedly reads {name}")


# --------------------------------------------------------------------------- JPEG

def smooth_rgb(width, height):
    y, x = np.mgrid[0:height, 0:width]
    r = 128 + 100 * np.sin(x / 5.0) * np.cos(y / 7.0)
    g = (x * 255.0 / max(width - 1, 1))
    b = (y * 255.0 / max(height - 1, 1) + (x % 8) * 4) % 256
    return np.clip(np.stack([r, g, b], -1).round(), 0, 255).astype(np.uint8)


def make_jpegs():
    image = smooth_rgb(37, 29)
    Image.fromarray(image).save(path("rgb420.jpg"), quality=90)                      # 4:2:0 by default
    Image.fromarray(image).save(path("rgb444.jpg"), quality=95, subsampling=0)
    Image.fromarray(image).save(path("progressive.jpg"), quality=85, progressive=True)
    Image.fromarray(image[..., 1]).save(path("gray.jpg"), quality=90)
    Image.fromarray(image).convert("CMYK").save(path("cmyk.jpg"), quality=90)
    for name in ("rgb420.jpg", "rgb444.jpg", "progressive.jpg", "gray.jpg", "cmyk.jpg"):
        np.save(path(name + ".npy"), pillow_rgb(name))
    with open(path("rgb420.jpg"), "rb") as f:
        whole = f.read()
    write("truncated.jpg", whole[: len(whole) // 2])


# --------------------------------------------------------------------------- resize, preprocess, postprocess

def pattern_image(width, height):
    y, x = np.mgrid[0:height, 0:width]
    channels = [(x * 131 + y * 71 + c * 29 + x * y * 7 + (x * x) % 13 * c) % 256 for c in range(3)]
    return np.stack(channels, -1).astype(np.uint8)


RESIZE_CASES = [  # (name, width, height, long side): shrink, enlarge, extreme aspect
    ("shrink", 37, 23, 16),
    ("enlarge", 10, 7, 32),
    ("thin", 50, 3, 20),
    ("tall", 9, 40, 17),
]
PIL_CASES = [  # plain Image.resize(BILINEAR): one axis only, and both
    ("vertical_only", 40, 30, 40, 17),
    ("horizontal_only", 40, 30, 13, 30),
    ("mixed", 40, 30, 61, 11),
]


def fake_sam(image_size):
    """Enough of a Sam for its preprocess / postprocess_masks methods (upstream code runs)."""
    fake = types.SimpleNamespace()
    fake.pixel_mean = torch.Tensor([123.675, 116.28, 103.53]).view(-1, 1, 1)
    fake.pixel_std = torch.Tensor([58.395, 57.12, 57.375]).view(-1, 1, 1)
    fake.image_encoder = types.SimpleNamespace(img_size=image_size)
    return fake


def make_resize_and_preprocess():
    for name, width, height, side in RESIZE_CASES:
        image = pattern_image(width, height)
        resized = ResizeLongestSide(side).apply_image(image)
        np.save(path(f"resize_{name}.npy"), resized)
        tensor = torch.as_tensor(resized).permute(2, 0, 1).contiguous()[None]
        np.save(path(f"preprocess_{name}.npy"), Sam.preprocess(fake_sam(side), tensor).numpy())
    for name, width, height, out_w, out_h in PIL_CASES:
        image = pattern_image(width, height)
        np.save(path(f"pil_{name}.npy"), np.array(Image.fromarray(image).resize((out_w, out_h), Image.BILINEAR)))


POST_CASES = [  # (name, low-res shape, image size, input size, original size)
    # torch's generic kernel (output H + W > 128) in both stages; landscape, two masks
    ("a", (1, 2, 16, 16), 128, (96, 128), (61, 129)),
    # generic kernel, portrait
    ("b", (1, 1, 16, 16), 80, (80, 51), (140, 90)),
    # torch's small-output kernel (output H + W <= 128) in both stages
    ("c", (1, 1, 8, 8), 32, (24, 32), (40, 50)),
]


def make_postprocess():
    generator = torch.Generator().manual_seed(0)
    for name, shape, image_size, input_size, original_size in POST_CASES:
        low = torch.randn(shape, generator=generator)
        np.save(path(f"post_{name}_low.npy"), low.numpy())
        out = Sam.postprocess_masks(fake_sam(image_size), low, input_size, original_size)
        np.save(path(f"post_{name}_logits.npy"), out.numpy())
    # ResizeLongestSide.apply_coords / apply_boxes as the predictor uses them (then float32)
    points = np.array([[0.0, 0.0], [1023.5, 17.25], [2047.0, 1364.0], [333.3, 999.9]])
    transform = ResizeLongestSide(1024)
    np.save(path("coords_1365x2048.npy"), transform.apply_coords(points, (1365, 2048)).astype(np.float32))
    np.save(path("coords_777x301.npy"), transform.apply_coords(points, (777, 301)).astype(np.float32))


if __name__ == "__main__":
    make_pngs()
    make_jpegs()
    make_resize_and_preprocess()
    make_postprocess()
    print("fixtures written to", HERE)

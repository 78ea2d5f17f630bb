"""MobileSAM configurations the reference exporter can build.

Two configurations share one architecture (the upstream `mobile_sam` classes):

* ``full``: MobileSAM ``vit_t`` exactly as ``mobile_sam/build_sam.py``
  (``build_sam_vit_t``, lines 47-93) builds it.
* ``tiny``: the same classes at small widths and a small input, so a Swift
  test runs the whole pipeline in well under a second and the committed
  reference set stays small.

``resolve(name)`` returns the dict written as ``config.json``. Its keys are
camelCase and its nesting is that of the Swift ``SAMConfig`` Codable
(Sources/SAMModel/Config/SAMConfig.swift), so the runtime decodes the file
directly; everything else (derived geometry, eps values, pixel statistics,
the upstream hard-codes the tiny config works around) rides along as extra
keys that the decoder ignores.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List

# --- upstream constants (mobile_sam 1.0.0, see the line references) --------

# tiny_vit_sam.py L127-129: PatchMerging uses a stride-1 depthwise conv2 only
# when its out_dim is one of these widths; every other width gets stride 2.
STRIDE_ONE_OUT_DIMS = (320, 448, 576)
# tiny_vit_sam.py L538-551: TinyViT's neck is hard-coded to 256 channels.
UPSTREAM_NECK_DIM = 256
# tiny_vit_sam.py L611: forward_features reshapes tokens to a 64x64 grid.
UPSTREAM_FORWARD_GRID = 64
# tiny_vit_sam.py L68-70: PatchEmbed = two 3x3 stride-2 pad-1 convs: stride 4.
PATCH_EMBED_STRIDE = 4

# Normalisation epsilons, per norm type (all upstream defaults).
EPS = {
    # torch.nn.BatchNorm2d default, used by every Conv2d_BN (tiny_vit_sam.py L27).
    "batchNorm2d": 1e-5,
    # torch.nn.LayerNorm default: TinyViT Attention.norm (L229), Mlp.norm
    # (L195), norm_head (L529, unused); TwoWayTransformer norm1-4 and
    # norm_final_attn (transformer.py L60, L134, L139, L142, L144).
    "layerNorm": 1e-5,
    # LayerNorm2d default: the neck (tiny_vit_sam.py L449-461, a copy of
    # common.py's), prompt_encoder.mask_downscaling (prompt_encoder.py L53,
    # L56) and mask_decoder.output_upscaling (mask_decoder.py L55), common.py L32.
    "layerNorm2d": 1e-6,
}

PIXEL_MEAN = [123.675, 116.28, 103.53]
PIXEL_STD = [58.395, 57.12, 57.375]

# --- the two configurations (Swift SAMConfig key names) ----------------------

FULL: Dict[str, Any] = {
    "name": "full",
    "imageEncoder": {
        "imageSize": 1024,
        "inChannels": 3,
        "embedDims": [64, 128, 160, 320],
        "depths": [2, 2, 6, 2],
        "numHeads": [2, 4, 5, 10],
        "windowSizes": [7, 7, 14, 7],
        "mlpRatio": 4.0,
        "mbconvExpandRatio": 4.0,
        "localConvSize": 3,
        "neckDim": 256,
        "numClasses": 1000,  # classifier head: in the state dict, never run
        "layerLrDecay": 0.8,  # training only; kept for fidelity with build_sam_vit_t
    },
    "promptEncoder": {"maskInChannels": 16},
    "maskDecoder": {
        "transformerDim": 256,
        "depth": 2,
        "numHeads": 8,
        "mlpDim": 2048,
        "attentionDownsampleRate": 2,
        "numMultimaskOutputs": 3,
        "iouHeadDepth": 3,
        "iouHeadHiddenDim": 256,
    },
}

TINY: Dict[str, Any] = {
    "name": "tiny",
    "imageEncoder": {
        # 128 -> patch grid 32 -> 16 -> 8 -> 8. Every attention stage runs
        # windowed attention on a zero-padded grid (16 % 7, 8 % 14, 8 % 7 != 0)
        # and stages 1 and 3 have several windows, as at full size (128 % 7,
        # 64 % 14, 64 % 7). 256 would make the per-module dumps ~17 MB, the
        # 4x-expanded MBConv at 1/4 resolution dominating.
        "imageSize": 128,
        "inChannels": 3,
        "embedDims": [8, 16, 24, 32],
        "depths": [1, 1, 2, 1],
        "numHeads": [1, 2, 2, 2],  # stage 0 is MBConv: numHeads[0] unused
        "windowSizes": [7, 7, 14, 7],  # windowSizes[0] unused likewise
        "mlpRatio": 4.0,
        "mbconvExpandRatio": 4.0,
        "localConvSize": 3,
        # The last merge is stride 1 as in vit_t (out_dim 320): upstream's
        # stage-3 resolution assumes it. See upstream_patches().
        "mergeStrides": [2, 2, 1],
        "neckDim": 32,
        "numClasses": 10,  # keeps head.* in the state dict, but small
        "layerLrDecay": 1.0,
    },
    # 16 as in vit_t. With 4, mask_downscaling's first LayerNorm2d would
    # normalise a single channel and output its bias whatever the mask is
    # (x - mean == 0), so the mask input could not influence anything.
    "promptEncoder": {"maskInChannels": 16},
    "maskDecoder": {
        "transformerDim": 32,
        "depth": 2,
        "numHeads": 2,
        "mlpDim": 64,
        "attentionDownsampleRate": 2,
        "numMultimaskOutputs": 3,
        "iouHeadDepth": 3,
        "iouHeadHiddenDim": 32,
    },
}

# The same classes at the size of SAM ViT-B (~90M parameters, ~375 MB of f32 weights): a file
# for measuring conversion and load at a size users convert, not a published model.
LARGE: Dict[str, Any] = copy.deepcopy(FULL)
LARGE["name"] = "large"
LARGE["imageEncoder"].update(
    embedDims=[96, 192, 640, 1472],
    numHeads=[3, 6, 20, 46],
    # Upstream's rule would give the last merge stride 2 (1472 is not in STRIDE_ONE_OUT_DIMS);
    # the 64x64 output grid needs stride 1, as in vit_t.
    mergeStrides=[2, 2, 1],
)

# SAM's ViT encoders (segment_anything ImageEncoderViT) with SAM's prompt encoder and decoder.
# ref: segment_anything/build_sam.py build_sam_vit_{h,l,b} and _build_sam
def _vit(name: str, dim: int, depth: int, heads: int, global_blocks: List[int]) -> Dict[str, Any]:
    cfg = copy.deepcopy(FULL)
    cfg["name"] = name
    cfg["imageEncoder"] = {
        "family": "vit", "imageSize": 1024, "patchSize": 16, "inChannels": 3, "embedDim": dim, "depth": depth,
        "numHeads": heads, "mlpRatio": 4.0, "neckDim": 256, "windowSize": 14,
        "globalAttentionIndexes": global_blocks, "useRelativePositions": True, "layerNormEps": 1e-6,
    }
    return cfg


VIT_B = _vit("vit_b", 768, 12, 12, [2, 5, 8, 11])
VIT_L = _vit("vit_l", 1024, 24, 16, [5, 11, 17, 23])
VIT_H = _vit("vit_h", 1280, 32, 16, [7, 15, 23, 31])

# The ViT at small widths: 128 input, an 8x8 token grid in 3x3 windows (padded to 9x9, as 64 is
# padded to 70 at full size), global attention in blocks 1 and 3.
VIT_TINY = copy.deepcopy(TINY)
VIT_TINY["name"] = "vit_tiny"
VIT_TINY["imageEncoder"] = {
    "family": "vit", "imageSize": 128, "patchSize": 16, "inChannels": 3, "embedDim": 32, "depth": 4,
    "numHeads": 2, "mlpRatio": 4.0, "neckDim": 32, "windowSize": 3, "globalAttentionIndexes": [1, 3],
    "useRelativePositions": True, "layerNormEps": 1e-6,
}

CONFIGS = {"full": FULL, "tiny": TINY, "large": LARGE, "vit_tiny": VIT_TINY, "vit_b": VIT_B, "vit_l": VIT_L, "vit_h": VIT_H}


def family(cfg: Dict[str, Any]) -> str:
    """The image encoder's family: "tiny_vit" (MobileSAM) or "vit" (SAM)."""
    return cfg["imageEncoder"].get("family", "tiny_vit")


# --- derived geometry ----------------------------------------------------------


def upstream_merge_strides(embed_dims: List[int]) -> List[int]:
    """Stride of each stage's PatchMerging.conv2 under upstream's rule.

    Stage i (i < 3) merges into out_dim = embed_dims[i + 1]
    (tiny_vit_sam.py L509-510); stage 3 has no merge.
    """
    return [1 if d in STRIDE_ONE_OUT_DIMS else 2 for d in embed_dims[1:]]


def stage_sides(img_size: int, merge_strides: List[int]) -> List[int]:
    """Token-grid side entering each stage (and after the last), from the strides."""
    side = img_size // PATCH_EMBED_STRIDE
    sides = [side]
    for stride in merge_strides:
        side = (side - 1) // stride + 1  # 3x3 conv, padding 1
        sides.append(side)
    return sides


def upstream_stage_sides(img_size: int) -> List[int]:
    """Resolutions upstream hard-wires into each layer (tiny_vit_sam.py L500-501).

    patches // 2**i for stages 0..2 but patches // 4 (not // 8) for stage 3:
    upstream assumes the stage-2 merge has stride 1.
    """
    patches = img_size // PATCH_EMBED_STRIDE
    return [patches // (2 ** (i - 1 if i == 3 else i)) for i in range(4)]


def resolve(name: str) -> Dict[str, Any]:
    """The config.json dict for ``name``, every derived value filled in."""
    cfg = copy.deepcopy(CONFIGS[name])
    grid = _fill_image_encoder(cfg["imageEncoder"], name)
    _fill_prompt_encoder(cfg, grid)
    _fill_mask_decoder(cfg["maskDecoder"], grid)
    cfg.update(
        minPoints=1,
        maxPoints=100,
        pixelMean=PIXEL_MEAN,
        pixelStd=PIXEL_STD,
        maskThreshold=0.0,
        eps=dict(EPS),
    )
    cfg["upstreamPatches"] = upstream_patches(cfg)
    return cfg


def _fill_image_encoder(enc: Dict[str, Any], name: str) -> int:
    """Derived encoder geometry; returns the output grid side."""
    if enc.get("family") == "vit":
        enc["outputGrid"] = enc["imageSize"] // enc["patchSize"]
        enc["activation"] = "gelu_erf"
        return enc["outputGrid"]
    img = enc["imageSize"]
    rule = upstream_merge_strides(enc["embedDims"])
    enc.setdefault("mergeStrides", rule)
    enc["mergeStridesUpstreamRule"] = rule
    sides = stage_sides(img, enc["mergeStrides"])
    if sides[:4] != upstream_stage_sides(img):
        raise ValueError(
            f"{name}: stage sides {sides[:4]} disagree with upstream's hard-wired "
            f"{upstream_stage_sides(img)}; the merge strides must be [2, 2, 1]"
        )
    enc["patchEmbedStride"] = PATCH_EMBED_STRIDE
    enc["stageResolutions"] = sides[:4]
    enc["attentionWindows"] = [_window_geometry(enc, sides, s) for s in (1, 2, 3)]
    enc["activation"] = "gelu_erf"
    enc["outputGrid"] = sides[3]
    return sides[3]


def _window_geometry(enc: Dict[str, Any], sides: List[int], stage: int) -> Dict[str, Any]:
    """How TinyViTBlock (L335-367) partitions stage ``stage``'s grid."""
    side, window = sides[stage], enc["windowSizes"][stage]
    padded = side + (window - side % window) % window
    return {
        "stage": stage,
        "side": side,
        "window": window,
        "paddedSide": padded,
        "windowsPerSide": padded // window,
        "unpartitioned": side == window,  # L340: attention on the whole grid
        "attentionBiasOffsets": window * window,
        "headDim": enc["embedDims"][stage] // enc["numHeads"][stage],
    }


def _fill_prompt_encoder(cfg: Dict[str, Any], grid: int) -> None:
    dim = cfg["maskDecoder"]["transformerDim"]
    img = cfg["imageEncoder"]["imageSize"]
    pe = cfg["promptEncoder"]
    mask_in = pe["maskInChannels"]
    pe.update(
        embedDim=dim,
        imageEmbeddingSize=grid,
        inputImageSize=img,
        maskInputSize=4 * grid,
        numPointEmbeddings=4,  # prompt_encoder.py L45: neg, pos, box corner 1, box corner 2
        peNumPosFeats=dim // 2,
        maskDownscalingChannels=[1, mask_in // 4, mask_in, dim],
        activation="gelu_erf",
    )


def _fill_mask_decoder(md: Dict[str, Any], grid: int) -> None:
    dim = md["transformerDim"]
    md.update(
        numMaskTokens=md["numMultimaskOutputs"] + 1,
        crossAttentionInternalDim=dim // md["attentionDownsampleRate"],
        selfAttentionInternalDim=dim,
        transformerMlpActivation="relu",
        outputUpscalingChannels=[dim, dim // 4, dim // 8],
        outputUpscalingActivation="gelu_erf",
        hypernetworkMlp={"layers": 3, "hidden": dim, "out": dim // 8, "activation": "relu"},
        iouHeadActivation="relu",
        lowResMaskSize=4 * grid,
    )


def upstream_patches(cfg: Dict[str, Any]) -> List[Dict[str, str]]:
    """Departures from the unmodified upstream classes this config needs."""
    enc = cfg["imageEncoder"]
    patches = []
    if enc.get("family") == "vit":
        return patches  # segment_anything's classes build every ViT configuration as they are
    if enc["mergeStrides"] != enc["mergeStridesUpstreamRule"]:
        patches.append({
            "what": f"layers[i].downsample.conv2.c.stride = mergeStrides[i] = {enc['mergeStrides']} "
                    f"(upstream's rule gives {enc['mergeStridesUpstreamRule']}); weights unchanged",
            "why": "tiny_vit_sam.py L127-130 gives stride 1 only for out_dim in (320, 448, 576), "
                   "but L500-501 hard-wire stage 3's input_resolution to patches//4, i.e. assume "
                   "the stage-2 merge has stride 1; with stride 2 TinyViTBlock.forward fails "
                   "'input feature has wrong size' (L338)",
        })
    if enc["neckDim"] != UPSTREAM_NECK_DIM:
        patches.append({
            "what": f"image_encoder.neck rebuilt at {enc['neckDim']} channels, same structure and "
                    "names: Conv2d 1x1 no bias, LayerNorm2d, Conv2d 3x3 pad 1 no bias, LayerNorm2d "
                    "(tiny_vit_sam.LayerNorm2d, eps 1e-6)",
            "why": "tiny_vit_sam.py L536-552 hard-code 256 output channels",
        })
    if enc["outputGrid"] != UPSTREAM_FORWARD_GRID:
        patches.append({
            "what": "TinyViT.forward_features reshapes the tokens to the real last-stage grid "
                    "(layers[-1].input_resolution), not 64x64",
            "why": "tiny_vit_sam.py L611: x.view(B, 64, 64, C) is hard-coded",
        })
    return patches

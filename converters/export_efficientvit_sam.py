#!/usr/bin/env python3
"""Export an EfficientViT-SAM model and PyTorch's reference outputs (upstream `efficientsam`), in one folder.

Usage::

    venv/bin/python converters/export_efficientvit_sam.py --config tiny --seed 0 \
        --out reference_outputs/efficientvit_sam_tiny
    # full size (not committed): seeded weights, the photo, the encoder as ONNX
    venv/bin/python converters/export_efficientvit_sam.py --config l0 --seed 0 --module-dumps off \
        --image photo.png --onnx --out /tmp/evit-l0
    # a released-style checkpoint (efficientvit_sam_l0.pt ...) instead of seeded weights
    venv/bin/python converters/export_efficientvit_sam.py --config l0 --checkpoint efficientvit_sam_l0.pt --out /tmp/l0

Configurations:

    tiny              L0's structure (EfficientViTLargeBackbone res/fmb/fmb/mb/att, SamNeck over stages 4, 3, 2,
                      fused-MBConv middle) at widths 4..32, one block per stage, input 96, prompt frame 192,
                      embedding grid 12, decoder width 32 (see TINY and upstream_patches())
    l0 l1 l2 xl0 xl1  efficientsam.sam_model_zoo.create_efficientvit_sam_model("efficientvit-sam-<name>",
                      pretrained=False): upstream's own builder, unchanged

Writes, into ``--out``:

    config.json              the Swift SAMConfig layout, "modelFamily": "efficientvit_sam", imageEncoder
                             {"family": "efficientvit", ...} (docs/efficientvit-sam-spec.md names every key)
    efficientvit_sam.pt      torch.save({"state_dict": state_dict}): the layout efficientvit's Trainer.save_model
                             writes and efficientsam's load_state_dict_from_file unwraps (it takes a bare one too)
    efficientvit_sam.h5      the same state dict, one flat dotted dataset per key
    image_points_embeddings.bin   prompt_encoder.get_dense_pe(), raw little-endian f32
    ImageEncoder.onnx        with --onnx: image_encoder (normalised input -> embeddings), TorchScript, opset 17
    efficientvit_sam_decoder.onnx  with --onnx: the official-style decoder (efficientsam's SamOnnxModel, all 4
                             masks, point count dynamic), TorchScript, opset 17; both run by onnxruntime
    efficientvit_sam_decoder_deployment.onnx  with --onnx: the decoder as MIT Han Lab's deployment/onnx/
                             export_decoder.py exports it (points only, no mask input), run by onnxruntime too
    manifest.json, README.md
    references/
      resized_image.npy      the image the predictor gets (uint8 [h, w, 3], longer side = the encoder's input)
      input_image.npy        the encoder's input as EfficientViTSam.transform makes it [1, 3, S, S]
      image_embeddings.npy   the image encoder's output [1, C, g, g]
      modules/<path>.npy     image-encoder module outputs (tiny), execution order in the manifest
      <case>/onnx_*.npy      official-decoder inputs in the prompt frame (box corners labelled 2, 3 after the
                             points, else a (0, 0, -1) padding point) and outputs for all 4 masks
      <case>/split_*.npy     point-only cases: prompt encoder without padding point + predict_masks
      <case>/point_coords, point_labels, box, mask_input, multimask_output   EfficientViTSamPredictor.predict's inputs
      <case>/low_res_masks, iou_predictions, masks_binary                    its outputs
      point1/modules/<path>.npy  prompt-encoder and mask-decoder module outputs (tiny)

Cases are export_reference.py's point1, points2_pos_neg, points5, box, box_point and point1_with_mask_input
(its points16 / points_max are left out to keep the set small), in the original-image frame; the predictor
maps them to the prompt frame (longest side 1024, not the encoder's 512 for L*), and so do the onnx_* inputs.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import types
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_model  # noqa: E402
import export_reference  # noqa: E402
import sam_configs  # noqa: E402
from export_reference import (  # noqa: E402
    ModuleRecorder, OutDir, file_entries, max_abs, official_inputs, prompt_summary, run_official, run_split,
    synthetic_pixels, to_numpy, write_dense_pe, write_module_dumps, write_state_dict_h5,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from efficientsam.models.efficientvit.backbone import EfficientViTLargeBackbone
    from efficientsam.models.efficientvit.sam import (
        EfficientViTSam, EfficientViTSamImageEncoder, EfficientViTSamPredictor, SamNeck, SamResize,
    )
    from efficientsam.models.nn.norm import LayerNorm2d, set_norm_eps
    from efficientsam.models.nn.ops import ConvLayer, UpSampleLayer
    from efficientsam.models.utils import load_state_dict_from_file
    from efficientsam.sam_model_zoo import REGISTERED_EFFICIENTVIT_SAM_MODEL, create_efficientvit_sam_model
    from efficientsam.segment_anything.modeling import MaskDecoder, PromptEncoder, TwoWayTransformer
    from efficientsam.segment_anything.modeling import common as evit_common
    from efficientsam.segment_anything.modeling import prompt_encoder as evit_prompt_encoder
    from efficientsam.segment_anything.utils.onnx import SamOnnxModel

EXPORTER_MARK = "converters/export_efficientvit_sam.py"
OPSET = 17
CHECK_ATOL = 1e-5
ONNX_ATOL = 1e-3  # onnxruntime vs PyTorch on the embeddings (different kernels, float32)

# --- upstream constants (efficientsam 1.0.0; file:line refs are that wheel's) ---------------------

# sam_model_zoo.py L17-23: every variant gets set_norm_eps(model, 1e-6) (BatchNorm2d, nn.LayerNorm and its
# subclass LayerNorm2d; that includes the mask decoder's TwoWayTransformer LayerNorms, 1e-5 in SAM).
ZOO_NORM_EPS = 1e-6
LITE_MLA_EPS = 1e-15  # ops.py L533, LiteMLA(eps=1.0e-15); not a norm: set_norm_eps leaves it
SAM_LAYERNORM2D_EPS = 1e-6  # segment_anything/modeling/common.py L32 (prompt encoder, output upscaling)
UPSTREAM_NECK_GRID = 64  # sam.py L118: UpSampleLayer(size=(64, 64)) in SamNeck
UPSTREAM_NECK_NORM_DIM = 256  # sam.py L177: EfficientViTSamImageEncoder.norm = build_norm("ln2d", 256)
UPSTREAM_PROMPT_FRAME = 1024  # sam.py L575: image_size=(1024, image_size); L559-560 the prompt encoder's sizes
# sam.py L211-212: Normalize after ToTensor (0-1 units)
PIXEL_MEAN_0_255 = [123.675, 116.28, 103.53]
PIXEL_STD_0_255 = [58.395, 57.12, 57.375]

# EfficientViTLargeBackbone defaults (backbone.py L213-215) used by L0/L1/L2
L_BLOCKS = ["res", "fmb", "fmb", "mb", "att"]
L_EXPANDS = [1, 4, 4, 4, 6]
L_FEWER_NORM = [False, False, False, True, True]
XL_BLOCKS = ["res", "fmb", "fmb", "fmb", "att@3", "att@3"]
XL_EXPANDS = [1, 4, 4, 4, 4, 6]
XL_FEWER_NORM = [False, False, False, False, True, True]
SAM_DECODER = {"transformerDim": 256, "depth": 2, "numHeads": 8, "mlpDim": 2048, "attentionDownsampleRate": 2,
               "numMultimaskOutputs": 3, "iouHeadDepth": 3, "iouHeadHiddenDim": 256}  # sam.py L563-574


def _variant(name: str, image_size: int, widths, depths, blocks, expands, fewer, neck_stages, head_depth,
             neck_expand, ref: str) -> Dict[str, Any]:
    return {
        "name": name, "upstream": {"zooName": f"efficientvit-sam-{name}", "builder": f"efficientvit_sam_{name}",
                                   "ref": ref},
        "imageEncoder": {
            "imageSize": image_size, "widths": widths, "depths": depths, "blockTypes": blocks,
            "expandRatios": expands, "fewerNorm": fewer, "qkvDim": 32,
            "neck": {"inputStages": neck_stages, "headWidth": 256, "headDepth": head_depth,
                     "expandRatio": neck_expand, "middleOp": "fmb", "outChannels": 256,
                     "upsampleSize": UPSTREAM_NECK_GRID},
        },
        "promptFrameSize": UPSTREAM_PROMPT_FRAME,
        "promptEncoder": {"maskInChannels": 16},
        "maskDecoder": dict(SAM_DECODER),
    }


W5, W6 = [32, 64, 128, 256, 512], [32, 64, 128, 256, 512, 1024]
VARIANTS: Dict[str, Dict[str, Any]] = {
    # sam.py L579-594 / backbone.py L341-347
    "l0": _variant("l0", 512, W5, [1, 1, 1, 4, 4], L_BLOCKS, L_EXPANDS, L_FEWER_NORM,
                   ["stage4", "stage3", "stage2"], 4, 1, "sam.py L579-594, backbone.py L341-347"),
    "l1": _variant("l1", 512, W5, [1, 1, 1, 6, 6], L_BLOCKS, L_EXPANDS, L_FEWER_NORM,
                   ["stage4", "stage3", "stage2"], 8, 1, "sam.py L597-612, backbone.py L350-356"),
    "l2": _variant("l2", 512, W5, [1, 2, 2, 8, 8], L_BLOCKS, L_EXPANDS, L_FEWER_NORM,
                   ["stage4", "stage3", "stage2"], 12, 1, "sam.py L615-630, backbone.py L359-365"),
    "xl0": _variant("xl0", 1024, W6, [0, 1, 1, 2, 3, 3], XL_BLOCKS, XL_EXPANDS, XL_FEWER_NORM,
                    ["stage5", "stage4", "stage3"], 6, 4, "sam.py L633-655"),
    "xl1": _variant("xl1", 1024, W6, [1, 2, 2, 4, 6, 6], XL_BLOCKS, XL_EXPANDS, XL_FEWER_NORM,
                    ["stage5", "stage4", "stage3"], 12, 4, "sam.py L658-680"),
}

# L0's structure, shrunk: 96 input -> stage sides 48, 24, 12, 6, 3; the embedding grid (12) is stage 2's
# side, so stage 2 passes the neck's resize unchanged and stages 3, 4 are bicubic-upsampled x2, x4, exactly
# as at L0 (512 -> stage 2 is 64 = the grid). The prompt frame is twice the input, as 1024 is to L0's 512.
# qkvDim 8 keeps H*W > dim on the 3x3 stage 4 (9 tokens), so LiteMLA takes its linear branch as at full size.
# (128 with widths 4..32 made the set 8.6 MB, most of it module dumps and 64x64 masks.)
TINY: Dict[str, Any] = {
    "name": "tiny", "upstream": {"zooName": None, "builder": "EfficientViTLargeBackbone + SamNeck + EfficientViTSam",
                                 "ref": "sam.py L579-594 (L0's structure)"},
    "imageEncoder": {
        "imageSize": 96, "widths": [4, 8, 16, 24, 32], "depths": [1, 1, 1, 1, 1], "blockTypes": L_BLOCKS,
        "expandRatios": L_EXPANDS, "fewerNorm": L_FEWER_NORM, "qkvDim": 8,
        "neck": {"inputStages": ["stage4", "stage3", "stage2"], "headWidth": 32, "headDepth": 2, "expandRatio": 1,
                 "middleOp": "fmb", "outChannels": 32, "upsampleSize": 12},
    },
    "promptFrameSize": 192,
    # 16 mask channels as upstream (4 would make mask_downscaling's first LayerNorm2d see one channel).
    "promptEncoder": {"maskInChannels": 16},
    "maskDecoder": {"transformerDim": 32, "depth": 2, "numHeads": 2, "mlpDim": 64, "attentionDownsampleRate": 2,
                    "numMultimaskOutputs": 3, "iouHeadDepth": 3, "iouHeadHiddenDim": 32},
}
CONFIGS = {"tiny": TINY, **VARIANTS}
CASES = ("point1", "points2_pos_neg", "points5", "box", "box_point", "point1_with_mask_input")


class SetDir(OutDir):
    """OutDir that may wipe and rewrite an earlier export of this script, and nothing else."""

    @staticmethod
    def _is_our_export(root: Path) -> bool:
        manifest = root / "manifest.json"
        return manifest.exists() and json.loads(manifest.read_text()).get("exporter_script") == EXPORTER_MARK


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(CONFIGS), required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="a released-style checkpoint (efficientvit_sam_l0.pt ...; a state dict, bare or under "
                             "'state_dict', read by upstream's load_state_dict_from_file) instead of seeded weights")
    parser.add_argument("--image", type=Path, default=None, metavar="PATH",
                        help="a photo instead of the synthetic image, resized as the predictor resizes it "
                             "(SamResize: longer side to the encoder's input size)")
    parser.add_argument("--module-dumps", choices=["auto", "on", "off"], default="auto",
                        help="per-module output dumps (auto: on for tiny only)")
    parser.add_argument("--onnx", action="store_true",
                        help="also export the image encoder to ImageEncoder.onnx, the official-style decoder to "
                             f"{DECODER_ONNX} and upstream's deployment decoder to {DEPLOYMENT_DECODER_ONNX}, each "
                             "checked with onnxruntime")
    return parser.parse_args(argv)


# --- configuration ------------------------------------------------------------------------------


def resolve(name: str) -> Dict[str, Any]:
    """config.json for ``name``: the Swift SAMConfig layout plus every EfficientViT hyperparameter."""
    base = copy.deepcopy(CONFIGS[name])
    enc = base["imageEncoder"]
    frame = base["promptFrameSize"]
    stages = _stage_table(enc)
    neck = enc["neck"]
    by_name = {f"stage{s['index']}": s for s in stages}
    neck.update(
        inputChannels=[by_name[k]["width"] for k in neck["inputStages"]],
        inputResolutions=[by_name[k]["resolution"] for k in neck["inputStages"]],
        inputConv={"kernel": 1, "bias": False, "norm": "bn2d", "activation": None},
        # ops.py L97's "size already matches" shortcut never fires (a tuple compared with val2list's list):
        # equal sizes go through F.interpolate too, which at scale 1 is the identity.
        upsampleMode="bicubic", upsampleAlignCorners=False, upsampleCubicCoeff=-0.75,
        fuse="add",
        middleBlock={"type": neck["middleOp"], "residual": "identity", "kernel": 3, "bias": False,
                     "norms": ["bn2d", "bn2d"], "activations": ["gelu_tanh", None],
                     "midChannels": round(neck["headWidth"] * neck["expandRatio"])},
        outputConv={"kernel": 1, "bias": True, "norm": None, "activation": None},
    )
    grid = neck["upsampleSize"]
    image_encoder = {
        "family": "efficientvit",
        "backbone": "EfficientViTLargeBackbone",
        "inChannels": 3,
        **enc,
        "headsRatio": 1.0,
        "norm": "bn2d",
        "activation": "gelu_tanh",
        "attention": {"kernel": "relu", "eps": LITE_MLA_EPS, "branch": "linear if H*W > qkvDim else quadratic",
                      "qkvBias": False, "aggregationBias": False, "projBias": False, "projNorm": "bn2d"},
        "stages": stages,
        "outputNorm": {"type": "ln2d", "channels": neck["outChannels"], "eps": ZOO_NORM_EPS},
        "neckDim": neck["outChannels"],
        "outputGrid": grid,
        "upstreamImageSize": [frame, enc["imageSize"]],
        "imagePreprocessing": {
            "resize": "efficientvitSam",
            "pixelMean": [m / 255 for m in PIXEL_MEAN_0_255],
            "pixelStd": [s / 255 for s in PIXEL_STD_0_255],
            "pixelUnits": "0-1",
            "longestSide": enc["imageSize"],
            "interpolation": "pil_bilinear",
            "resizeOnlyIfLongestSideDiffers": True,
            "padValue": 0.0,
            "padAfterNormalize": True,
            "promptFrameSize": frame,
        },
    }
    cfg: Dict[str, Any] = {
        "name": name,
        "modelFamily": "efficientvit_sam",
        "imageEncoder": image_encoder,
        "promptEncoder": dict(base["promptEncoder"]),
        "maskDecoder": dict(base["maskDecoder"]),
        "minPoints": 1,
        "maxPoints": export_reference.MAX_POINTS,
        "maskThreshold": 0.0,
        "eps": {"batchNorm2d": ZOO_NORM_EPS, "layerNorm": ZOO_NORM_EPS, "layerNorm2d": SAM_LAYERNORM2D_EPS,
                "encoderLayerNorm2d": ZOO_NORM_EPS, "liteMLA": LITE_MLA_EPS},
        "upstream": {"package": "efficientsam", "version": metadata.version("efficientsam"), **base["upstream"]},
    }
    # sam_configs' derived prompt-encoder / decoder geometry, then the prompt frame (not the encoder's input).
    sam_configs._fill_prompt_encoder(cfg, grid)
    cfg["promptEncoder"]["inputImageSize"] = frame
    sam_configs._fill_mask_decoder(cfg["maskDecoder"], grid)
    cfg["maskDecoder"]["transformerLayerNormEps"] = ZOO_NORM_EPS
    cfg["upstreamPatches"] = upstream_patches(cfg)
    return cfg


def _stage_table(enc: Dict[str, Any]) -> List[Dict[str, Any]]:
    """What EfficientViTLargeBackbone.__init__ (backbone.py L219-287) builds per stage."""
    size = enc["imageSize"]
    stages = []
    for i, (width, depth, block, expand, fewer) in enumerate(zip(
            enc["widths"], enc["depths"], enc["blockTypes"], enc["expandRatios"], enc["fewerNorm"])):
        size = (size - 1) // 2 + 1  # every stage starts with a stride-2 3x3 (pad 1)
        stage: Dict[str, Any] = {"index": i, "width": width, "stride": 2 ** (i + 1), "resolution": size}
        if i == 0:
            stage["stem"] = {"type": "conv", "kernel": 3, "stride": 2, "bias": False, "norm": "bn2d",
                             "activation": "gelu_tanh"}
        else:
            down = block if block in ("mb", "fmb") else "mb"  # backbone.py L248
            stage["downsample"] = {"type": down, "stride": 2, "expandRatio": expand * 4, "fewerNorm": fewer,
                                   "residual": None}
        attention = block.startswith("att")
        stage["blocks"] = {"type": "efficientvit" if attention else block, "count": depth,
                           "residual": "identity", "expandRatio": expand, "fewerNorm": fewer if not attention else None}
        if attention:
            heads = int(width // enc["qkvDim"] * 1.0)
            stage["blocks"]["attention"] = {"scales": [3] if block == "att@3" else [5], "heads": heads,
                                            "dimPerHead": enc["qkvDim"], "totalDim": heads * enc["qkvDim"],
                                            "tokens": size * size,
                                            "branch": "linear" if size * size > enc["qkvDim"] else "quadratic"}
            stage["blocks"]["localModule"] = {"type": "mb", "expandRatio": expand, "biases": [True, True, False],
                                              "norms": [None, None, "bn2d"]}
        stages.append(stage)
    return stages


def upstream_patches(cfg: Dict[str, Any]) -> List[Dict[str, str]]:
    """Departures from upstream's builders this config needs (none for the five released variants)."""
    if cfg["name"] != "tiny":
        return []
    enc, pe, md = cfg["imageEncoder"], cfg["promptEncoder"], cfg["maskDecoder"]
    return [
        {"what": f"every image_encoder.neck.input_ops.*.op_list.1 (UpSampleLayer) gets size "
                 f"({enc['outputGrid']}, {enc['outputGrid']}) instead of (64, 64); no weights involved",
         "why": "efficientsam/models/efficientvit/sam.py L118 (SamNeck) hard-codes UpSampleLayer(size=(64, 64)); "
                "the tiny set's embedding grid is 12 so its low-res masks are 48x48, not 256x256"},
        {"what": f"image_encoder.norm rebuilt as LayerNorm2d({enc['neckDim']}) (same class, name and eps)",
         "why": "sam.py L177 (EfficientViTSamImageEncoder.__init__) hard-codes build_norm('ln2d', 256)"},
        {"what": f"EfficientViTSam assembled directly with PromptEncoder(embed_dim={pe['embedDim']}, "
                 f"image_embedding_size=({pe['imageEmbeddingSize']}, {pe['imageEmbeddingSize']}), "
                 f"input_image_size=({pe['inputImageSize']}, {pe['inputImageSize']}), mask_in_chans="
                 f"{pe['maskInChannels']}), MaskDecoder/TwoWayTransformer at width {md['transformerDim']} and "
                 f"image_size=({pe['inputImageSize']}, {enc['imageSize']}); set_norm_eps(model, 1e-6) as the zoo",
         "why": "sam.py L554-576 (build_efficientvit_sam) hard-codes SAM's 256-wide decoder, a 64 grid and the "
                "1024 prompt frame"},
    ]


# --- building ----------------------------------------------------------------------------------------


def build_from_config(cfg: Dict[str, Any]) -> EfficientViTSam:
    """The upstream classes assembled from config.json (what a port reads), in eval mode."""
    enc, neck, pe, md = cfg["imageEncoder"], cfg["imageEncoder"]["neck"], cfg["promptEncoder"], cfg["maskDecoder"]
    backbone = EfficientViTLargeBackbone(
        width_list=enc["widths"], depth_list=enc["depths"], block_list=enc["blockTypes"],
        expand_list=enc["expandRatios"], fewer_norm_list=enc["fewerNorm"], in_channels=enc["inChannels"],
        qkv_dim=enc["qkvDim"], norm=enc["norm"], act_func="gelu",
    )
    sam_neck = SamNeck(
        fid_list=neck["inputStages"], in_channel_list=neck["inputChannels"], head_width=neck["headWidth"],
        head_depth=neck["headDepth"], expand_ratio=neck["expandRatio"], middle_op=neck["middleOp"],
        out_dim=neck["outChannels"], norm=enc["norm"], act_func="gelu",
    )
    for op in sam_neck.modules():
        if isinstance(op, UpSampleLayer):
            op.size = [neck["upsampleSize"]] * 2  # == upstream's [64, 64] except in the tiny config
    image_encoder = EfficientViTSamImageEncoder(backbone, sam_neck)
    if neck["outChannels"] != UPSTREAM_NECK_NORM_DIM:
        image_encoder.norm = LayerNorm2d(neck["outChannels"])
    sam = EfficientViTSam(
        image_encoder=image_encoder,
        prompt_encoder=PromptEncoder(
            embed_dim=pe["embedDim"], image_embedding_size=(pe["imageEmbeddingSize"],) * 2,
            input_image_size=(pe["inputImageSize"],) * 2, mask_in_chans=pe["maskInChannels"],
        ),
        mask_decoder=MaskDecoder(
            num_multimask_outputs=md["numMultimaskOutputs"],
            transformer=TwoWayTransformer(depth=md["depth"], embedding_dim=md["transformerDim"], mlp_dim=md["mlpDim"],
                                          num_heads=md["numHeads"],
                                          attention_downsample_rate=md["attentionDownsampleRate"]),
            transformer_dim=md["transformerDim"], iou_head_depth=md["iouHeadDepth"],
            iou_head_hidden_dim=md["iouHeadHiddenDim"],
        ),
        image_size=tuple(enc["upstreamImageSize"]),
    )
    set_norm_eps(sam, ZOO_NORM_EPS)  # as create_efficientvit_sam_model does
    return sam.eval()


def build_upstream(cfg: Dict[str, Any]) -> EfficientViTSam:
    """The released variants through upstream's zoo (pretrained=False); tiny through build_from_config.
    Either way the model must have exactly the state-dict shapes that build_from_config gives from config.json."""
    zoo = cfg["upstream"]["zooName"]
    sam = create_efficientvit_sam_model(zoo, pretrained=False).eval() if zoo else build_from_config(cfg)
    if zoo:
        check_config_describes(sam, cfg)
    return sam


def check_config_describes(sam: nn.Module, cfg: Dict[str, Any]) -> None:
    reference = {k: tuple(v.shape) for k, v in build_from_config(cfg).state_dict().items()}
    actual = {k: tuple(v.shape) for k, v in sam.state_dict().items()}
    if reference != actual:
        diff = sorted(set(reference.items()) ^ set(actual.items()))[:10]
        raise RuntimeError(f"config.json does not describe upstream's {cfg['name']}: {diff}")
    size = cfg["imageEncoder"]["imageSize"]
    if tuple(sam.image_size) != tuple(cfg["imageEncoder"]["upstreamImageSize"]):
        raise RuntimeError(f"image_size {sam.image_size} != {cfg['imageEncoder']['upstreamImageSize']} ({size})")


@torch.no_grad()
def seeded_init_(sam: nn.Module) -> None:
    """build_model.seeded_init_ for efficientsam's classes: every float state-dict entry redrawn."""
    touched = {id(t) for module in sam.modules() for t in _init_module_(module)}
    missed = [k for k, t in sam.state_dict(keep_vars=True).items() if t.is_floating_point() and id(t) not in touched]
    if missed:
        raise RuntimeError(f"seeded_init_ left these untouched: {missed}")
    sam.train(False)


def _init_module_(module: nn.Module) -> list:
    """efficientsam's copies of SAM's LayerNorm2d and PositionEmbeddingRandom get build_model's draws; the rest
    (Conv2d, ConvTranspose2d, Linear, BatchNorm2d, nn.LayerNorm incl. EfficientViT's LayerNorm2d, Embedding)
    go to build_model._init_module_."""
    if isinstance(module, evit_common.LayerNorm2d):
        return build_model._init_norm_affine_(module)
    if isinstance(module, evit_prompt_encoder.PositionEmbeddingRandom):
        module.positional_encoding_gaussian_matrix.normal_(0.0, 1.0)
        return [module.positional_encoding_gaussian_matrix]
    return build_model._init_module_(module)


def build_weighted(config: str, seed: int = 0, checkpoint: Optional[Path] = None) -> EfficientViTSam:
    """The model of a config with seeded weights (or ``checkpoint``'s); dump_modules.py's --builder."""
    cfg = resolve(config)
    torch.manual_seed(seed)
    sam = build_upstream(cfg)
    if checkpoint:
        sam.load_state_dict(load_state_dict_from_file(str(checkpoint)), strict=True)
        sam.eval()
    else:
        seeded_init_(sam)
    return sam


class EncoderRecorder(ModuleRecorder):
    """export_reference's ModuleRecorder, skipping what no port that folds BatchNorm can observe (and what
    would only make the committed set bigger): the convolution output of a ConvLayer whose norm is a
    BatchNorm2d (``<layer>.conv``; its ``<layer>.norm`` output is the folded convolution's)."""

    def __init__(self, model: nn.Module, prefixes: List[str]) -> None:
        self.folded = {f"{name}.conv" for name, m in model.named_modules()
                       if isinstance(m, ConvLayer) and isinstance(m.norm, nn.BatchNorm2d)}
        super().__init__(model, prefixes)

    def worth_dumping(self, name: str) -> bool:  # type: ignore[override]
        return name not in self.folded and ModuleRecorder.worth_dumping(name)


# --- the image -----------------------------------------------------------------------------------------


def photo_pixels(path: Path, size: int) -> np.ndarray:
    """A photo as this family's predictor resizes it: RGB, SamResize(size) (PIL bilinear, longer side = size)."""
    from PIL import Image

    with Image.open(path) as photo:
        rgb = np.asarray(photo.convert("RGB"))
    return np.ascontiguousarray(SamResize(size)(rgb))


@torch.no_grad()
def export_encoder(out: OutDir, sam: EfficientViTSam, predictor: EfficientViTSamPredictor, pixels: np.ndarray,
                   dumps: bool) -> Dict[str, Any]:
    """EfficientViTSam.transform + image encoder (module dumps), then the predictor's set_image, checked equal."""
    input_image = sam.transform(pixels).unsqueeze(0)  # what EfficientViTSamPredictor.set_image feeds the encoder
    recorder = EncoderRecorder(sam, ["image_encoder"]) if dumps else None
    embeddings = sam.image_encoder(input_image)
    if recorder:
        recorder.remove()
    predictor.set_image(pixels)
    result: Dict[str, Any] = {
        "pixels": pixels, "input_image": input_image, "embeddings": embeddings,
        "files": {
            "resized_image": out.save_npy("references/resized_image.npy", pixels),
            "input_image": out.save_npy("references/input_image.npy", input_image),
            "image_embeddings": out.save_npy("references/image_embeddings.npy", embeddings),
        },
        "checks": {
            "predictor_features_vs_image_embeddings_max_abs": max_abs(to_numpy(predictor.features),
                                                                       to_numpy(embeddings)),
            "image_embeddings_std": float(to_numpy(embeddings).std()),
            "predictor_original_size": list(predictor.original_size),
            "predictor_input_size": list(predictor.input_size),
        },
    }
    if recorder:
        result["module_outputs"] = write_module_dumps(out, recorder.calls, "references/modules")
    return result


# --- prompt cases ------------------------------------------------------------------------------------------


def prompt_frame(predictor: EfficientViTSamPredictor, case: Dict[str, Any]) -> Dict[str, Any]:
    """The case's prompts in the prompt encoder's frame, as EfficientViTSamPredictor.predict maps them."""
    moved = {k: case[k] for k in ("name", "labels") if k in case}
    if "points" in case:
        moved["points"] = predictor.apply_coords(case["points"])
    if "box" in case:
        moved["box"] = predictor.apply_boxes(case["box"][None])[0]
    return moved


def onnx_model_for(sam: EfficientViTSam) -> SamOnnxModel:
    """efficientsam's own SamOnnxModel (return_single_mask=False) on the model's prompt encoder and decoder.
    It reads ``model.image_encoder.img_size`` for the frame it normalises points in and upsamples masks to;
    EfficientViTSamImageEncoder has no such attribute, and the frame is image_size[0] (the prompt frame),
    so the wrapper gets a view of the model with that one attribute (no module changes). The view is a Module
    holding the two parts, so the ONNX export sees their weights as parameters (not untraced constants)."""
    return SamOnnxModel(DecoderView(sam), return_single_mask=False)


class DecoderView(nn.Module):
    """EfficientViTSam's prompt encoder and mask decoder under their own names, with the prompt frame as
    ``image_encoder.img_size`` (what SamOnnxModel reads)."""

    def __init__(self, sam: EfficientViTSam) -> None:
        super().__init__()
        self.prompt_encoder = sam.prompt_encoder
        self.mask_decoder = sam.mask_decoder
        self.image_encoder = types.SimpleNamespace(img_size=sam.image_size[0])
        self.mask_threshold = sam.mask_threshold


@torch.no_grad()
def export_case(out: OutDir, ctx: Dict[str, Any], case: Dict[str, Any], mask: Optional[np.ndarray],
                record: bool) -> Dict[str, Any]:
    sam, predictor, name = ctx["sam"], ctx["predictor"], case["name"]
    folder = f"references/{name}"
    entry: Dict[str, Any] = {"name": name, "prompt": prompt_summary(case), "multimask_output": True, "checks": {}}
    checks = entry["checks"]

    framed = prompt_frame(predictor, case)
    inputs = official_inputs(framed, ctx["mask_size"], mask)
    recorder = ModuleRecorder(sam, ["prompt_encoder", "mask_decoder"]) if record else None
    official = run_official(ctx["onnx_model"], ctx["embeddings"], inputs, ctx["orig_im_size"])
    if recorder:
        recorder.remove()
        entry["module_outputs"] = write_module_dumps(out, recorder.calls, f"{folder}/modules")
    ctx["official"][name] = official
    entry["official"] = {
        "inputs": {"image_embeddings": "references/image_embeddings.npy",
                   **{k: out.save_npy(f"{folder}/onnx_{k}.npy", v) for k, v in inputs.items()},
                   "orig_im_size": ctx["orig_im_size"].tolist()},
        "outputs": {k: out.save_npy(f"{folder}/onnx_{k}.npy", v) for k, v in official.items()},
        "how": "efficientsam's SamOnnxModel(return_single_mask=False), img_size = the prompt frame: all 4 masks",
    }

    # The same decoder through the prompt encoder's own forward + predict_masks (no ONNX-style embedding).
    direct = run_direct(sam, ctx["embeddings"], framed, mask)
    checks["prompt_encoder_predict_masks_vs_official_masks_max_abs"] = max_abs(direct["masks"],
                                                                               official["low_res_masks"])
    checks["prompt_encoder_predict_masks_vs_official_iou_max_abs"] = max_abs(direct["iou"],
                                                                             official["iou_predictions"])

    entry["predictor"] = export_predictor(out, ctx, case, mask, official, checks)
    if "box" not in case and mask is None:
        entry["split"] = export_split(out, ctx, framed, official, checks)
    bad = {k: v for k, v in checks.items() if k.endswith("_max_abs") and not k.startswith("split_unpadded")
           and not v < CHECK_ATOL}
    if bad:
        raise AssertionError(f"{name}: {bad} (tolerance {CHECK_ATOL})")
    entry["files"] = sorted(p.name for p in out.root.joinpath(folder).glob("*.npy"))
    return entry


@torch.no_grad()
def run_direct(sam: EfficientViTSam, embeddings: torch.Tensor, framed: Dict[str, Any],
               mask: Optional[np.ndarray]) -> Dict[str, np.ndarray]:
    points = None
    if "points" in framed:  # as EfficientViTSamPredictor.predict makes its tensors
        points = (torch.as_tensor(framed["points"], dtype=torch.float)[None],
                  torch.as_tensor(framed["labels"], dtype=torch.int)[None])
    box = torch.as_tensor(framed["box"], dtype=torch.float)[None] if "box" in framed else None
    masks_in = torch.as_tensor(mask, dtype=torch.float) if mask is not None else None
    sparse, dense = sam.prompt_encoder(points=points, boxes=box, masks=masks_in)
    masks, iou = sam.mask_decoder.predict_masks(
        image_embeddings=embeddings, image_pe=sam.prompt_encoder.get_dense_pe(),
        sparse_prompt_embeddings=sparse, dense_prompt_embeddings=dense)
    return {"masks": to_numpy(masks), "iou": to_numpy(iou)}


def export_predictor(out: OutDir, ctx: Dict[str, Any], case: Dict[str, Any], mask: Optional[np.ndarray],
                     official: Dict[str, np.ndarray], checks: Dict[str, float]) -> Dict[str, Any]:
    folder = f"references/{case['name']}"
    inputs = {"multimask_output": out.save_npy(f"{folder}/multimask_output.npy", np.array([1.0], np.float32))}
    if "points" in case:
        inputs["point_coords"] = out.save_npy(f"{folder}/point_coords.npy", case["points"][None])
        inputs["point_labels"] = out.save_npy(f"{folder}/point_labels.npy", case["labels"][None])
    if "box" in case:
        inputs["box"] = out.save_npy(f"{folder}/box.npy", case["box"][None])
    if mask is not None:
        inputs["mask_input"] = out.save_npy(f"{folder}/mask_input.npy", mask)
    binary, iou, low_res = ctx["predictor"].predict(
        point_coords=case.get("points"), point_labels=case.get("labels"), box=case.get("box"),
        mask_input=None if mask is None else mask[0], multimask_output=True)
    result = {"low_res_masks": low_res[None], "iou_predictions": iou[None], "masks_binary": binary[None]}
    outputs = {k: out.save_npy(f"{folder}/{k}.npy", v) for k, v in result.items()}
    # multimask_output=True: MaskDecoder.forward keeps masks 1..3 of the 4 (mask_decoder.py L96-100).
    checks["predictor_vs_official_masks_1to3_max_abs"] = max_abs(result["low_res_masks"],
                                                                 official["low_res_masks"][:, 1:])
    checks["predictor_vs_official_iou_1to3_max_abs"] = max_abs(result["iou_predictions"],
                                                               official["iou_predictions"][:, 1:])
    return {"call": "EfficientViTSamPredictor.predict(multimask_output=True, return_logits=False)",
            "inputs": inputs, "outputs": outputs}


def export_split(out: OutDir, ctx: Dict[str, Any], framed: Dict[str, Any], official: Dict[str, np.ndarray],
                 checks: Dict[str, float]) -> Dict[str, Any]:
    folder = f"references/{framed['name']}"
    points, labels = np.asarray(framed["points"]), np.asarray(framed["labels"])
    split = run_split(ctx["sam"], ctx["embeddings"], points, labels, pad=False)
    padded = run_split(ctx["sam"], ctx["embeddings"], points, labels, pad=True)
    checks["split_padded_vs_official_masks_max_abs"] = max_abs(padded["masks"], official["low_res_masks"])
    checks["split_padded_vs_official_iou_max_abs"] = max_abs(padded["iou_predictions"], official["iou_predictions"])
    checks["split_unpadded_vs_official_masks_max_abs"] = max_abs(split["masks"], official["low_res_masks"])
    return {
        "inputs": {
            "points": out.save_npy(f"{folder}/split_points.npy", points[None]),
            "labels": out.save_npy(f"{folder}/split_labels.npy", labels[None]),
            "image_embeddings": "references/image_embeddings.npy",
            "image_positional_encoding": "image_points_embeddings.bin",
        },
        "outputs": {
            "sparse_embeddings": out.save_npy(f"{folder}/split_sparse_embeddings.npy", split["sparse_embeddings"]),
            "masks": out.save_npy(f"{folder}/split_masks.npy", split["masks"]),
            "iou_predictions": out.save_npy(f"{folder}/split_iou_predictions.npy", split["iou_predictions"]),
        },
        "note": "points in the prompt frame; prompt_encoder._embed_points(pad=False) (no padding point), "
                "dense = no_mask_embed broadcast, mask_decoder.predict_masks (all 4 masks)",
    }


# --- ONNX -----------------------------------------------------------------------------------------------------


DECODER_ONNX = "efficientvit_sam_decoder.onnx"


def export_decoder_onnx(out: OutDir, ctx: Dict[str, Any]) -> Dict[str, Any]:
    """The official-style decoder: efficientsam's SamOnnxModel (the one the cases' onnx_* outputs come from:
    prompt frame, all 4 masks) exported as segment-anything's scripts/export_onnx_model.py exports SAM's
    (TorchScript, constant folding, point count dynamic), then run by onnxruntime on every case."""
    path = out.path(DECODER_ONNX)
    sam = ctx["sam"]
    pe = sam.prompt_encoder
    torch.manual_seed(ctx["seed"])  # the dummy inputs only trace the graph; seeded so the file is reproducible
    dummy = (
        torch.randn(1, pe.embed_dim, *pe.image_embedding_size),
        torch.randint(0, sam.image_size[0], (1, 5, 2)).float(),
        torch.randint(0, 4, (1, 5)).float(),
        torch.randn(1, 1, *pe.mask_input_size),
        torch.tensor([1.0]),
        torch.tensor([1500.0, 2250.0]),
    )
    started = time.perf_counter()
    try:
        export_reference._torchscript_export(
            ctx["onnx_model"], dummy, path,
            input_names=["image_embeddings", "point_coords", "point_labels", "mask_input", "has_mask_input",
                         "orig_im_size"],
            output_names=["masks", "iou_predictions", "low_res_masks"],
            dynamic_axes={"point_coords": {1: "num_points"}, "point_labels": {1: "num_points"}})
        figures = export_reference.verify_decoder_onnx(ctx, path)
    except Exception as exc:  # record and move on, as for the encoder
        path.unlink(missing_ok=True)
        return {f"{DECODER_ONNX}_error": f"{type(exc).__name__}: {exc}"}
    worst = max(figures.values())
    if not worst < ONNX_ATOL:
        raise AssertionError(f"{DECODER_ONNX} vs PyTorch: {figures} (tolerance {ONNX_ATOL})")
    return {**figures, "decoder_exporter": "torch.onnx.export(dynamo=False), SamOnnxModel(return_single_mask=False)",
            "decoder_seconds": round(time.perf_counter() - started, 1)}


DEPLOYMENT_DECODER_ONNX = "efficientvit_sam_decoder_deployment.onnx"


class DeploymentDecoder(nn.Module):
    """The decoder as MIT Han Lab's applications/efficientvit_sam/deployment/onnx/export_decoder.py exports it
    (``DecoderOnnxModel``, return_single_mask=False): points only (labels as SamOnnxModel reads them), the
    no-mask embedding broadcast as the dense prompt, no mask input, no upscaling; masks and scores of all 4
    tokens, point batch and count dynamic. Its ONNX files hold no ``mask_downscaling`` weights."""

    def __init__(self, sam: EfficientViTSam) -> None:
        super().__init__()
        self.model = sam
        self.mask_decoder = sam.mask_decoder
        self.frame = sam.image_size[0]

    def forward(self, image_embeddings: torch.Tensor, point_coords: torch.Tensor, point_labels: torch.Tensor):
        pe = self.model.prompt_encoder
        sparse = pe.pe_layer._pe_encoding((point_coords + 0.5) / self.frame)
        labels = point_labels.unsqueeze(-1).expand_as(sparse)
        sparse = sparse * (labels != -1) + pe.not_a_point_embed.weight * (labels == -1)
        for i in range(pe.num_point_embeddings):
            sparse = sparse + pe.point_embeddings[i].weight * (labels == i)
        dense = pe.no_mask_embed.weight.reshape(1, -1, 1, 1).expand(
            image_embeddings.shape[0], -1, image_embeddings.shape[-2], image_embeddings.shape[-1])
        return self.model.mask_decoder.predict_masks(image_embeddings=image_embeddings, image_pe=pe.get_dense_pe(),
                                                     sparse_prompt_embeddings=sparse, dense_prompt_embeddings=dense)


def export_deployment_decoder_onnx(out: OutDir, ctx: Dict[str, Any]) -> Dict[str, Any]:
    """DeploymentDecoder through the TorchScript exporter with upstream's dummy shapes (16 prompts of 2 points),
    run by onnxruntime on every case without a mask input against the official run's masks and scores."""
    path = out.path(DEPLOYMENT_DECODER_ONNX)
    sam = ctx["sam"]
    pe = sam.prompt_encoder
    torch.manual_seed(ctx["seed"])
    dummy = (torch.randn(1, pe.embed_dim, *pe.image_embedding_size),
             torch.randint(0, sam.image_size[0], (16, 2, 2)).float(), torch.randint(0, 4, (16, 2)).float())
    try:
        with torch.no_grad():
            export_reference._torchscript_export(
                DeploymentDecoder(sam).eval(), dummy, path, input_names=["image_embeddings", "point_coords", "point_labels"],
                output_names=["masks", "iou_predictions"],
                dynamic_axes={"point_coords": {0: "batch_size", 1: "num_points"},
                              "point_labels": {0: "batch_size", 1: "num_points"}})
        session = export_reference._ort_session(path)
        worst_masks = worst_iou = 0.0
        for name, official in ctx["official"].items():
            folder = ctx["out"].root / "references" / name
            if float(np.load(folder / "onnx_has_mask_input.npy").ravel()[0]) != 0:
                continue
            feeds = {"image_embeddings": to_numpy(ctx["embeddings"]),
                     "point_coords": np.load(folder / "onnx_point_coords.npy"),
                     "point_labels": np.load(folder / "onnx_point_labels.npy")}
            masks, iou = session.run(None, feeds)
            worst_masks = max(worst_masks, max_abs(masks, official["low_res_masks"]))
            worst_iou = max(worst_iou, max_abs(iou, official["iou_predictions"]))
    except Exception as exc:  # record and move on, as for the encoder
        path.unlink(missing_ok=True)
        return {f"{DEPLOYMENT_DECODER_ONNX}_error": f"{type(exc).__name__}: {exc}"}
    if not max(worst_masks, worst_iou) < ONNX_ATOL:
        raise AssertionError(f"{DEPLOYMENT_DECODER_ONNX} vs PyTorch: masks {worst_masks}, iou {worst_iou}")
    return {"deployment_decoder_low_res_masks_max_abs": worst_masks, "deployment_decoder_iou_predictions_max_abs": worst_iou}


def export_encoder_onnx(out: OutDir, ctx: Dict[str, Any]) -> Dict[str, Any]:
    """image_encoder (normalised, padded input -> embeddings) via the TorchScript exporter, checked by onnxruntime."""
    path = out.path("ImageEncoder.onnx")
    started = time.perf_counter()
    try:
        export_reference._torchscript_export(ctx["sam"].image_encoder, (ctx["input_image"],), path,
                                             input_names=["image"], output_names=["imageEmbeddings"])
        (embeddings,) = export_reference._ort_session(path).run(None, {"image": to_numpy(ctx["input_image"])})
    except Exception as exc:  # record and move on: the h5 + npy set matters most
        path.unlink(missing_ok=True)
        return {"ImageEncoder.onnx_error": f"{type(exc).__name__}: {exc}"}
    diff = max_abs(embeddings, to_numpy(ctx["embeddings"]))
    if not diff < ONNX_ATOL:
        raise AssertionError(f"ImageEncoder.onnx vs PyTorch: {diff} (tolerance {ONNX_ATOL})")
    return {"image_embeddings_max_abs": diff, "exporter": "torch.onnx.export(dynamo=False)", "opset": OPSET,
            "seconds": round(time.perf_counter() - started, 1)}


# --- how much each easy mistake moves the outputs (so the set is known to catch it) ----------------------------


@torch.no_grad()
def sensitivity(ctx: Dict[str, Any]) -> Dict[str, float]:
    """Max abs change of the embeddings (or of point1's low-res masks) under a wrong choice, restored after."""
    sam, x, ref = ctx["sam"], ctx["input_image"], to_numpy(ctx["embeddings"])
    encoder = sam.image_encoder

    def embeddings_with(modules, attr, value) -> float:
        saved = [(m, getattr(m, attr)) for m in modules]
        try:
            for m, _ in saved:
                setattr(m, attr, value)
            return max_abs(to_numpy(encoder(x)), ref)
        finally:
            for m, old in saved:
                setattr(m, attr, old)

    report = {
        "gelu_erf_instead_of_tanh_embeddings_max_abs": embeddings_with(
            [m for m in encoder.modules() if isinstance(m, nn.GELU)], "approximate", "none"),
        "upsample_bilinear_instead_of_bicubic_embeddings_max_abs": embeddings_with(
            [m for m in encoder.modules() if isinstance(m, UpSampleLayer)], "mode", "bilinear"),
        "batchnorm_eps_1e-5_instead_of_1e-6_embeddings_max_abs": embeddings_with(
            [m for m in encoder.modules() if isinstance(m, nn.BatchNorm2d)], "eps", 1e-5),
        "output_ln2d_eps_1e-5_instead_of_1e-6_embeddings_max_abs": embeddings_with([encoder.norm], "eps", 1e-5),
    }
    norms = [m for m in sam.mask_decoder.transformer.modules() if isinstance(m, nn.LayerNorm)]
    inputs = {k: np.load(ctx["out"].root / f"references/point1/onnx_{k}.npy")
              for k in ("point_coords", "point_labels", "mask_input", "has_mask_input")}
    saved = [m.eps for m in norms]
    try:
        for m in norms:
            m.eps = 1e-5
        wrong = run_official(ctx["onnx_model"], ctx["embeddings"], inputs, ctx["orig_im_size"])
    finally:
        for m, eps in zip(norms, saved):
            m.eps = eps
    report["decoder_layernorm_eps_1e-5_instead_of_1e-6_point1_masks_max_abs"] = max_abs(
        wrong["low_res_masks"], ctx["official"]["point1"]["low_res_masks"])
    return report


# --- manifest and README -----------------------------------------------------------------------------------------


def provenance(args: argparse.Namespace) -> Dict[str, Any]:
    prov = export_reference.provenance(args)
    prov.pop("mobile_sam", None)
    prov.pop("timm", None)
    if not args.onnx:
        prov.pop("onnx", None)
        prov.pop("onnxruntime", None)
    prov["efficientsam"] = metadata.version("efficientsam")
    prov["torchvision"] = metadata.version("torchvision")
    prov["pillow"] = metadata.version("pillow")
    return prov


def dataflow(cfg: Dict[str, Any]) -> List[Dict[str, Any]]:
    frame = cfg["promptEncoder"]["inputImageSize"]
    return [
        {"stage": "preprocess (EfficientViTSam.transform)", "inputs": ["references/resized_image.npy"],
         "outputs": ["references/input_image.npy"],
         "how": "SamResize (no-op here: the longer side already is imageSize), ToTensor (/255), Normalize(mean/255, "
                "std/255), SamPad: zero-pad bottom/right to imageSize"},
        {"stage": "image_encoder", "inputs": ["references/input_image.npy"],
         "outputs": ["references/image_embeddings.npy"], "module_dumps": "references/modules/"},
        {"stage": "dense_positional_encoding", "inputs": [], "outputs": ["image_points_embeddings.bin"],
         "how": "prompt_encoder.get_dense_pe(), raw LE f32"},
        {"stage": "prompt transform (EfficientViTSamPredictor.apply_coords / apply_boxes)",
         "inputs": ["references/<case>/point_coords.npy", "references/<case>/box.npy"],
         "outputs": ["references/<case>/onnx_point_coords.npy"],
         "how": f"x * new_w / w, y * new_h / h with (new_h, new_w) = get_preprocess_shape(h, w, {frame}) "
                f"(the prompt frame, not the encoder's input size)"},
        {"stage": "official_decoder (SamOnnxModel, return_single_mask=False, img_size = prompt frame)",
         "inputs": ["references/image_embeddings.npy", "references/<case>/onnx_point_coords.npy",
                    "references/<case>/onnx_point_labels.npy", "references/<case>/onnx_mask_input.npy",
                    "references/<case>/onnx_has_mask_input.npy"],
         "outputs": ["references/<case>/onnx_low_res_masks.npy", "references/<case>/onnx_iou_predictions.npy"],
         "module_dumps": "references/point1/modules/ (case point1 only)"},
        {"stage": "split_decoder (point-only cases)",
         "inputs": ["references/image_embeddings.npy", "image_points_embeddings.bin",
                    "references/<case>/split_points.npy", "references/<case>/split_labels.npy"],
         "outputs": ["references/<case>/split_sparse_embeddings.npy", "references/<case>/split_masks.npy",
                     "references/<case>/split_iou_predictions.npy"]},
        {"stage": "predictor (EfficientViTSamPredictor.predict, multimask)",
         "inputs": ["references/resized_image.npy", "references/<case>/point_coords.npy",
                    "references/<case>/point_labels.npy", "references/<case>/box.npy",
                    "references/<case>/mask_input.npy", "references/<case>/multimask_output.npy"],
         "outputs": ["references/<case>/low_res_masks.npy", "references/<case>/iou_predictions.npy",
                     "references/<case>/masks_binary.npy"],
         "how": f"masks 1..3 of the 4; masks_binary = bilinear to {frame}x{frame}, crop to get_preprocess_shape("
                f"h, w, {frame}), bilinear to (h, w) (align_corners=False), > 0"},
    ]


def write_readme(out: OutDir, args: argparse.Namespace, cfg: Dict[str, Any], image_hw: List[int],
                 dumps: bool) -> None:
    enc, pe = cfg["imageEncoder"], cfg["promptEncoder"]
    s, g, d, frame = enc["imageSize"], enc["outputGrid"], enc["neckDim"], pe["inputImageSize"]
    weights = f"checkpoint `{args.checkpoint.name}`" if args.checkpoint else f"seeded random weights (seed {args.seed})"
    image = f"`{args.image.name}` resized to" if args.image else "synthetic"
    text = f"""# EfficientViT-SAM reference set: `{cfg['name']}`

Generated by `{EXPORTER_MARK}` (do not edit; rerun it):

    python {provenance(args)["command"]}

Upstream `efficientsam` {metadata.version('efficientsam')} classes (EfficientViTLargeBackbone + SamNeck + LayerNorm2d,
SAM's prompt encoder and mask decoder), CPU, float32, {weights}: every norm affine, bias and BatchNorm
statistic drawn away from identity. `efficientvit_sam.pt` is `torch.save({{"state_dict": ...}})` (what
upstream's `load_state_dict_from_file` reads); `efficientvit_sam.h5` holds the same, one flat dotted dataset
per key. `config.json` decodes as the Swift `SAMConfig` (`"modelFamily": "efficientvit_sam"`, imageEncoder
family `efficientvit`; every key is in docs/efficientvit-sam-spec.md; `upstreamPatches` lists where upstream
code had to be worked around). `manifest.json` lists every file (shape/dtype/sha256), case, check and the
module order.

* encoder input {s}x{s}, image embedding [1,{d},{g},{g}], low-res masks [1,4,{4 * g},{4 * g}]
* image: {image} {image_hw[0]}x{image_hw[1]} RGB (`references/resized_image.npy`), normalised in 0-1 units
  and zero-padded to {s}x{s} (`references/input_image.npy`)
* two frames: prompts (`point_coords`, `box`) are in the image's pixels; the predictor maps them to the
  {frame} prompt frame (longest side {frame}, not {s}), where `onnx_point_coords` and `split_points` are
* cases: `onnx_*` = official `SamOnnxModel` inputs/outputs (all 4 masks), `split_*` = prompt encoder without
  padding point + `predict_masks` (point-only cases), `low_res_masks`/`iou_predictions`/`masks_binary` =
  `EfficientViTSamPredictor.predict(multimask_output=True)`, checked against masks 1..3 of the official run
"""
    if dumps:
        text += ("* `references/modules/<module.path>.npy`: image-encoder module outputs; "
                 "`references/point1/modules/`:\n"
                 "  prompt-encoder and mask-decoder module outputs of case point1 (execution order in the manifest;\n"
                 "  byte-identical outputs stored once, see `same_as`)\n")
    out.path("README.md").write_text(text)


def _order_label(row: Dict[str, Any]) -> str:
    return row["module"] if row["call"] == 0 else f"{row['module']}#{row['call']}"


# --- main ------------------------------------------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    started = time.perf_counter()
    torch.set_grad_enabled(False)
    cfg = resolve(args.config)
    out = SetDir(args.out)
    sam = build_weighted(args.config, args.seed, args.checkpoint)
    dumps = args.module_dumps == "on" or (args.module_dumps == "auto" and args.config == "tiny")

    out.save_json("config.json", cfg)
    torch.save({"state_dict": sam.state_dict()}, out.path("efficientvit_sam.pt"))
    source = f"efficientsam EfficientViTSam ({args.config}) state_dict, " + (
        f"checkpoint {args.checkpoint.name}" if args.checkpoint else f"seeded random weights (seed {args.seed})")
    write_state_dict_h5(sam, out.path("efficientvit_sam.h5"), None, source)
    dense_pe = write_dense_pe(sam, out.path("image_points_embeddings.bin"))
    reload_check = check_checkpoint_reload(out.path("efficientvit_sam.pt"), cfg, sam)

    size = cfg["imageEncoder"]["imageSize"]
    pixels = photo_pixels(args.image, size) if args.image else synthetic_pixels(args.seed, size)
    predictor = EfficientViTSamPredictor(sam)
    enc = export_encoder(out, sam, predictor, pixels, dumps)
    ctx = {"sam": sam, "out": out, "predictor": predictor, "onnx_model": onnx_model_for(sam), "official": {},
           "seed": args.seed,
           "embeddings": enc["embeddings"], "input_image": enc["input_image"],
           "mask_size": list(sam.prompt_encoder.mask_input_size),
           "orig_im_size": np.array(pixels.shape[:2], dtype=np.float32)}
    height, width = pixels.shape[:2]
    cases = []
    for case in [c for c in export_reference.prompt_cases(args.seed, width, height) if c["name"] in CASES]:
        mask = None
        if "mask_from" in case:
            mask = np.load(out.root / f"references/{case['mask_from']}/low_res_masks.npy")[:, :1]
        cases.append(export_case(out, ctx, case, mask, record=dumps and case["name"] == "point1"))
    encoder_seconds = time.perf_counter() - started
    onnx_report = {**export_encoder_onnx(out, ctx), **export_decoder_onnx(out, ctx),
                   **export_deployment_decoder_onnx(out, ctx)} if args.onnx else {}

    checks = {**enc["checks"], **reload_check, "dense_pe_std": float(dense_pe.std()), "tolerance": CHECK_ATOL,
              "worst_case_max_abs": max(v for c in cases for k, v in c["checks"].items()
                                        if not k.startswith("split_unpadded")),
              "sensitivity": sensitivity(ctx)}
    if not checks["predictor_features_vs_image_embeddings_max_abs"] < CHECK_ATOL:
        raise AssertionError(f"predictor features differ: {checks['predictor_features_vs_image_embeddings_max_abs']}")

    write_readme(out, args, cfg, [height, width], dumps)
    manifest = {
        "exporter_script": EXPORTER_MARK,
        "exporter": "torchscript" if args.onnx else None,
        "model_family": "efficientvit_sam",
        "model": f"efficientsam EfficientViTSam ({args.config} config)",
        "weights": "efficientvit_sam.pt",
        "weights_layout": "torch.save({'state_dict': state_dict})",
        "weights_h5": "efficientvit_sam.h5",
        "h5_layout": "flat",
        "config": cfg,
        "seed": None if args.checkpoint else args.seed,
        "torch": torch.__version__,
        "opset": OPSET if args.onnx else None,
        "image_size": [height, width],
        "encoder_input_size": size,
        "prompt_frame_size": cfg["promptEncoder"]["inputImageSize"],
        "mask_threshold": 0.0,
        "provenance": provenance(args),
        "dataflow": dataflow(cfg),
        "cases": cases,
        "module_execution_order": {
            "image_encoder": [_order_label(r) for r in enc.get("module_outputs", [])],
            "decoder_point1_official": [_order_label(r) for c in cases for r in c.get("module_outputs", [])],
        },
        "module_outputs": {"image_encoder": enc.get("module_outputs", [])},
        "onnxruntime_vs_pytorch": onnx_report,
        "checks": checks,
        "checks_note": "cases[].checks: predictor_vs_official_* (predictor vs masks 1..3 of the official run), "
                       "prompt_encoder_predict_masks_vs_official_*, split_padded_vs_official_* are asserted < "
                       f"{CHECK_ATOL}; split_unpadded_vs_official_* is expected non-zero (no padding point). "
                       "checks.sensitivity: how far a wrong choice moves the outputs (not asserted)",
        "files": file_entries(out.root),
    }
    out.save_json("manifest.json", manifest)
    summary = {"out": str(out.root), "seconds": round(time.perf_counter() - started, 1),
               "seconds_before_onnx": round(encoder_seconds, 1), "onnxruntime_vs_pytorch": onnx_report,
               "checks": {k: v for k, v in checks.items()}}
    print(json.dumps(summary, indent=1))
    return summary


@torch.no_grad()
def check_checkpoint_reload(path: Path, cfg: Dict[str, Any], sam: EfficientViTSam) -> Dict[str, Any]:
    """The written .pt loads through upstream's own path (create_efficientvit_sam_model(weight_url=...) for the
    released variants, load_state_dict_from_file + strict load_state_dict for tiny) to identical tensors."""
    zoo = cfg["upstream"]["zooName"]
    if zoo:
        loaded = create_efficientvit_sam_model(zoo, pretrained=True, weight_url=str(path))
    else:
        loaded = build_from_config(cfg)
        loaded.load_state_dict(load_state_dict_from_file(str(path)), strict=True)
    ours, theirs = sam.state_dict(), loaded.state_dict()
    worst = max(float((ours[k].double() - theirs[k].double()).abs().max()) if ours[k].numel() else 0.0 for k in ours)
    if worst != 0.0 or ours.keys() != theirs.keys():
        raise AssertionError(f"checkpoint reload differs: {worst}")
    del loaded
    return {"checkpoint_reload_max_abs": worst,
            "checkpoint_reload_via": "create_efficientvit_sam_model(weight_url=...)" if zoo
            else "load_state_dict_from_file + load_state_dict(strict=True)"}


if __name__ == "__main__":
    main()

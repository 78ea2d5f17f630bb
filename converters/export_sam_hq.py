#!/usr/bin/env python3
"""Export a SAM-HQ model and PyTorch's reference outputs (upstream `segment-anything-hq`), in one folder.

Usage::

    venv/bin/python converters/export_sam_hq.py --config hq_vit_tiny --seed 0 --out reference_outputs/sam_hq_vit_tiny
    venv/bin/python converters/export_sam_hq.py --config hq_tiny_vit_tiny --seed 0 \
        --out reference_outputs/sam_hq_tiny_vit_tiny
    # full size (not committed): SAM-HQ ViT-B, Light HQ-SAM (TinyViT 5M); seeded or a released checkpoint
    venv/bin/python converters/export_sam_hq.py --config vit_b --seed 0 --module-dumps off --out /tmp/hq-vit_b
    venv/bin/python converters/export_sam_hq.py --config vit_b --checkpoint sam_hq_vit_b.pth --out /tmp/hq-vit_b

Configurations (the image encoders are ``sam_configs.py``'s, the decoder is ``MaskDecoderHQ``):

    hq_vit_tiny       SAM's ViT at sam_configs' ``vit_tiny`` size (input 128)
    hq_tiny_vit_tiny  MobileSAM's TinyViT at sam_configs' ``tiny`` size (Light HQ-SAM's encoder, shrunk)
    vit_b             sam-hq's build_sam_vit_b (vit_l, vit_h likewise)
    vit_tiny          sam-hq's build_sam_vit_t (Light HQ-SAM)

Writes, into ``--out``:

    config.json              the Swift SAMConfig of the image encoder's family, "modelFamily": "sam_hq"
    sam_hq.pth               torch.save(model.state_dict()), laid out as the released SAM-HQ checkpoints
    sam_hq.h5                the same state dict, one flat dotted dataset per key
    manifest.json, README.md
    references/
      resized_image.npy      the image as the predictor gets it (uint8 [h, w, 3])
      input_image.npy        preprocessed (normalised, zero-padded) [1, 3, S, S]
      image_embeddings.npy   the image encoder's output [1, C, g, g]
      vit_features.npy       interm_embeddings[0].permute(0, 3, 1, 2) [1, C_vit, g, g]: what MaskDecoderHQ reads
      modules/<path>.npy     image-encoder module outputs (tiny configs)
      <case>/onnx_*.npy      official-decoder-style inputs (model frame; box corners labelled 2, 3 after the
                             points, else a (0, 0, -1) padding point) and predict_masks' outputs for all five
                             tokens (SAM's four, then the HQ token): onnx_low_res_masks [1,5,4g,4g],
                             onnx_iou_predictions [1,4]
      <case>/point_coords, point_labels, box, multimask_output, hq_token_only   SamPredictor.predict's inputs
      <case>/low_res_masks, iou_predictions, masks_binary                       its outputs
      point1/modules/<path>.npy  prompt-encoder and mask-decoder module outputs (tiny configs)

Cases: point1, points3 (labels 1, 0, 1), box, box_point, each with multimask_output in {True, False}
(suffix ``_single`` when False) and hq_token_only in {False, True} (suffix ``_hq_only`` when True).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
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
    ModuleRecorder, OutDir, file_entries, max_abs, official_inputs, photo_pixels, pixels_to_torch,
    prompt_summary, synthetic_pixels, to_numpy, write_module_dumps, write_state_dict_h5,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # timm deprecation warnings from tiny_vit_sam's imports
    from segment_anything_hq.modeling import (
        ImageEncoderViT, MaskDecoderHQ, PromptEncoder, Sam, TinyViT, TwoWayTransformer,
    )
    from segment_anything_hq.modeling import common as hq_common
    from segment_anything_hq.modeling import image_encoder as hq_vit
    from segment_anything_hq.modeling import prompt_encoder as hq_prompt_encoder
    from segment_anything_hq.modeling import tiny_vit_sam as hq_tiny_vit
    from segment_anything_hq.predictor import SamPredictor
    from segment_anything_hq.utils.onnx import SamOnnxModel

EXPORTER_MARK = "converters/export_sam_hq.py"
# HQ config -> (sam_configs config of the image encoder and the SAM decoder's sizes, tiny?)
CONFIGS = {
    "hq_vit_tiny": ("vit_tiny", True),
    "hq_tiny_vit_tiny": ("tiny", True),
    "vit_b": ("vit_b", False),
    "vit_l": ("vit_l", False),  # for the released sam_hq_vit_l.pth / sam_hq_vit_h.pth (--checkpoint)
    "vit_h": ("vit_h", False),
    "vit_tiny": ("full", False),
}
CHECK_ATOL = 1e-5
# The upstream file's line numbers below are segment-anything-hq 0.3's tiny_vit_sam.py.
HQ_FORWARD_PATCH = {
    "what": "TinyViT.forward_features views the early feature (layers[1]'s output) on the real grid "
            "(layers[2].input_resolution) and the last stage's tokens on layers[-1].input_resolution, not 64x64",
    "why": "sam-hq's tiny_vit_sam.py L613 (interm_embeddings: x.view(B, 64, 64, -1)) and L616 "
           "(x.view(B, 64, 64, C)) hard-code the 1024 input's grid",
}


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
                        help="a released-style SAM-HQ state dict (sam_hq_vit_b.pth ...) or flat .h5 instead of "
                             "seeded weights")
    parser.add_argument("--image", type=Path, default=None, metavar="PATH",
                        help="a photo instead of the synthetic image, resized as the predictor resizes it")
    parser.add_argument("--module-dumps", choices=["auto", "on", "off"], default="auto",
                        help="per-module output dumps (auto: on for the tiny configs only)")
    return parser.parse_args(argv)


# --- configuration -------------------------------------------------------------------------


def resolve(name: str) -> Dict[str, Any]:
    """config.json: sam_configs' config of the image encoder, the HQ decoder's extras, "modelFamily"."""
    base, _ = CONFIGS[name]
    cfg = sam_configs.resolve(base)
    cfg["name"], cfg["baseConfig"], cfg["modelFamily"] = name, base, "sam_hq"
    enc = cfg["imageEncoder"]
    if sam_configs.family(cfg) == "vit":
        vit_dim, source = enc["embedDim"], f"image_encoder.blocks.{enc['globalAttentionIndexes'][0]}"
    else:
        vit_dim, source = enc["embedDims"][2], "image_encoder.layers.1"
        enc["family"] = "tiny_vit"  # as the Swift side names it; sam_configs leaves it implicit
        for patch in cfg["upstreamPatches"]:  # sam_configs cites mobile_sam's file
            patch["why"] += " (sam-hq's tiny_vit_sam.py is mobile_sam's but for forward_features: same lines)"
        if enc["outputGrid"] != sam_configs.UPSTREAM_FORWARD_GRID:
            # sam_configs' forward_features entry names mobile_sam's line; sam-hq's method differs.
            cfg["upstreamPatches"] = [p for p in cfg["upstreamPatches"] if "forward_features" not in p["what"]]
            cfg["upstreamPatches"].append(HQ_FORWARD_PATCH)
    grid = enc["outputGrid"]
    cfg["maskDecoder"].update(
        vitDim=vit_dim,  # MaskDecoderHQ(vit_dim=...): compress_vit_feat's input channels
        hqFeature={"source": source, "shape": [vit_dim, grid, grid],
                   "how": "interm_embeddings[0].permute(0, 3, 1, 2) (references/vit_features.npy)"},
        numMaskTokensWithHQ=cfg["maskDecoder"]["numMaskTokens"] + 1,
    )
    return cfg


# --- building (sam-hq's build_sam.py, at any size) -----------------------------------------------


class TinyViTAnyGridHQ(TinyViT):
    """sam-hq's TinyViT with both of forward_features' hard-coded 64x64 views on the real grids
    (HQ_FORWARD_PATCH); module names and weights unchanged. Used only when the grid is not 64."""

    def forward_features(self, x: torch.Tensor):
        x = self.layers[0](self.patch_embed(x))
        interm = []
        for i in range(1, len(self.layers)):
            x = self.layers[i](x)
            if i == 1:
                interm.append(x.view(x.shape[0], *self.layers[2].input_resolution, -1))
        x = x.view(x.shape[0], *self.layers[-1].input_resolution, -1).permute(0, 3, 1, 2)
        return self.neck(x), interm


def build_image_encoder(cfg: Dict[str, Any]) -> nn.Module:
    enc = cfg["imageEncoder"]
    if enc["family"] == "vit":
        from functools import partial

        return ImageEncoderViT(
            depth=enc["depth"], embed_dim=enc["embedDim"], img_size=enc["imageSize"], mlp_ratio=enc["mlpRatio"],
            norm_layer=partial(torch.nn.LayerNorm, eps=enc["layerNormEps"]), num_heads=enc["numHeads"],
            patch_size=enc["patchSize"], qkv_bias=True, use_rel_pos=enc["useRelativePositions"],
            global_attn_indexes=enc["globalAttentionIndexes"], window_size=enc["windowSize"],
            out_chans=enc["neckDim"],
        )
    cls = TinyViT if enc["outputGrid"] == sam_configs.UPSTREAM_FORWARD_GRID else TinyViTAnyGridHQ
    encoder = cls(
        img_size=enc["imageSize"], in_chans=enc["inChannels"], num_classes=enc["numClasses"],
        embed_dims=enc["embedDims"], depths=enc["depths"], num_heads=enc["numHeads"],
        window_sizes=enc["windowSizes"], mlp_ratio=enc["mlpRatio"], drop_rate=0.0, drop_path_rate=0.0,
        use_checkpoint=False, mbconv_expand_ratio=enc["mbconvExpandRatio"],
        local_conv_size=enc["localConvSize"], layer_lr_decay=enc["layerLrDecay"],
    )
    build_model.set_merge_strides(encoder, enc["mergeStrides"])
    if enc["neckDim"] != sam_configs.UPSTREAM_NECK_DIM:
        encoder.neck = build_model.make_neck(enc["embedDims"][-1], enc["neckDim"])
    return encoder


def build_sam_hq(cfg: Dict[str, Any]) -> Sam:
    """sam-hq's Sam (_build_sam / build_sam_vit_t) for a resolved config, in eval mode."""
    md, pe = cfg["maskDecoder"], cfg["promptEncoder"]
    sam = Sam(
        image_encoder=build_image_encoder(cfg),
        prompt_encoder=PromptEncoder(
            embed_dim=pe["embedDim"], image_embedding_size=(pe["imageEmbeddingSize"],) * 2,
            input_image_size=(pe["inputImageSize"],) * 2, mask_in_chans=pe["maskInChannels"],
        ),
        mask_decoder=MaskDecoderHQ(
            num_multimask_outputs=md["numMultimaskOutputs"],
            transformer=TwoWayTransformer(
                depth=md["depth"], embedding_dim=md["transformerDim"], mlp_dim=md["mlpDim"],
                num_heads=md["numHeads"], attention_downsample_rate=md["attentionDownsampleRate"],
            ),
            transformer_dim=md["transformerDim"], iou_head_depth=md["iouHeadDepth"],
            iou_head_hidden_dim=md["iouHeadHiddenDim"], vit_dim=md["vitDim"],
        ),
        pixel_mean=cfg["pixelMean"], pixel_std=cfg["pixelStd"],
    )
    sam.eval()
    return sam


@torch.no_grad()
def seeded_init_(sam: Sam) -> None:
    """build_model.seeded_init_ for sam-hq's classes: every float state-dict entry redrawn."""
    touched = {id(t) for module in sam.modules() for t in _init_module_(module)}
    missed = [k for k, t in sam.state_dict(keep_vars=True).items() if t.is_floating_point() and id(t) not in touched]
    if missed:
        raise RuntimeError(f"seeded_init_ left these untouched: {missed}")
    sam.train(False)  # refreshes TinyViT's cached attention-bias tables


def _init_module_(module: nn.Module) -> list:
    """sam-hq's twins of the classes build_model._init_module_ knows get the same draws; the rest
    (Conv, Linear, BatchNorm, Embedding, mobile_sam's LayerNorm2d of a rebuilt neck) go to it."""
    if isinstance(module, (hq_common.LayerNorm2d, hq_tiny_vit.LayerNorm2d)):
        return build_model._init_norm_affine_(module)
    if isinstance(module, hq_vit.ImageEncoderViT) and module.pos_embed is not None:
        module.pos_embed.normal_(0.0, 0.5)
        return [module.pos_embed]
    if isinstance(module, hq_vit.Attention) and module.use_rel_pos:
        module.rel_pos_h.normal_(0.0, 0.5)
        module.rel_pos_w.normal_(0.0, 0.5)
        return [module.rel_pos_h, module.rel_pos_w]
    if isinstance(module, hq_tiny_vit.Attention):
        module.attention_biases.normal_(0.0, 0.5)
        return [module.attention_biases]
    if isinstance(module, hq_prompt_encoder.PositionEmbeddingRandom):
        module.positional_encoding_gaussian_matrix.normal_(0.0, 1.0)
        return [module.positional_encoding_gaussian_matrix]
    return build_model._init_module_(module)


def build_weighted(config: str, seed: int = 0, checkpoint: Optional[Path] = None) -> Sam:
    """The model of an HQ config with seeded weights (or ``checkpoint``'s); dump_modules.py's --builder."""
    cfg = resolve(config)
    torch.manual_seed(seed)
    sam = build_sam_hq(cfg)
    if checkpoint:
        build_model.load_checkpoint_(sam, Path(checkpoint))
    else:
        seeded_init_(sam)
    return sam


# --- the image -----------------------------------------------------------------------------------


@torch.no_grad()
def export_encoder(out: OutDir, sam: Sam, predictor: SamPredictor, pixels: np.ndarray, dumps: bool) -> Dict[str, Any]:
    """Preprocess + image encoder (with module dumps), then the predictor's set_torch_image, checked equal."""
    input_image = sam.preprocess(pixels_to_torch(pixels))
    recorder = ModuleRecorder(sam, ["image_encoder"]) if dumps else None
    embeddings, interm = sam.image_encoder(input_image)
    if recorder:
        recorder.remove()
    vit_features = interm[0].permute(0, 3, 1, 2)  # as MaskDecoderHQ.forward takes it
    predictor.set_torch_image(pixels_to_torch(pixels), pixels.shape[:2])
    result: Dict[str, Any] = {
        "pixels": pixels, "input_image": input_image, "embeddings": embeddings, "interm": interm,
        "files": {
            "resized_image": out.save_npy("references/resized_image.npy", pixels),
            "input_image": out.save_npy("references/input_image.npy", input_image),
            "image_embeddings": out.save_npy("references/image_embeddings.npy", embeddings),
            "vit_features": out.save_npy("references/vit_features.npy", vit_features),
        },
        "checks": {
            "predictor_features_vs_image_embeddings_max_abs": max_abs(to_numpy(predictor.features),
                                                                       to_numpy(embeddings)),
            "predictor_interm_vs_vit_features_max_abs": max_abs(
                to_numpy(predictor.interm_features[0].permute(0, 3, 1, 2)), to_numpy(vit_features)),
            "image_embeddings_std": float(to_numpy(embeddings).std()),
            "vit_features_std": float(to_numpy(vit_features).std()),
        },
    }
    if recorder:
        result["module_outputs"] = write_module_dumps(out, recorder.calls, "references/modules")
    return result


# --- prompt cases ----------------------------------------------------------------------------------


def prompt_cases(seed: int, width: int, height: int) -> List[Dict[str, Any]]:
    """Four prompts in original-image pixels; point1, box and box_point are export_reference's."""
    ref = {c["name"]: c for c in export_reference.prompt_cases(seed, width, height)}
    s, h = width, height
    prompts = [
        ref["point1"],
        {"name": "points3", "points": np.array([[0.5523 * s, 0.3511 * h], [0.2071 * s, 0.6187 * h],
                                                [0.7412 * s, 0.6633 * h]]), "labels": np.array([1.0, 0.0, 1.0])},
        ref["box"],
        ref["box_point"],
    ]
    cases = []
    for prompt in prompts:
        for hq_only in (False, True):
            for multimask in (True, False):
                name = prompt["name"] + ("" if multimask else "_single") + ("_hq_only" if hq_only else "")
                cases.append({**prompt, "name": name, "prompt": prompt["name"], "multimask": multimask,
                              "hq_token_only": hq_only})
    return cases


def model_frame(predictor: SamPredictor, case: Dict[str, Any]) -> Dict[str, Any]:
    """The case's prompts in the model-input frame, as SamPredictor.predict transforms them."""
    moved = {}
    if "points" in case:
        moved["points"] = predictor.transform.apply_coords(case["points"], predictor.original_size)
        moved["labels"] = case["labels"]
    if "box" in case:
        moved["box"] = predictor.transform.apply_boxes(case["box"][None], predictor.original_size)[0]
    return moved


@torch.no_grad()
def run_all_tokens(sam: Sam, embeddings: torch.Tensor, interm: List[torch.Tensor],
                   prompts: Dict[str, Any]) -> Dict[str, np.ndarray]:
    """The upstream prompt encoder, then predict_masks with what MaskDecoderHQ.forward passes it:
    all five masks (SAM's four tokens, then the HQ token) and the four IoU predictions."""
    points = None
    if "points" in prompts:  # as SamPredictor.predict makes its tensors
        points = (torch.as_tensor(prompts["points"], dtype=torch.float)[None],
                  torch.as_tensor(prompts["labels"], dtype=torch.int)[None])
    box = torch.as_tensor(prompts["box"], dtype=torch.float)[None] if "box" in prompts else None
    sparse, dense = sam.prompt_encoder(points=points, boxes=box, masks=None)
    decoder = sam.mask_decoder
    vit_features = interm[0].permute(0, 3, 1, 2)
    hq_features = decoder.embedding_encoder(embeddings) + decoder.compress_vit_feat(vit_features)
    masks, iou = decoder.predict_masks(
        image_embeddings=embeddings, image_pe=sam.prompt_encoder.get_dense_pe(),
        sparse_prompt_embeddings=sparse, dense_prompt_embeddings=dense, hq_features=hq_features,
    )
    return {"low_res_masks": to_numpy(masks), "iou_predictions": to_numpy(iou)}


def select_like_upstream(masks: np.ndarray, iou: np.ndarray, multimask: bool, hq_only: bool):
    """MaskDecoderHQ.forward's selection from the five masks: multimask -> the SAM mask of 1..3 with
    the highest predicted IoU, else SAM mask 0; then that plus the HQ mask (last), or the HQ mask alone."""
    if multimask:
        best = int(np.argmax(iou[0, 1:4])) + 1
        sam_mask, score = masks[:, best:best + 1], iou[:, best:best + 1]
    else:
        sam_mask, score = masks[:, :1], iou[:, :1]
    hq = masks[:, -1:]
    return (hq if hq_only else sam_mask + hq), score


@torch.no_grad()
def export_case(out: OutDir, ctx: Dict[str, Any], case: Dict[str, Any], record: bool) -> Dict[str, Any]:
    sam, predictor, name = ctx["sam"], ctx["predictor"], case["name"]
    folder = f"references/{name}"
    multimask, hq_only = case["multimask"], case["hq_token_only"]
    entry: Dict[str, Any] = {"name": name, "prompt": {"name": case["prompt"], **prompt_summary(case)},
                             "multimask_output": multimask, "hq_token_only": hq_only, "checks": {}}

    prompts = model_frame(predictor, case)
    inputs = official_inputs(prompts, ctx["mask_size"], None)
    recorder = ModuleRecorder(sam, ["prompt_encoder", "mask_decoder"]) if record else None
    decoded = run_all_tokens(sam, ctx["embeddings"], ctx["interm"], prompts)
    if recorder:
        recorder.remove()
        entry["module_outputs"] = write_module_dumps(out, recorder.calls, f"{folder}/modules")
    entry["official"] = {
        "inputs": {"image_embeddings": "references/image_embeddings.npy",
                   "vit_features": "references/vit_features.npy",
                   **{k: out.save_npy(f"{folder}/onnx_{k}.npy", v) for k, v in inputs.items()},
                   "orig_im_size": list(ctx["orig_im_size"])},
        "outputs": {k: out.save_npy(f"{folder}/onnx_{k}.npy", v) for k, v in decoded.items()},
        "how": "prompt_encoder(points, boxes, masks=None); hq_features = embedding_encoder(image_embeddings) + "
               "compress_vit_feat(vit_features); mask_decoder.predict_masks(...): masks 0-3 = SAM's tokens, "
               "mask 4 = the HQ token; iou_predictions for tokens 0-3",
    }

    flag = lambda v: np.array([float(v)], np.float32)  # noqa: E731  (as export_sam2.py stores multimask_output)
    predictor_inputs = {"multimask_output": out.save_npy(f"{folder}/multimask_output.npy", flag(multimask)),
                        "hq_token_only": out.save_npy(f"{folder}/hq_token_only.npy", flag(hq_only))}
    if "points" in case:
        predictor_inputs["point_coords"] = out.save_npy(f"{folder}/point_coords.npy", case["points"][None])
        predictor_inputs["point_labels"] = out.save_npy(f"{folder}/point_labels.npy", case["labels"][None])
    if "box" in case:
        predictor_inputs["box"] = out.save_npy(f"{folder}/box.npy", case["box"][None])
    binary, iou, low_res = predictor.predict(point_coords=case.get("points"), point_labels=case.get("labels"),
                                             box=case.get("box"), multimask_output=multimask,
                                             hq_token_only=hq_only, return_logits=False)
    result = {"low_res_masks": low_res[None], "iou_predictions": iou[None], "masks_binary": binary[None]}
    entry["predictor"] = {
        "call": f"SamPredictor.predict(multimask_output={multimask}, hq_token_only={hq_only}, return_logits=False)",
        "inputs": predictor_inputs,
        "outputs": {k: out.save_npy(f"{folder}/{k}.npy", v) for k, v in result.items()},
    }

    checks = entry["checks"]
    masks, scores = select_like_upstream(decoded["low_res_masks"], decoded["iou_predictions"], multimask, hq_only)
    checks["predictor_vs_selected_masks_max_abs"] = max_abs(result["low_res_masks"], masks)
    checks["predictor_vs_selected_iou_max_abs"] = max_abs(result["iou_predictions"], scores)
    # sam-hq's SamOnnxModel on the onnx_* inputs (labels 2/3 box corners, padding point): the same outputs.
    wrapper = SamOnnxModel(sam, hq_token_only=hq_only, multimask_output=multimask)
    _, wrapper_iou, wrapper_masks = wrapper(ctx["embeddings"], ctx["interm"],
                                            *(torch.from_numpy(inputs[k]) for k in
                                              ("point_coords", "point_labels", "mask_input", "has_mask_input")),
                                            torch.tensor(ctx["orig_im_size"], dtype=torch.float32))
    checks["onnx_wrapper_vs_predictor_masks_max_abs"] = max_abs(to_numpy(wrapper_masks), result["low_res_masks"])
    checks["onnx_wrapper_vs_predictor_iou_max_abs"] = max_abs(to_numpy(wrapper_iou), result["iou_predictions"])
    bad = {k: v for k, v in checks.items() if not v < CHECK_ATOL}
    if bad:
        raise AssertionError(f"{name}: {bad} (tolerance {CHECK_ATOL})")
    entry["files"] = sorted(p.name for p in out.root.joinpath(folder).glob("*.npy"))
    return entry


# --- manifest and README --------------------------------------------------------------------------


def provenance(args: argparse.Namespace) -> Dict[str, Any]:
    prov = export_reference.provenance(args)
    for key in ("onnx", "onnxruntime"):  # no ONNX here
        prov.pop(key, None)
    prov["segment_anything_hq"] = metadata.version("segment-anything-hq")
    prov["torchvision"] = metadata.version("torchvision")
    return prov


def dataflow() -> List[Dict[str, Any]]:
    return [
        {"stage": "preprocess", "inputs": ["references/resized_image.npy"], "outputs": ["references/input_image.npy"],
         "how": "(pixels - pixel_mean) / pixel_std, zero-pad bottom/right to img_size"},
        {"stage": "image_encoder", "inputs": ["references/input_image.npy"],
         "outputs": ["references/image_embeddings.npy", "references/vit_features.npy"],
         "how": "image_encoder(x) -> (embeddings, interm_embeddings); vit_features = interm_embeddings[0]"
                ".permute(0, 3, 1, 2)", "module_dumps": "references/modules/"},
        {"stage": "decoder, all tokens (prompt_encoder + MaskDecoderHQ.predict_masks)",
         "inputs": ["references/image_embeddings.npy", "references/vit_features.npy",
                    "references/<case>/onnx_point_coords.npy", "references/<case>/onnx_point_labels.npy",
                    "references/<case>/onnx_mask_input.npy", "references/<case>/onnx_has_mask_input.npy"],
         "outputs": ["references/<case>/onnx_low_res_masks.npy", "references/<case>/onnx_iou_predictions.npy"],
         "module_dumps": "references/point1/modules/ (case point1 only)"},
        {"stage": "predictor (SamPredictor.predict)",
         "inputs": ["references/resized_image.npy", "references/<case>/point_coords.npy",
                    "references/<case>/point_labels.npy", "references/<case>/box.npy",
                    "references/<case>/multimask_output.npy", "references/<case>/hq_token_only.npy"],
         "outputs": ["references/<case>/low_res_masks.npy", "references/<case>/iou_predictions.npy",
                     "references/<case>/masks_binary.npy"],
         "how": "multimask_output: SAM mask of 1..3 with the best IoU, else mask 0; plus the HQ mask (4), or "
                "the HQ mask alone with hq_token_only; iou_predictions of the SAM mask chosen"},
    ]


def write_readme(out: OutDir, args: argparse.Namespace, cfg: Dict[str, Any], image_hw: List[int],
                 dumps: bool) -> None:
    enc, md = cfg["imageEncoder"], cfg["maskDecoder"]
    s, g, d = enc["imageSize"], enc["outputGrid"], md["transformerDim"]
    weights = f"checkpoint `{args.checkpoint.name}`" if args.checkpoint else f"seeded random weights (seed {args.seed})"
    encoder = "SAM's ViT" if enc["family"] == "vit" else "MobileSAM's TinyViT (Light HQ-SAM)"
    image = f"`{args.image.name}` resized to" if args.image else "synthetic"
    text = f"""# SAM-HQ reference set: `{cfg['name']}`

Generated by `{EXPORTER_MARK}` (do not edit; rerun it):

    python {provenance(args)["command"]}

Upstream `segment-anything-hq` classes ({encoder} image encoder at sam_configs' `{cfg['baseConfig']}` size,
`MaskDecoderHQ`), CPU, float32, {weights}: every norm affine, bias, BatchNorm statistic, TinyViT
attention bias, position embedding and relative-position table drawn away from identity (where the
model has them). `sam_hq.pth` is `torch.save(model.state_dict())`, keyed as the released SAM-HQ
checkpoints; `sam_hq.h5` holds the same, one flat dotted dataset per key. `config.json` decodes as the
Swift `SAMConfig` (`"modelFamily": "sam_hq"`; `upstreamPatches` lists where upstream code had to be
worked around). `manifest.json` lists every file (shape/dtype/sha256), case, check and module order.

* input {s}x{s}, image embedding [1,{d},{g},{g}], `vit_features` [1,{md['vitDim']},{g},{g}]
  (`interm_embeddings[0].permute(0, 3, 1, 2)`, the output of `{md['hqFeature']['source']}`)
* image: {image} {image_hw[0]}x{image_hw[1]} RGB (`references/resized_image.npy`), zero-padded to
  {s}x{s} after normalising (`references/input_image.npy`); prompts are in that frame
* cases `<prompt>[_single][_hq_only]` for prompts point1, points3 (labels 1, 0, 1), box, box_point:
  `onnx_*` = official-decoder-style inputs (box corners labelled 2, 3 after the points, else a (0, 0)
  point labelled -1) and `predict_masks`' outputs for all five tokens ([1,5,{4 * g},{4 * g}]: SAM's four,
  then the HQ token; IoU [1,4]); `low_res_masks`/`iou_predictions`/`masks_binary` =
  `SamPredictor.predict(multimask_output=..., hq_token_only=...)` (flags in `multimask_output.npy`,
  `hq_token_only.npy`), checked against the upstream selection from the five masks
"""
    if dumps:
        text += ("* `references/modules/<module.path>.npy`: image-encoder module outputs; `references/point1/modules/`:\n"
                 "  prompt-encoder and mask-decoder module outputs of case point1 (execution order in the manifest;\n"
                 "  byte-identical outputs stored once, see `same_as`)\n")
    out.path("README.md").write_text(text)


def _order_label(row: Dict[str, Any]) -> str:
    return row["module"] if row["call"] == 0 else f"{row['module']}#{row['call']}"


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    started = time.perf_counter()
    torch.set_grad_enabled(False)
    cfg = resolve(args.config)
    out = SetDir(args.out)
    sam = build_weighted(args.config, args.seed, args.checkpoint)
    tiny = CONFIGS[args.config][1]
    dumps = args.module_dumps == "on" or (args.module_dumps == "auto" and tiny)

    out.save_json("config.json", cfg)
    torch.save(sam.state_dict(), out.path("sam_hq.pth"))
    source = f"segment_anything_hq Sam ({args.config}) state_dict, " + (
        f"checkpoint {args.checkpoint.name}" if args.checkpoint else f"seeded random weights (seed {args.seed})")
    write_state_dict_h5(sam, out.path("sam_hq.h5"), None, source)

    size = cfg["imageEncoder"]["imageSize"]
    pixels = photo_pixels(args.image, size) if args.image else synthetic_pixels(args.seed, size)
    predictor = SamPredictor(sam)
    enc = export_encoder(out, sam, predictor, pixels, dumps)
    ctx = {"sam": sam, "predictor": predictor, "embeddings": enc["embeddings"], "interm": enc["interm"],
           "mask_size": list(sam.prompt_encoder.mask_input_size), "orig_im_size": [float(v) for v in pixels.shape[:2]]}
    cases = [export_case(out, ctx, case, record=dumps and case["name"] == "point1")
             for case in prompt_cases(args.seed, pixels.shape[1], pixels.shape[0])]

    write_readme(out, args, cfg, list(pixels.shape[:2]), dumps)
    checks = {**enc["checks"], "tolerance": CHECK_ATOL,
              "worst_case_max_abs": max(v for c in cases for v in c["checks"].values())}
    manifest = {
        "exporter_script": EXPORTER_MARK,
        "model_family": "sam_hq",
        "model": f"segment_anything_hq Sam with MaskDecoderHQ ({args.config} config)",
        "weights": "sam_hq.pth",
        "weights_h5": "sam_hq.h5",
        "h5_layout": "flat",
        "config": cfg,
        "seed": None if args.checkpoint else args.seed,
        "torch": torch.__version__,
        "image_size": list(pixels.shape[:2]),
        "mask_threshold": 0.0,
        "provenance": provenance(args),
        "dataflow": dataflow(),
        "cases": cases,
        "module_execution_order": {
            "image_encoder": [_order_label(r) for r in enc.get("module_outputs", [])],
            "decoder_point1": [_order_label(r) for c in cases for r in c.get("module_outputs", [])],
        },
        "module_outputs": {"image_encoder": enc.get("module_outputs", [])},
        "checks": checks,
        "checks_note": "cases[].checks: predictor_vs_selected_* = SamPredictor.predict vs the upstream selection "
                       "from onnx_low_res_masks/onnx_iou_predictions; onnx_wrapper_vs_predictor_* = sam-hq's "
                       f"SamOnnxModel on the onnx_* inputs vs the predictor; all asserted < {CHECK_ATOL}",
        "files": file_entries(out.root),
    }
    out.save_json("manifest.json", manifest)
    summary = {"out": str(out.root), "seconds": round(time.perf_counter() - started, 1), "checks": checks}
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()

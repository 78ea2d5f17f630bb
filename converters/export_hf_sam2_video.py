#!/usr/bin/env python3
"""Save a SAM 2 / 2.1 checkpoint as a Hugging Face ``transformers`` ``Sam2VideoModel`` checkpoint.

Usage::

    # the committed fixture: the tiny video set's checkpoint as model.safetensors + config.json
    venv/bin/python converters/export_hf_sam2_video.py --set reference_outputs/sam2_tiny_video \\
        --convert-script /path/to/convert_sam2_video_to_hf.py --track \\
        --out Tests/SAMImportTests/Fixtures/hf_sam2_video_tiny

    # full size, on demand (nothing of it is committed): a published architecture takes the
    # script's own get_config
    venv/bin/python converters/export_hf_sam2_video.py --set /work/video-sets/sam21t-seed0 \\
        --convert-script /path/to/convert_sam2_video_to_hf.py --model-name sam2.1_hiera_tiny --track \\
        --out /tmp/sam21t-hf-video

The renaming is ``transformers``' own: ``replace_keys`` of
``transformers/models/sam2_video/convert_sam2_video_to_hf.py`` (the script that made the
``facebook/sam2.1-hiera-*`` checkpoints), imported from ``--convert-script``. transformers' wheels and
sdists leave their ``convert_*`` scripts out, so give the file from a transformers source tree of the
installed version (``src/transformers/models/sam2_video/convert_sam2_video_to_hf.py``). Only
``replace_keys`` and, with ``--model-name``, ``get_config`` are called; the script's top-level
imports of ``httpx`` (its image download) are stood in for when absent.

The set's ``{"model": state_dict}`` checkpoint (upstream ``sam2`` names, video weights included) is
renamed, loaded into a real ``transformers.Sam2VideoModel`` (strict: every key used, every parameter
set) and written with ``save_pretrained``: ``--out`` receives its ``model.safetensors`` and
``config.json``, nothing else. The configuration is ``get_config(--model-name)`` or, for other
architectures (the committed tiny set), built from the set's ``config.json`` field by field;
settings ``Sam2VideoModel`` cannot express are refused by name.

Two sizes transformers 5.23 fixes for the published models are not the tiny set's, and are changed
here, the same way in the model and in the renaming, only when the set needs it (never for a
published architecture):

- ``Sam2VideoMemoryAttentionLayer`` builds ``cross_attn_image`` with ``kv_in_dim=64`` whatever
  ``memory_encoder_output_channels`` says (every published model's memories are 64 wide; the tiny
  set's are 8): its ``k_proj`` and ``v_proj`` are rebuilt ``mem_dim`` wide;
- ``replace_keys`` names the mask downsampler's final conv by its index in the published four-step
  downsampler (``encoder.12``); the tiny set's has two steps, so its final conv (``encoder.6``, after
  three modules a step) came out as ``layers.2.conv`` and is named ``final_conv``.

The folder written is then loaded back (``from_pretrained``, or for the tiny set the same model
rebuilt with those two changes and its state dict read from the file) and every tensor compared with
the upstream checkpoint's. With ``--track``, transformers' own video inference runs the set's prompts
(rounds, points, boxes, masks) on the set's frames as upstream preprocessed them, and its low-res
logits and object scores are compared with the set's upstream ones, frame by frame: informative
only (transformers fills no holes in the tracked masks, attends with SDPA, ...). The figures are
printed as JSON (``--report`` writes them to ``<out>.report.json``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import shutil
import sys
import tempfile
import types
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_hf_sam2 import hf_config as hf_image_config  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import transformers
    from transformers import Sam2VideoConfig, Sam2VideoModel

# transformers 5.23 modeling_sam2_video.py Sam2VideoMemoryAttentionLayer: cross_attn_image kv_in_dim=64.
TRANSFORMERS_MEMORY_WIDTH = 64
# convert_sam2_video_to_hf.py replace_keys: the final conv of the published four-step downsampler.
PUBLISHED_DOWNSAMPLER_STEPS = 4


def load_convert_script(path: Path) -> types.ModuleType:
    """transformers' conversion script as a module (its `__main__` block does not run)."""
    if not path.is_file():
        raise SystemExit(f"{path}: no such file (transformers' convert_sam2_video_to_hf.py, from a transformers "
                         f"{transformers.__version__} source tree)")
    try:
        import httpx  # noqa: F401
    except ImportError:
        # Only convert_sam2_checkpoint's image download uses it; replace_keys and get_config do not.
        sys.modules["httpx"] = types.ModuleType("httpx")
    spec = importlib.util.spec_from_file_location("convert_sam2_video_to_hf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("replace_keys", "get_config"):
        if not hasattr(module, name):
            raise SystemExit(f"{path}: has no {name}; not transformers' SAM 2 video conversion script")
    return module


# --- the configuration ------------------------------------------------------------------------------

# SAM2Base / SAM2VideoPredictor settings Sam2VideoModel has no field for: what it always does.
# ref: transformers 5.23 modeling_sam2_video.py Sam2VideoModel.__init__, _prepare_memory_conditioned_features,
# _run_single_frame_inference, _encode_new_memory
FIXED_IN_TRANSFORMERS = {
    "use_mlp_for_obj_ptr_proj": True, "fixed_no_obj_ptr": True, "soft_no_obj_ptr": False,
    "use_obj_ptrs_in_encoder": True, "use_multimask_token_for_obj_ptr": True, "directly_add_no_mem_embed": True,
    "only_obj_ptrs_in_the_past_for_eval": True, "memory_temporal_stride_for_eval": 1,
    "use_mask_input_as_output_without_sam": True, "pred_obj_scores": True, "pred_obj_scores_mlp": True,
    "iou_prediction_use_sigmoid": True, "non_overlap_masks_for_mem_enc": False,
    "binarize_mask_from_pts_for_mem_enc": True, "add_all_frames_to_correct_as_cond": False,
    "clear_non_cond_mem_around_input": False,
}


def hf_video_config(cfg: Dict[str, Any]) -> Sam2VideoConfig:
    """Sam2VideoConfig for one of this project's SAM 2 video sets' config.json (``"video"``: SAM2Base names)."""
    image = hf_image_config(cfg)
    video = cfg["video"]
    attention, encoder = video["memory_attention"], video["memory_encoder"]
    downsampler, fuser = encoder["mask_downsampler"], encoder["fuser"]
    block = fuser["cx_block"]
    cross = attention["cross_attention"]
    refused = [f"{name} = {video.get(name)!r} (transformers: always {value!r})"
               for name, value in FIXED_IN_TRANSFORMERS.items() if name in video and video[name] != value]
    temporal = {video["add_tpos_enc_to_obj_ptrs"], video["proj_tpos_enc_in_obj_ptrs"], video["use_signed_tpos_enc_to_obj_ptrs"]}
    if len(temporal) != 1:
        refused.append("add_tpos_enc_to_obj_ptrs, proj_tpos_enc_in_obj_ptrs and use_signed_tpos_enc_to_obj_ptrs differ "
                       "(transformers: one switch, enable_temporal_pos_encoding_for_object_pointers)")
    if video["obj_ptr_proj"] != {"kind": "mlp", "num_layers": 3, "activation": "relu"}:
        refused.append(f"obj_ptr_proj {video['obj_ptr_proj']} (transformers: a 3-layer ReLU MLP)")
    if video["mask_downsample"] != {"in": 1, "out": 1, "kernel_size": 4, "stride": 4}:
        refused.append(f"mask_downsample {video['mask_downsample']} (transformers: Conv2d(1, 1, 4, stride 4))")
    expected_positions = {"pos_enc_at_input": True, "pos_enc_at_attn": False, "pos_enc_at_cross_attn_keys": True,
                          "pos_enc_at_cross_attn_queries": False}
    for name, value in expected_positions.items():
        if attention[name] != value:
            refused.append(f"memory_attention.{name} = {attention[name]} (transformers: {value})")
    if not (encoder["out_proj"] and not fuser["input_projection"] and block["depthwise"] and block["layer_scale"]):
        refused.append("memory_encoder: transformers always has out_proj, a depthwise CXBlock with layer scale, no input projection")
    if refused:
        raise SystemExit("Sam2VideoModel cannot express this model:\n  " + "\n  ".join(refused))
    return Sam2VideoConfig(
        vision_config=image.vision_config.to_dict(),
        prompt_encoder_config=image.prompt_encoder_config.to_dict(),
        mask_decoder_config=image.mask_decoder_config.to_dict(),
        image_size=video["image_size"],
        num_maskmem=video["num_maskmem"],
        sigmoid_scale_for_mem_enc=video["sigmoid_scale_for_mem_enc"],
        sigmoid_bias_for_mem_enc=video["sigmoid_bias_for_mem_enc"],
        enable_occlusion_spatial_embedding=video["no_obj_embed_spatial"],
        multimask_output_in_sam=video["multimask_output_in_sam"],
        multimask_min_pt_num=video["multimask_min_pt_num"],
        multimask_max_pt_num=video["multimask_max_pt_num"],
        multimask_output_for_tracking=video["multimask_output_for_tracking"],
        max_object_pointers_in_encoder=video["max_obj_ptrs_in_encoder"],
        max_cond_frame_num=video["max_cond_frames_in_attn"],
        enable_temporal_pos_encoding_for_object_pointers=video["proj_tpos_enc_in_obj_ptrs"],
        memory_attention_hidden_size=attention["d_model"],
        memory_attention_num_layers=attention["num_layers"],
        memory_attention_num_attention_heads=attention["num_heads"],
        memory_attention_downsample_rate=cross["embedding_dim"] // cross["internal_dim"],
        memory_attention_feed_forward_hidden_size=attention["dim_feedforward"],
        memory_attention_feed_forward_hidden_act=attention["activation"],
        memory_attention_dropout=cross["dropout"],
        memory_attention_rope_feat_sizes=list(attention["feat_sizes"]),
        memory_attention_rope_dropout=cross["dropout"],
        rope_parameters={"rope_type": "axial", "rope_theta": attention["rope_theta"]},
        memory_encoder_hidden_size=encoder["in_dim"],
        memory_encoder_output_channels=encoder["out_dim"],
        mask_downsampler_embed_dim=downsampler["embed_dim"],
        mask_downsampler_kernel_size=downsampler["kernel_size"],
        mask_downsampler_stride=downsampler["stride"],
        mask_downsampler_padding=downsampler["padding"],
        mask_downsampler_total_stride=downsampler["total_stride"],
        mask_downsampler_hidden_act=downsampler["activation"],
        memory_fuser_num_layers=fuser["num_layers"],
        memory_fuser_embed_dim=block["dim"],
        memory_fuser_intermediate_dim=block["dim"] * block["mlp_ratio"],
        memory_fuser_kernel_size=block["kernel_size"],
        memory_fuser_padding=block["padding"],
    )


# --- the two sizes transformers fixes -----------------------------------------------------------------


def downsampler_steps(config: Sam2VideoConfig) -> int:
    # ref: modeling_sam2_video.py Sam2VideoMaskDownSampler.__init__ (as upstream's MaskDownSampler)
    import math
    return int(math.log2(config.mask_downsampler_total_stride) // math.log2(config.mask_downsampler_stride))


def name_final_conv(renamed: Dict[str, torch.Tensor], config: Sam2VideoConfig) -> List[str]:
    """replace_keys' names with the final conv of a downsampler of other than four steps renamed."""
    steps = downsampler_steps(config)
    if steps == PUBLISHED_DOWNSAMPLER_STEPS:
        return []
    wrong = f"memory_encoder.mask_downsampler.layers.{steps}.conv."
    changed = [key for key in renamed if key.startswith(wrong)]
    for key in changed:
        renamed[key.replace(wrong, "memory_encoder.mask_downsampler.final_conv.")] = renamed.pop(key)
    return changed


def build_model(config: Sam2VideoConfig) -> Sam2VideoModel:
    """Sam2VideoModel(config), its memory cross-attention keys and values as wide as the memories."""
    model = Sam2VideoModel(config)
    if config.memory_encoder_output_channels != TRANSFORMERS_MEMORY_WIDTH:
        for layer in model.memory_attention.layers:
            attention = layer.cross_attn_image
            attention.kv_in_dim = config.memory_encoder_output_channels
            attention.k_proj = torch.nn.Linear(attention.kv_in_dim, attention.internal_dim)
            attention.v_proj = torch.nn.Linear(attention.kv_in_dim, attention.internal_dim)
    return model.eval()


# --- export and checks ---------------------------------------------------------------------------------


def export(args: argparse.Namespace) -> Dict[str, Any]:
    script = load_convert_script(args.convert_script)
    cfg = json.loads((args.set / "config.json").read_text())
    config = script.get_config(args.model_name) if args.model_name else hf_video_config(cfg)
    upstream = torch.load(args.set / "checkpoint.pt", map_location="cpu", weights_only=True)["model"]
    renamed = script.replace_keys(dict(upstream), config)
    report: Dict[str, Any] = {"transformers": transformers.__version__, "torch": torch.__version__,
                              "set": str(args.set), "convert_script": str(args.convert_script),
                              "convert_script_sha256": hashlib.sha256(args.convert_script.read_bytes()).hexdigest(),
                              "config": f"get_config({args.model_name!r})" if args.model_name else "from the set's config.json"}
    report["final_conv_renamed"] = name_final_conv(renamed, config)
    model = build_model(config)
    report["memory_kv_width_changed"] = config.memory_encoder_output_channels != TRANSFORMERS_MEMORY_WIDTH
    model.load_state_dict(renamed, strict=True)

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder, safe_serialization=True)
        for name in ("model.safetensors", "config.json"):
            shutil.copyfile(Path(folder) / name, args.out / name)
    report["files"] = {name: (args.out / name).stat().st_size for name in ("model.safetensors", "config.json")}

    reloaded = reload(args.out, changed=report["memory_kv_width_changed"])
    report.update(compare_with_upstream(reloaded, upstream, renamed))
    if args.track:
        report["tracking"] = track(reloaded, args.set, cfg)
    return report


def reload(folder: Path, changed: bool) -> Sam2VideoModel:
    """The saved folder as transformers loads it."""
    if not changed:
        model, info = Sam2VideoModel.from_pretrained(folder, output_loading_info=True)
        problems = {k: v for k, v in info.items() if v}
        if problems:
            raise SystemExit(f"{folder}: from_pretrained reports {problems}")
        return model.eval()
    from safetensors.torch import load_file
    model = build_model(Sam2VideoConfig.from_pretrained(folder))
    model.load_state_dict(load_file(str(folder / "model.safetensors")), strict=True)
    return model


def compare_with_upstream(model: Sam2VideoModel, upstream: Dict[str, torch.Tensor],
                          renamed: Dict[str, torch.Tensor]) -> Dict[str, Any]:
    """Every reloaded tensor against the upstream tensor it was renamed from, bit for bit."""
    state = model.state_dict()
    differing = [key for key, value in renamed.items() if not torch.equal(state[key], value)]
    if differing:
        raise SystemExit(f"reloaded tensors differ from the upstream checkpoint's: {differing[:8]}")
    video = [k for k in upstream if k.split(".")[0] in ("memory_attention", "memory_encoder", "obj_ptr_proj",
                                                        "obj_ptr_tpos_proj", "mask_downsample", "maskmem_tpos_enc",
                                                        "no_mem_pos_enc", "no_obj_ptr", "no_obj_embed_spatial")]
    return {"upstream_tensors": len(upstream), "upstream_video_tensors": len(video), "saved_tensors": len(renamed),
            "reloaded_equal_bitwise": True}


# --- transformers' tracking beside upstream's (informative) -------------------------------------------


def track(model: Sam2VideoModel, root: Path, cfg: Dict[str, Any]) -> Dict[str, Any]:
    """The set's prompts in transformers' video inference, on the frames as upstream preprocessed them."""
    from PIL import Image
    from sam2.utils.misc import load_video_frames
    from transformers import Sam2ImageProcessorFast, Sam2VideoProcessor, Sam2VideoVideoProcessor
    from transformers.models.sam2_video.modeling_sam2_video import Sam2VideoInferenceSession

    size = cfg["video"]["image_size"]
    reference = json.loads((root / "reference.json").read_text())
    images, height, width = load_video_frames(str(root / "frames"), size, offload_video_to_cpu=True)
    processor = Sam2VideoProcessor(image_processor=Sam2ImageProcessorFast(size={"height": size, "width": size}),
                                   video_processor=Sam2VideoVideoProcessor(size={"height": size, "width": size}),
                                   target_size=size)
    session = Sam2VideoInferenceSession(video=images, video_height=height, video_width=width, inference_device="cpu",
                                        video_storage_device="cpu", inference_state_device="cpu", dtype=torch.float32)
    prompts = json.loads((root / "prompts.json").read_text())
    options = reference.get("options", reference)
    reverse = bool(options.get("reverse", False))
    start = options.get("start_frame")
    yielded: Dict[int, Any] = {}
    with torch.no_grad():
        for round_index in sorted({p.get("round", 0) for p in prompts}):
            for entry in (p for p in prompts if p.get("round", 0) == round_index):
                frame, obj = entry["frame"], entry["object"]
                if "mask" in entry:
                    mask = np.array(Image.open(root / entry["mask"]).convert("L")) >= 128
                    processor.add_inputs_to_inference_session(session, frame_idx=frame, obj_ids=obj, input_masks=mask)
                else:
                    points = entry.get("points", [])
                    processor.add_inputs_to_inference_session(
                        session, frame_idx=frame, obj_ids=obj,
                        input_points=[[[[p[0], p[1]] for p in points]]] if points else None,
                        input_labels=[[[int(p[2]) for p in points]]] if points else None,
                        input_boxes=[[entry["box"]]] if "box" in entry else None)
                model(inference_session=session, frame_idx=frame)
            yielded = {out.frame_idx: out for out in model.propagate_in_video_iterator(
                session, start_frame_idx=start, reverse=reverse)}
    frames = []
    for stem in sorted(p.stem for p in (root / "reference" / "low_res").glob("*.npy")):
        index = int(stem)
        out = yielded[index]
        low_res = np.load(root / "reference" / "low_res" / f"{stem}.npy")
        scores = np.load(root / "reference" / "object_scores" / f"{stem}.npy")
        ours = out.pred_masks.numpy().reshape(low_res.shape)
        ours_scores = out.object_score_logits.numpy().reshape(scores.shape)
        error = np.abs(ours.astype(np.float64) - low_res)
        # Upstream sets the background holes it fills to exactly 0.1; transformers fills none.
        filled = low_res == np.float32(0.1)
        frames.append({"frame": stem,
                       "low_res_max_abs": float(np.max(error)),
                       "low_res_max_abs_per_object": dict(zip(map(str, out.object_ids),
                                                              error.reshape(len(out.object_ids), -1).max(axis=1).tolist())),
                       "low_res_sign_agreement": float(np.mean((ours > 0) == (low_res > 0))),
                       "low_res_filled_by_upstream": int(filled.sum()),
                       "low_res_max_abs_elsewhere": float(np.max(error[~filled])) if (~filled).any() else 0.0,
                       "object_score_max_abs": float(np.max(np.abs(ours_scores.astype(np.float64) - scores)))})
    return {"holes_filled_upstream": bool(reference.get("fill_holes", options.get("fill_holes", False))),
            "frames": frames,
            "low_res_max_abs": max(f["low_res_max_abs"] for f in frames),
            "low_res_sign_agreement_min": min(f["low_res_sign_agreement"] for f in frames),
            "low_res_max_abs_outside_filled_holes": max(f["low_res_max_abs_elsewhere"] for f in frames),
            "object_score_max_abs": max(f["object_score_max_abs"] for f in frames)}


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, required=True, help="a SAM 2 video reference set (export_sam2_video.py's folder)")
    parser.add_argument("--convert-script", type=Path, required=True,
                        help="transformers' src/transformers/models/sam2_video/convert_sam2_video_to_hf.py")
    parser.add_argument("--model-name", help="a published architecture (sam2.1_hiera_tiny ...): the script's get_config")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write (model.safetensors, config.json)")
    parser.add_argument("--track", action="store_true", help="compare transformers' video inference with the set")
    parser.add_argument("--report", action="store_true", help="also write <out>.report.json")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    torch.set_grad_enabled(False)
    report = export(args)
    report["out"] = str(args.out)
    text = json.dumps(report, indent=1)
    print(text)
    if args.report:
        args.out.with_suffix(".report.json").write_text(text + "\n")


if __name__ == "__main__":
    main()

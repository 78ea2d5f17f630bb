"""Build a SAM 2 / 2.1 ``SAM2Base`` from the upstream ``sam2`` package and give it weights.

``build(name)`` composes the named hydra config (``sam2_configs.CONFIGS``) with the image
predictor's post-processing overrides, as ``sam2.build_sam.build_sam2`` does, and instantiates
it. Weights come from a checkpoint (``{"model": state_dict}``, as published) or from
``seeded_init_``, which redraws every float parameter and buffer from torch's generator,
norm affines, position embeddings and ``no_mem_embed`` included, so that a port which ignores
one of them (upstream starts Hiera's position embeddings at zero) is caught.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, List, Optional, Set, Tuple

import torch
from torch import nn

import sam2
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.utils import instantiate
from omegaconf import OmegaConf
from sam2.modeling.backbones.hieradet import Hiera
from sam2.modeling.memory_encoder import CXBlock
from sam2.modeling.position_encoding import PositionEmbeddingRandom
from sam2.modeling.sam.transformer import TwoWayTransformer
from sam2.modeling.sam2_base import SAM2Base
from sam2.modeling.sam2_utils import LayerNorm2d, MLP

import sam2_configs


def build(name: str) -> SAM2Base:
    """SAM2Base for configuration ``name``, in eval mode, with upstream's initial weights."""
    cfg = sam2_configs.CONFIGS[name]
    return _instantiate(name, _compose(cfg["hydra"], sam2_configs.POSTPROCESSING_OVERRIDES + cfg["overrides"]))


def build_video(name: str) -> Tuple[SAM2Base, Any]:
    """SAM2VideoPredictor for configuration ``name`` as sam2.build_sam.build_sam2_video_predictor
    builds it (its class override first, then the extra overrides with its post-processing ones
    appended), in eval mode, with upstream's initial weights; and the composed hydra config."""
    composed = video_composed(name)
    return _instantiate(name, composed), composed


def video_composed(name: str) -> Any:
    """The hydra config build_video instantiates."""
    cfg = sam2_configs.CONFIGS[name]
    overrides = ([sam2_configs.VIDEO_TARGET_OVERRIDE] + cfg["overrides"] + sam2_configs.POSTPROCESSING_OVERRIDES
                 + sam2_configs.VIDEO_POSTPROCESSING_OVERRIDES)
    return _compose(cfg["hydra"], overrides)


def _compose(hydra_config: str, overrides: List[str]) -> Any:
    GlobalHydra.instance().clear()
    config_dir = Path(sam2.__file__).resolve().parent
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.2"):
        composed = compose(config_name=hydra_config, overrides=overrides)
    OmegaConf.resolve(composed)
    return composed


def _instantiate(name: str, composed: Any) -> SAM2Base:
    cfg = sam2_configs.CONFIGS[name]
    model = instantiate(composed.model, _recursive_=True)
    if cfg["heads"]:
        shrink_heads_(model, **cfg["heads"])
    model.eval()
    return model


def shrink_heads_(model: SAM2Base, transformer_mlp_dim: int, transformer_heads: int, iou_head_hidden_dim: int) -> None:
    """The decoder's transformer and IoU head rebuilt at the given sizes: same classes, same module
    names, what SAM2Base._build_sam_heads would make with these numbers in place of its constants."""
    decoder = model.sam_mask_decoder
    dim = decoder.transformer_dim
    decoder.transformer = TwoWayTransformer(depth=2, embedding_dim=dim, mlp_dim=transformer_mlp_dim,
                                            num_heads=transformer_heads)
    head = decoder.iou_prediction_head
    decoder.iou_prediction_head = MLP(dim, iou_head_hidden_dim, decoder.num_mask_tokens, head.num_layers,
                                      sigmoid_output=head.sigmoid_output)


# --- seeded weights -------------------------------------------------------------


@torch.no_grad()
def seeded_init_(model: SAM2Base) -> None:
    """Redraws every float parameter and buffer from torch's global RNG (call torch.manual_seed
    first) and checks none was left out."""
    touched: Set[int] = set()
    for module in model.modules():
        for tensor in _init_module_(module):
            touched.add(id(tensor))
    for name, parameter in model.named_parameters(recurse=False):
        # SAM2Base's own parameters: no_mem_embed, no_mem_pos_enc, maskmem_tpos_enc, no_obj_ptr ...
        parameter.normal_(0.0, 0.5)
        touched.add(id(parameter))
    missed = [name for name, t in model.state_dict(keep_vars=True).items()
              if t.is_floating_point() and id(t) not in touched]
    if missed:
        raise RuntimeError(f"seeded_init_ left these untouched: {missed}")
    model.eval()


def _init_module_(module: nn.Module) -> list:
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
        module.weight.normal_(0.0, 1.0 / math.sqrt(_fan_in(module)))
        tensors = [module.weight]
        if module.bias is not None:
            module.bias.normal_(0.0, 0.05)
            tensors.append(module.bias)
        return tensors
    if isinstance(module, (nn.LayerNorm, LayerNorm2d)):
        module.weight.normal_(1.0, 0.1)
        module.bias.normal_(0.0, 0.05)
        return [module.weight, module.bias]
    if isinstance(module, nn.Embedding):
        module.weight.normal_(0.0, 1.0)
        return [module.weight]
    if isinstance(module, Hiera):
        # Upstream starts both at zero: a port that dropped them would pass then.
        module.pos_embed.normal_(0.0, 0.5)
        module.pos_embed_window.normal_(0.0, 0.5)
        return [module.pos_embed, module.pos_embed_window]
    if isinstance(module, PositionEmbeddingRandom):
        module.positional_encoding_gaussian_matrix.normal_(0.0, 1.0)
        return [module.positional_encoding_gaussian_matrix]
    if isinstance(module, CXBlock) and module.gamma is not None:
        module.gamma.normal_(0.0, 0.5)
        return [module.gamma]
    return []


def _fan_in(module: nn.Module) -> int:
    weight = module.weight
    if isinstance(module, nn.Linear):
        return weight.shape[1]
    if isinstance(module, nn.ConvTranspose2d):
        taps = math.prod(weight.shape[2:]) // math.prod(module.stride)
        return weight.shape[0] // module.groups * max(taps, 1)
    return math.prod(weight.shape[1:])


# --- checkpoints -------------------------------------------------------------------


def load_checkpoint_(model: SAM2Base, path: Path) -> None:
    """A published-style checkpoint ({"model": state_dict}), strictly, as build_sam._load_checkpoint."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"] if "model" in state else state, strict=True)
    model.eval()


def save_checkpoint(model: SAM2Base, path: Path) -> None:
    """As the published .pt files: torch.save({"model": state_dict})."""
    torch.save({"model": model.state_dict()}, path)


def weighted_model(name: str, seed: int, checkpoint: Optional[Path], video: bool = False) -> SAM2Base:
    """``build(name)`` (``video``: ``build_video(name)``'s SAM2VideoPredictor, which has the same
    modules, so the same seed gives the same weights) with a checkpoint's or seeded weights."""
    torch.manual_seed(seed)
    model = build_video(name)[0] if video else build(name)
    if checkpoint:
        load_checkpoint_(model, checkpoint)
    else:
        seeded_init_(model)
        scale = sam2_configs.CONFIGS[name]["single_mask_scale"]
        if scale:
            with torch.no_grad():
                last = model.sam_mask_decoder.output_hypernetworks_mlps[0].layers[-1]
                last.weight.mul_(scale)
                last.bias.mul_(scale)
    return model

"""Build a MobileSAM ``Sam`` from the upstream classes and give it weights.

Weights come either from a checkpoint (a PyTorch state dict or a flat HDF5
file as written by ``export_reference.py``) or from ``seeded_init_``, which
draws every parameter and buffer from a seeded generator so that nothing is
left at an identity value (BatchNorm statistics, norm affines, biases, TinyViT
attention biases): an importer that drops or mis-folds one of them is caught.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any, Dict, Set

import torch
from torch import nn

with warnings.catch_warnings():
    # timm deprecation warnings triggered by upstream's imports
    warnings.simplefilter("ignore")
    from mobile_sam.modeling import MaskDecoder, PromptEncoder, Sam, TinyViT, TwoWayTransformer
    from mobile_sam.modeling import tiny_vit_sam
    from mobile_sam.modeling.common import LayerNorm2d as CommonLayerNorm2d
    from mobile_sam.modeling.prompt_encoder import PositionEmbeddingRandom
    import segment_anything.modeling as segment_anything
    from segment_anything.modeling import image_encoder as vit_encoder
    from segment_anything.modeling.common import LayerNorm2d as SegmentAnythingLayerNorm2d
    from segment_anything.modeling.prompt_encoder import PositionEmbeddingRandom as SegmentAnythingPE


class TinyViTAnyGrid(TinyViT):
    """TinyViT whose forward_features uses the real last-stage grid.

    Upstream (tiny_vit_sam.py L600-614) reshapes the tokens with a hard-coded
    ``x.view(B, 64, 64, C)``; this is the same code with the grid read from
    ``layers[-1].input_resolution``. Module names and weights are unchanged.
    """

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x)
        for layer in self.layers:
            x = layer(x)
        batch, _, channels = x.size()
        height, width = self.layers[-1].input_resolution
        x = x.view(batch, height, width, channels).permute(0, 3, 1, 2)
        return self.neck(x)


# --- building ----------------------------------------------------------------


def build_sam(cfg: Dict[str, Any]) -> Sam:
    """Sam for a resolved config (see ``sam_configs.resolve``), in eval mode: MobileSAM's classes
    for a TinyViT encoder, segment_anything's for a ViT one."""
    md = cfg["maskDecoder"]
    pe = cfg["promptEncoder"]
    vit = cfg["imageEncoder"].get("family") == "vit"
    classes = segment_anything if vit else None
    Sam_, PromptEncoder_, MaskDecoder_, TwoWayTransformer_ = (
        (classes.Sam, classes.PromptEncoder, classes.MaskDecoder, classes.TwoWayTransformer) if vit
        else (Sam, PromptEncoder, MaskDecoder, TwoWayTransformer))
    sam = Sam_(
        image_encoder=build_vit_encoder(cfg["imageEncoder"]) if vit else build_image_encoder(cfg["imageEncoder"]),
        prompt_encoder=PromptEncoder_(
            embed_dim=pe["embedDim"],
            image_embedding_size=(pe["imageEmbeddingSize"], pe["imageEmbeddingSize"]),
            input_image_size=(pe["inputImageSize"], pe["inputImageSize"]),
            mask_in_chans=pe["maskInChannels"],
        ),
        mask_decoder=MaskDecoder_(
            num_multimask_outputs=md["numMultimaskOutputs"],
            transformer=TwoWayTransformer_(
                depth=md["depth"],
                embedding_dim=md["transformerDim"],
                mlp_dim=md["mlpDim"],
                num_heads=md["numHeads"],
                attention_downsample_rate=md["attentionDownsampleRate"],
            ),
            transformer_dim=md["transformerDim"],
            iou_head_depth=md["iouHeadDepth"],
            iou_head_hidden_dim=md["iouHeadHiddenDim"],
        ),
        pixel_mean=cfg["pixelMean"],
        pixel_std=cfg["pixelStd"],
    )
    sam.eval()
    check_encoder_output(sam, cfg)
    return sam


def build_image_encoder(enc: Dict[str, Any]) -> TinyViT:
    """Upstream TinyViT, patched only where the config needs it."""
    encoder_cls = TinyViT if enc["outputGrid"] == 64 else TinyViTAnyGrid
    encoder = encoder_cls(
        img_size=enc["imageSize"],
        in_chans=enc["inChannels"],
        num_classes=enc["numClasses"],
        embed_dims=enc["embedDims"],
        depths=enc["depths"],
        num_heads=enc["numHeads"],
        window_sizes=enc["windowSizes"],
        mlp_ratio=enc["mlpRatio"],
        drop_rate=0.0,
        drop_path_rate=0.0,
        use_checkpoint=False,
        mbconv_expand_ratio=enc["mbconvExpandRatio"],
        local_conv_size=enc["localConvSize"],
        layer_lr_decay=enc["layerLrDecay"],
    )
    set_merge_strides(encoder, enc["mergeStrides"])
    if enc["neckDim"] != 256:
        encoder.neck = make_neck(enc["embedDims"][-1], enc["neckDim"])
    return encoder


def build_vit_encoder(enc: Dict[str, Any]) -> nn.Module:
    """segment_anything's ImageEncoderViT as build_sam.py's _build_sam makes it."""
    from functools import partial

    return vit_encoder.ImageEncoderViT(
        depth=enc["depth"],
        embed_dim=enc["embedDim"],
        img_size=enc["imageSize"],
        mlp_ratio=enc["mlpRatio"],
        norm_layer=partial(torch.nn.LayerNorm, eps=enc["layerNormEps"]),
        num_heads=enc["numHeads"],
        patch_size=enc["patchSize"],
        qkv_bias=True,
        use_rel_pos=enc["useRelativePositions"],
        global_attn_indexes=enc["globalAttentionIndexes"],
        window_size=enc["windowSize"],
        out_chans=enc["neckDim"],
    )


def set_merge_strides(encoder: TinyViT, strides: list) -> None:
    """Give each PatchMerging's depthwise conv2 the configured stride."""
    for layer, stride in zip(encoder.layers, strides):
        layer.downsample.conv2.c.stride = (stride, stride)


def make_neck(in_dim: int, dim: int) -> nn.Sequential:
    """Same structure as tiny_vit_sam.py L536-552, at ``dim`` channels."""
    return nn.Sequential(
        nn.Conv2d(in_dim, dim, kernel_size=1, bias=False),
        tiny_vit_sam.LayerNorm2d(dim),
        nn.Conv2d(dim, dim, kernel_size=3, padding=1, bias=False),
        tiny_vit_sam.LayerNorm2d(dim),
    )


@torch.no_grad()
def check_encoder_output(sam: Sam, cfg: Dict[str, Any]) -> None:
    """The encoder must output exactly the grid the prompt encoder was told."""
    enc = cfg["imageEncoder"]
    size, grid = enc["imageSize"], enc["outputGrid"]
    out = sam.image_encoder(torch.zeros(1, enc["inChannels"], size, size))
    expected = (1, cfg["promptEncoder"]["embedDim"], grid, grid)
    if tuple(out.shape) != expected:
        raise RuntimeError(f"encoder output {tuple(out.shape)} != {expected}")


# --- seeded weights -------------------------------------------------------------


@torch.no_grad()
def seeded_init_(sam: Sam) -> None:
    """Redraw every float parameter/buffer of ``sam`` from torch's global RNG.

    Call ``torch.manual_seed`` first. Asserts that every floating-point
    state-dict entry was redrawn. Leaves the model in eval mode, which also
    refreshes TinyViT's cached attention-bias table ``ab`` (L250-258).
    """
    touched: Set[int] = set()
    for module in sam.modules():
        for tensor in _init_module_(module):
            touched.add(id(tensor))
    missed = [
        name for name, t in sam.state_dict(keep_vars=True).items()
        if t.is_floating_point() and id(t) not in touched
    ]
    if missed:
        raise RuntimeError(f"seeded_init_ left these untouched: {missed}")
    sam.train(False)


def _init_module_(module: nn.Module) -> list:
    """Redraw the tensors owned directly by ``module``; return them."""
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
        return _init_affine_map_(module)
    if isinstance(module, nn.BatchNorm2d):
        return _init_batchnorm_(module)
    if isinstance(module, (nn.LayerNorm, CommonLayerNorm2d, tiny_vit_sam.LayerNorm2d, SegmentAnythingLayerNorm2d)):
        return _init_norm_affine_(module)
    if isinstance(module, vit_encoder.ImageEncoderViT) and module.pos_embed is not None:
        module.pos_embed.normal_(0.0, 0.5)
        return [module.pos_embed]
    if isinstance(module, vit_encoder.Attention) and module.use_rel_pos:
        # Upstream starts them at zero (rel_pos_zero_init); a port that ignored them would pass then.
        module.rel_pos_h.normal_(0.0, 0.5)
        module.rel_pos_w.normal_(0.0, 0.5)
        return [module.rel_pos_h, module.rel_pos_w]
    if isinstance(module, nn.Embedding):
        module.weight.normal_(0.0, 1.0)  # upstream default for nn.Embedding
        return [module.weight]
    if isinstance(module, tiny_vit_sam.Attention):
        module.attention_biases.normal_(0.0, 0.5)
        return [module.attention_biases]
    if isinstance(module, (PositionEmbeddingRandom, SegmentAnythingPE)):
        module.positional_encoding_gaussian_matrix.normal_(0.0, 1.0)  # as upstream
        return [module.positional_encoding_gaussian_matrix]
    return []


def _fan_in(module: nn.Module) -> int:
    """Inputs feeding one output value of a conv / transposed conv / linear."""
    weight = module.weight
    if isinstance(module, nn.Linear):
        return weight.shape[1]
    if isinstance(module, nn.ConvTranspose2d):
        # weight [in, out/groups, kh, kw]; each output pixel sees
        # in/groups channels times the taps that overlap it.
        taps = math.prod(weight.shape[2:]) // math.prod(module.stride)
        return weight.shape[0] // module.groups * max(taps, 1)
    return math.prod(weight.shape[1:])  # conv: [out, in/groups, kh, kw]


def _init_affine_map_(module: nn.Module) -> list:
    module.weight.normal_(0.0, 1.0 / math.sqrt(_fan_in(module)))
    tensors = [module.weight]
    if module.bias is not None:
        module.bias.normal_(0.0, 0.05)
        tensors.append(module.bias)
    return tensors


def _init_batchnorm_(bn: nn.BatchNorm2d) -> list:
    bn.weight.normal_(1.0, 0.1)
    bn.bias.normal_(0.0, 0.05)
    bn.running_mean.normal_(0.0, 0.1)
    bn.running_var.uniform_(0.5, 1.5)
    return [bn.weight, bn.bias, bn.running_mean, bn.running_var]


def _init_norm_affine_(norm: nn.Module) -> list:
    norm.weight.normal_(1.0, 0.1)
    norm.bias.normal_(0.0, 0.05)
    return [norm.weight, norm.bias]


# --- checkpoints -------------------------------------------------------------------


def load_checkpoint_(sam: Sam, path: Path) -> None:
    """Load a ``.pt``/``.pth`` state dict or a flat ``.h5`` into ``sam`` (strict)."""
    if path.suffix in (".h5", ".hdf5"):
        state = _read_flat_h5(path)
    else:
        state = torch.load(path, map_location="cpu", weights_only=True)
        state = state.get("model", state) if isinstance(state, dict) else state
    sam.load_state_dict(state, strict=True)
    sam.train(False)  # refresh TinyViT's cached attention-bias tables


def _read_flat_h5(path: Path) -> Dict[str, torch.Tensor]:
    import h5py
    import numpy as np

    state = {}
    with h5py.File(path, "r") as f:
        for key in f.keys():
            state[key] = torch.from_numpy(np.array(f[key][()]))
    return state

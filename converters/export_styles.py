#!/usr/bin/env python3
"""Export one MobileSAM in every ONNX style users produce, each checked with onnxruntime.

Usage::

    # the committed tiny set: reference_outputs/tiny/exports/ (export.py runs this for --config tiny)
    venv/bin/python converters/export_styles.py

    # a full-size reference set whose official decoder is segment_anything's SamOnnxModel, made
    # with the installed torch's default exporter, beside a copy of an existing set's references
    venv/bin/python converters/export_styles.py --reference-set --config full \\
        --weights ../shared/fixtures/mobilesam-seed0/mobile_sam.h5 \\
        --references ../shared/fixtures/mobilesam-seed0 --out /tmp/full-styles

Styles mode loads ``--weights`` into the upstream classes (``build_model``, ``sam_configs``)
and writes one folder per style into ``--out`` (default ``<references>/exports``):

    torchscript-opset{14,16,17}   torch.onnx.export(dynamo=False): ImageEncoder, PromptEncoder +
                                  MaskDecoder (export_split's pair), mobile_sam_decoder (official)
    dynamo-opset18, dynamo-default  torch.onnx.export(dynamo=True), external data: the same four plus
                                  segment_anything_decoder (segment_anything's SamOnnxModel)
    dynamo-default-inline         the official decoder (mobile_sam_decoder) with its weights inline
    fp16-torchscript-opset17, fp16-dynamo-default   ImageEncoder + official decoder after model.half()
    onnxslim-torchscript-opset17, onnxslim-dynamo-default   onnxslim.slim of the encoder/official decoder
    int8-dynamic-{quint8,qint8}-per-{tensor,channel}   onnxruntime quantize_dynamic of torchscript-opset17
    int8-qdq                      onnxruntime quantize_static (QDQ), seeded synthetic calibration

and ``manifest.json``: per file the style, exporter, versions, opset, components, options, which
node metadata survived, sha256/bytes, and onnxruntime's max abs difference from the PyTorch f32
references of the set at ``--references`` per output (fp16/int8 included: that is their error),
plus for every decoder the IoU of its thresholded low-res masks with the reference's per case.

Dynamo exports keep every node metadata key (``namespace``, ``pkg.torch.onnx.name_scopes``,
``pkg.torch.onnx.class_hierarchy``, ``pkg.torch.onnx.fx_node``) except
``pkg.torch.onnx.stack_trace`` (source paths and lines: most of the bytes, and machine-specific).

Exporter features are detected (``dynamo``, ``dynamic_shapes``, ``external_data`` arguments,
``torch.export.Dim``): a style the installed torch cannot make is skipped with a note in the
manifest. Exits non-zero when an export fails or a float32 file lands further from PyTorch than
samverify's default tolerance (1e-4).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import inspect
import io
import json
import logging
import platform
import shutil
import sys
import types
import warnings
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnxruntime.quantization import CalibrationDataReader

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_dynamo  # noqa: E402
import export_reference  # noqa: E402
import export_split  # noqa: E402
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from mobile_sam.utils.onnx import SamOnnxModel as MobileSamOnnxModel  # noqa: E402

EXPORTER_MARK = "converters/export_styles.py"
REMOVED_NODE_METADATA = ("pkg.torch.onnx.stack_trace",)
F32_TOLERANCE = 1e-4  # samverify's default atol (Sources/SAMVerify/Tolerance.swift)
OFFICIAL_INPUTS = ("image_embeddings", "point_coords", "point_labels", "mask_input", "has_mask_input", "orig_im_size")
OFFICIAL_OUTPUTS = ("masks", "iou_predictions", "low_res_masks")
QUANT_OPS = ("DynamicQuantizeLinear", "MatMulInteger", "ConvInteger", "QuantizeLinear", "DequantizeLinear")
CALIBRATION_SEED = 1000  # synthetic calibration images: seeds 1000.., never the references' seed
CALIBRATION_IMAGES = 4


# --- what gets exported ---------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One exported file: which module, its ONNX inputs/outputs, which inputs carry the point count."""

    key: str
    file: str
    components: Tuple[str, ...]
    form: str  # image_encoder | split | official
    inputs: Tuple[str, ...]
    outputs: Tuple[str, ...]
    point_inputs: Tuple[str, ...] = ()  # axis 1 is the point count N


PARTS = {p.key: p for p in (
    Part("image_encoder", "ImageEncoder.onnx", ("image_encoder",), "image_encoder", ("image",), ("imageEmbeddings",)),
    Part("prompt_encoder", export_split.PROMPT_ENCODER_FILE, ("prompt_encoder",), "split",
         tuple(export_split.PROMPT_ENCODER_IO["inputs"]), tuple(export_split.PROMPT_ENCODER_IO["outputs"]),
         ("points", "labels")),
    Part("mask_decoder", export_split.MASK_DECODER_FILE, ("mask_decoder",), "split",
         tuple(export_split.MASK_DECODER_IO["inputs"]), tuple(export_split.MASK_DECODER_IO["outputs"]),
         ("sparsePromptEmbeddings",)),
    Part("official_decoder", "mobile_sam_decoder.onnx", ("prompt_encoder", "mask_decoder"), "official",
         OFFICIAL_INPUTS, OFFICIAL_OUTPUTS, ("point_coords", "point_labels")),
    Part("official_decoder_sa", "segment_anything_decoder.onnx", ("prompt_encoder", "mask_decoder"), "official",
         OFFICIAL_INPUTS, OFFICIAL_OUTPUTS, ("point_coords", "point_labels")),
)}

PARTS_BY_FILE = {p.file: p for p in PARTS.values()}
FOUR = ("image_encoder", "prompt_encoder", "mask_decoder", "official_decoder")


@dataclass(frozen=True)
class ExportStyle:
    """Files made by torch.onnx.export from the PyTorch model."""

    name: str
    exporter: str  # torchscript | dynamo
    opset: Optional[int]  # None: the exporter's default
    parts: Tuple[str, ...]
    external_data: bool = True  # dynamo only
    half: bool = False


@dataclass(frozen=True)
class DerivedStyle:
    """Files made from another style's files by a tool (onnxslim, onnxruntime quantization)."""

    name: str
    tool: str  # onnxslim | quantize_dynamic | quantize_static
    source: str
    parts: Tuple[str, ...]
    options: Dict[str, Any] = field(default_factory=dict)
    note: str = ""


EXPORT_STYLES = (
    ExportStyle("torchscript-opset14", "torchscript", 14, FOUR),
    ExportStyle("torchscript-opset16", "torchscript", 16, FOUR),
    ExportStyle("torchscript-opset17", "torchscript", 17, FOUR),
    ExportStyle("dynamo-opset18", "dynamo", 18, FOUR + ("official_decoder_sa",)),
    ExportStyle("dynamo-default", "dynamo", None, FOUR + ("official_decoder_sa",)),
    ExportStyle("dynamo-default-inline", "dynamo", None, ("official_decoder",), external_data=False),
    ExportStyle("fp16-torchscript-opset17", "torchscript", 17, ("image_encoder", "official_decoder"), half=True),
    ExportStyle("fp16-dynamo-default", "dynamo", None, ("image_encoder", "official_decoder"), half=True),
)

SAMEXPORTER_NOTE = "what samexporter ships: quantize_dynamic(per_channel=False, reduce_range=False, weight_type=QUInt8)"
DERIVED_STYLES = (
    DerivedStyle("onnxslim-torchscript-opset17", "onnxslim", "torchscript-opset17",
                 ("image_encoder", "official_decoder")),
    DerivedStyle("onnxslim-dynamo-default", "onnxslim", "dynamo-default", ("image_encoder", "official_decoder")),
    DerivedStyle("int8-dynamic-quint8-per-tensor", "quantize_dynamic", "torchscript-opset17",
                 ("image_encoder", "official_decoder"), {"weight_type": "QUInt8", "per_channel": False},
                 SAMEXPORTER_NOTE),
    DerivedStyle("int8-dynamic-qint8-per-tensor", "quantize_dynamic", "torchscript-opset17",
                 ("official_decoder",), {"weight_type": "QInt8", "per_channel": False}),
    DerivedStyle("int8-dynamic-quint8-per-channel", "quantize_dynamic", "torchscript-opset17",
                 ("official_decoder",), {"weight_type": "QUInt8", "per_channel": True}),
    DerivedStyle("int8-dynamic-qint8-per-channel", "quantize_dynamic", "torchscript-opset17",
                 ("image_encoder", "official_decoder"), {"weight_type": "QInt8", "per_channel": True}),
    DerivedStyle("int8-qdq", "quantize_static", "torchscript-opset17", ("image_encoder", "official_decoder"),
                 {"quant_format": "QDQ", "weight_type": "QInt8", "activation_type": "QUInt8", "per_channel": False,
                  "calibrate_method": "MinMax", "op_types_to_quantize": ["Conv", "Gemm", "MatMul"]},
                 "op_types_to_quantize limited to the weight-bearing ops: with quantize_static's default op "
                 "types the official decoder's orig_im_size arithmetic is quantized too and its masks output "
                 "comes out 84 rows high instead of 85 on the tiny set"),
)
INT8_ENCODER_NOTE = ("the int8 image encoder is committed for two variants only (samexporter's quint8 per-tensor and "
                     "qint8 per-channel): each is ~0.87 MB, most of it the float32 attention-bias tables no quantizer "
                     "touches, and the other two add nothing an importer has not seen")


# --- exporter features ----------------------------------------------------------------------


def exporter_features() -> Dict[str, bool]:
    """What the installed torch.onnx.export accepts."""
    params = inspect.signature(torch.onnx.export).parameters
    dynamo_default = params["dynamo"].default if "dynamo" in params else False
    return {
        "dynamo_argument": "dynamo" in params,
        "dynamo_is_default": bool(dynamo_default),
        "dynamic_shapes": "dynamic_shapes" in params,
        "external_data": "external_data" in params,
        "export_dim": hasattr(torch, "export") and hasattr(torch.export, "Dim"),
    }


def missing_features(style: ExportStyle, features: Dict[str, bool]) -> Optional[str]:
    """Why the installed torch cannot make ``style``, or None."""
    if style.exporter == "dynamo":
        lacking = [k for k in ("dynamo_argument", "dynamic_shapes", "export_dim") if not features[k]]
        if not style.external_data and not features["external_data"]:
            lacking.append("external_data")
        if lacking:
            return f"torch {torch.__version__}: torch.onnx.export lacks {', '.join(lacking)}"
    return None


# --- modules and example inputs ---------------------------------------------------------------


def half_safe_pe_forward(self, size: Tuple[int, int]) -> torch.Tensor:
    """PositionEmbeddingRandom.forward (prompt_encoder.py) with its grid in the matrix's dtype.

    Upstream builds the grid as float32 whatever the model's dtype, so after ``model.half()``
    ``get_dense_pe()`` fails (``coords @ positional_encoding_gaussian_matrix``: float != Half).
    """
    h, w = size
    matrix = self.positional_encoding_gaussian_matrix
    grid = torch.ones((h, w), device=matrix.device, dtype=matrix.dtype)
    y_embed = (grid.cumsum(dim=0) - 0.5) / h
    x_embed = (grid.cumsum(dim=1) - 0.5) / w
    return self._pe_encoding(torch.stack([x_embed, y_embed], dim=-1)).permute(2, 0, 1)


HALF_PATCH = ("prompt_encoder.pe_layer.forward replaced on the instance by export_styles.half_safe_pe_forward: "
              "upstream's builds its grid as float32, so get_dense_pe() fails after model.half() "
              "(coords @ positional_encoding_gaussian_matrix: float != Half); class names stay upstream's")


def half_model(sam):
    """A float16 copy of ``sam`` whose official decoder runs (see half_safe_pe_forward)."""
    sam16 = copy.deepcopy(sam).half()
    pe_layer = sam16.prompt_encoder.pe_layer
    pe_layer.forward = types.MethodType(half_safe_pe_forward, pe_layer)
    return sam16


def segment_anything_onnx_model():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from segment_anything.utils.onnx import SamOnnxModel
    return SamOnnxModel


MODULE_DESCRIPTIONS = {
    "image_encoder": {"torchscript": "sam.image_encoder",
                      "dynamo": "export_dynamo.Wrapped (self.model = sam.image_encoder)"},
    "prompt_encoder": "export_split.SplitPromptEncoder (self.pe = sam.prompt_encoder)",
    "mask_decoder": "export_split.SplitMaskDecoder (self.md = sam.mask_decoder)",
    "official_decoder": "mobile_sam.utils.onnx.SamOnnxModel(sam, return_single_mask=False)",
    "official_decoder_sa": "segment_anything.utils.onnx.SamOnnxModel(sam, return_single_mask=False), "
                           "around the mobile_sam Sam",
}


def module_description(part: Part, exporter: str) -> str:
    desc = MODULE_DESCRIPTIONS[part.key]
    return desc[exporter] if isinstance(desc, dict) else desc


def official_example_inputs(sam) -> tuple:
    """As segment-anything's scripts/export_onnx_model.py draws them, from a seeded generator."""
    gen = torch.Generator().manual_seed(0)
    pe = sam.prompt_encoder
    size = sam.image_encoder.img_size
    return (
        torch.randn(1, pe.embed_dim, *pe.image_embedding_size, generator=gen),
        torch.randint(0, size, (1, 5, 2), generator=gen).float(),
        torch.randint(0, 4, (1, 5), generator=gen).float(),
        torch.randn(1, 1, *pe.mask_input_size, generator=gen),
        torch.tensor([1.0]),
        torch.tensor([1500.0, 2250.0]),
    )


def module_and_inputs(part: Part, sam, exporter: str, image: torch.Tensor, dtype: torch.dtype):
    """The nn.Module to export for ``part`` and its example inputs (float inputs in ``dtype``)."""
    if part.key == "image_encoder":
        module = sam.image_encoder if exporter == "torchscript" else export_dynamo.Wrapped(sam.image_encoder)
        args: tuple = (image,)
    elif part.key in ("prompt_encoder", "mask_decoder"):
        wrapper = export_split.SplitPromptEncoder if part.key == "prompt_encoder" else export_split.SplitMaskDecoder
        module = wrapper(sam.prompt_encoder if part.key == "prompt_encoder" else sam.mask_decoder)
        args = export_split.split_example_inputs(sam)[part.key]
    else:
        cls = MobileSamOnnxModel if part.key == "official_decoder" else segment_anything_onnx_model()
        module = cls(sam, return_single_mask=False)
        args = official_example_inputs(sam)
    args = tuple(a.to(dtype) if a.is_floating_point() else a for a in args)
    return module.eval(), args


# --- exporting --------------------------------------------------------------------------------


@contextlib.contextmanager
def quiet():
    """Silences the tools' progress prints, warnings and root-logger chatter (onnxruntime's
    quantizers log through it); what they said is kept for errors."""
    buffer = io.StringIO()
    root_logger = logging.getLogger()
    level = root_logger.level
    root_logger.setLevel(logging.ERROR)
    with warnings.catch_warnings(), contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        warnings.simplefilter("ignore")
        try:
            yield buffer
        except Exception as exc:
            said = buffer.getvalue().strip()
            raise RuntimeError(f"{type(exc).__name__}: {exc}" + (f"\n{said[-2000:]}" if said else "")) from exc
        finally:
            root_logger.setLevel(level)


def torchscript_options(part: Part, opset: int, features: Dict[str, bool]) -> Dict[str, Any]:
    options: Dict[str, Any] = {"opset_version": opset, "do_constant_folding": True, "export_params": True,
                               "input_names": list(part.inputs), "output_names": list(part.outputs),
                               "dynamic_axes": {name: {1: "num_points"} for name in part.point_inputs}}
    if features["dynamo_argument"]:
        options["dynamo"] = False
    return options


def dynamo_options(part: Part, style: ExportStyle, features: Dict[str, bool]) -> Dict[str, Any]:
    points = torch.export.Dim("num_points")
    options: Dict[str, Any] = {
        "dynamo": True, "input_names": list(part.inputs), "output_names": list(part.outputs),
        "dynamic_shapes": tuple({1: points} if name in part.point_inputs else None for name in part.inputs),
    }
    if style.opset is not None:
        options["opset_version"] = style.opset
    if features["external_data"]:
        options["external_data"] = style.external_data
    return options


def recorded_options(options: Dict[str, Any], part: Part) -> Dict[str, Any]:
    """The export options as the manifest states them."""
    shown = {k: v for k, v in options.items() if k not in ("input_names", "output_names", "dynamic_shapes")}
    if "dynamic_shapes" in options:
        shown["dynamic_shapes"] = {name: {"1": "torch.export.Dim('num_points')"} for name in part.point_inputs}
    if options.get("dynamo") and "opset_version" not in options:
        shown["opset_version"] = "exporter default"
    if options.get("dynamo"):
        shown["optimize"] = "exporter default"
    return shown


def strip_node_metadata(path: Path, keys: Tuple[str, ...] = REMOVED_NODE_METADATA) -> None:
    """Drops ``keys`` from every node's metadata_props; everything else stays as exported."""
    model = onnx.load(str(path), load_external_data=False)
    for node in model.graph.node:
        keep = [p for p in node.metadata_props if p.key not in keys]
        del node.metadata_props[:]
        node.metadata_props.extend(keep)
    onnx.save(model, str(path))


def export_one(style: ExportStyle, part: Part, sam, image: torch.Tensor, path: Path,
               features: Dict[str, bool]) -> Dict[str, Any]:
    dtype = torch.float16 if style.half else torch.float32
    module, args = module_and_inputs(part, sam, style.exporter, image.to(dtype), dtype)
    if style.exporter == "torchscript":
        options = torchscript_options(part, style.opset, features)
    else:
        options = dynamo_options(part, style, features)
    with quiet(), torch.no_grad():
        torch.onnx.export(module, args, str(path), **options)
    entry: Dict[str, Any] = {"options": recorded_options(options, part)}
    if style.exporter == "dynamo":
        strip_node_metadata(path)
        entry["removed_node_metadata"] = list(REMOVED_NODE_METADATA)
    return entry


# --- derived styles ---------------------------------------------------------------------------


def calibration_feeds(sam, part: Part) -> List[Dict[str, np.ndarray]]:
    """Seeded synthetic inputs for quantize_static, none of them the references' own.

    Images made as the references' image is (export_reference.synthetic_pixels, seeds
    CALIBRATION_SEED..); for the decoder, their PyTorch embeddings with, per image, a point
    prompt (1-9 points and the padding point), a box or a box and a point, and the point prompt
    again with a mask input (the second low-res mask PyTorch gives for it), so every input path
    of the official decoder sees data.
    """
    size = sam.image_encoder.img_size
    rng = np.random.default_rng(CALIBRATION_SEED)
    official = MobileSamOnnxModel(sam, return_single_mask=False).eval()
    mask_size = list(sam.prompt_encoder.mask_input_size)
    feeds = []
    for i in range(CALIBRATION_IMAGES):
        pixels = export_reference.synthetic_pixels(CALIBRATION_SEED + i, size)
        height, width = pixels.shape[:2]
        with torch.no_grad():
            image = sam.preprocess(export_reference.pixels_to_torch(pixels)[0])[None]
            if part.key == "image_encoder":
                feeds.append({"image": image.numpy()})
                continue
            embeddings = sam.image_encoder(image).numpy()
        n = int(rng.integers(1, 10))
        point_prompt = {"points": rng.uniform(0, [width - 1, height - 1], size=(n, 2)),
                        "labels": rng.integers(0, 2, size=n).astype(np.float64)}
        corners = np.sort(rng.uniform(0, [[width - 1, height - 1]] * 2, size=(2, 2)), axis=0)
        box_prompt = {"box": corners.reshape(-1)}
        if i % 2:
            box_prompt.update(points=corners.mean(axis=0, keepdims=True), labels=np.array([1.0]))
        common = {"image_embeddings": embeddings, "orig_im_size": np.array([height, width], np.float32)}
        for prompt in (point_prompt, box_prompt):
            feeds.append({**common, **export_reference.official_inputs(prompt, mask_size, None)})
        with torch.no_grad():
            low_res = official(*(torch.from_numpy(feeds[-2][k]) for k in OFFICIAL_INPUTS))[2]
        feeds.append({**common, **export_reference.official_inputs(point_prompt, mask_size, low_res[:, 1:2].numpy())})
    return feeds


class FeedReader(CalibrationDataReader):
    """The calibration inputs, one feed dict per get_next()."""

    def __init__(self, feeds: List[Dict[str, np.ndarray]]) -> None:
        self._feeds = iter(feeds)

    def get_next(self) -> Optional[Dict[str, np.ndarray]]:
        return next(self._feeds, None)


def weights_dtype(style: DerivedStyle) -> str:
    """How the derived file stores its weights: QUInt8 as uint8, QInt8 as int8, else as the source."""
    return {"QUInt8": "uint8", "QInt8": "int8"}.get(style.options.get("weight_type"), "float32")


def derive_one(style: DerivedStyle, part: Part, source: Path, path: Path, sam) -> Dict[str, Any]:
    """Runs the style's tool on ``source``; returns the manifest fields it adds."""
    if style.tool == "onnxslim":
        import onnxslim

        with quiet():
            onnxslim.slim(str(source), str(path))
        return {"options": {"onnxslim.slim": "default options"}}

    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    options = dict(style.options)
    with quiet():
        if style.tool == "quantize_dynamic":
            quantize_dynamic(str(source), str(path), per_channel=options["per_channel"],
                             weight_type=getattr(QuantType, options["weight_type"]))
            options["reduce_range"] = False
        else:
            feeds = calibration_feeds(sam, part)
            quantize_static(str(source), str(path), FeedReader(feeds), quant_format=QuantFormat.QDQ,
                            per_channel=options["per_channel"], weight_type=getattr(QuantType, options["weight_type"]),
                            activation_type=getattr(QuantType, options["activation_type"]),
                            op_types_to_quantize=options["op_types_to_quantize"])
            options["calibration"] = (
                f"{len(feeds)} seeded synthetic inputs: export_reference.synthetic_pixels images, seeds "
                f"{CALIBRATION_SEED}..{CALIBRATION_SEED + CALIBRATION_IMAGES - 1}" + (
                    "" if part.key == "image_encoder" else
                    ", their PyTorch embeddings, each with a point prompt, a box (or box and point) and "
                    "the point prompt with a mask input (see calibration_feeds)"))
    return {"options": options}


# --- reference data and onnxruntime -------------------------------------------------------------


class References:
    """The PyTorch float32 references of a set (export_reference.py's layout or the full drop's).

    Stored files where the set has them; the official decoder's upscaled ``masks`` (no file) are
    computed here with PyTorch float32 on the same inputs."""

    def __init__(self, set_root: Path, sam, official_model_cls=MobileSamOnnxModel) -> None:
        refs = set_root / "references"
        manifest = json.loads((set_root / "manifest.json").read_text())
        self.root = set_root
        self.input_image = np.load(refs / "input_image.npy")
        self.embeddings = np.load(refs / "image_embeddings.npy")
        orig_im_size = np.array(manifest["image_size"], dtype=np.float32)
        official_model = official_model_cls(sam, return_single_mask=False).eval()
        self.official: Dict[str, Dict[str, Any]] = {}
        self.pytorch_vs_references = {"low_res_masks": 0.0, "iou_predictions": 0.0}
        for case in manifest["cases"]:
            folder = refs / case["name"]
            feeds = {k: np.load(folder / f"onnx_{k}.npy")
                     for k in ("point_coords", "point_labels", "mask_input", "has_mask_input")}
            feeds.update(image_embeddings=self.embeddings, orig_im_size=orig_im_size)
            with torch.no_grad():
                masks, iou, low_res = official_model(*(torch.from_numpy(feeds[k]) for k in OFFICIAL_INPUTS))
            expected = {"masks": masks.numpy(), "iou_predictions": np.load(folder / "onnx_iou_predictions.npy"),
                        "low_res_masks": np.load(folder / "onnx_low_res_masks.npy")}
            for key, value in (("low_res_masks", low_res), ("iou_predictions", iou)):
                self.pytorch_vs_references[key] = max(self.pytorch_vs_references[key],
                                                      max_abs(value.numpy(), expected[key]))
            self.official[case["name"]] = {"feeds": feeds, "expected": expected}

        self.split: Dict[str, Dict[str, Any]] = {}
        split_pe = export_split.SplitPromptEncoder(sam.prompt_encoder).eval()
        with torch.no_grad():
            dense = split_pe(torch.zeros(1, 1, 2), torch.ones(1, 1))[1].numpy()
            dense_pe = sam.prompt_encoder.get_dense_pe().numpy()
        for folder in export_split.split_case_folders(refs):
            sparse = np.load(folder / "split_sparse_embeddings.npy")
            self.split[folder.name] = {
                "prompt_encoder": (
                    {"points": np.load(folder / "split_points.npy").astype(np.float32),
                     "labels": np.load(folder / "split_labels.npy").astype(np.float32)},
                    {"sparsePromptEmbeddings": sparse, "densePromptEmbeddings": dense}),
                "mask_decoder": (
                    {"imageEmbeddings": self.embeddings, "imagePositionalEncoding": dense_pe,
                     "sparsePromptEmbeddings": sparse, "densePromptEmbeddings": dense},
                    {"masks": np.load(folder / "split_masks.npy"),
                     "iouPredictions": np.load(folder / "split_iou_predictions.npy")}),
            }

    def runs(self, part: Part) -> Dict[str, Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]]:
        """case -> (feeds, expected outputs) for a file holding ``part``."""
        if part.form == "image_encoder":
            return {"image": ({"image": self.input_image}, {"imageEmbeddings": self.embeddings})}
        if part.form == "official":
            return {name: (c["feeds"], c["expected"]) for name, c in self.official.items()}
        return {name: c[part.key] for name, c in self.split.items()}


def within_tolerance(result: Dict[str, Any]) -> bool:
    """Every output the shape of its reference and within samverify's default atol."""
    return all(o["max_abs"] is not None and o["max_abs"] <= F32_TOLERANCE for o in result["outputs"].values())


def max_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())


def mask_iou(logits: np.ndarray, reference: np.ndarray) -> float:
    """IoU of logits > 0 with reference > 0 over all masks of a case (1.0 when both are empty)."""
    a, b = np.asarray(logits, np.float32) > 0, np.asarray(reference, np.float32) > 0
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0


ORT_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(int64)": np.int64}


def onnxruntime_vs_pytorch(path: Path, part: Part, refs: References) -> Dict[str, Any]:
    """Max abs difference per output over the reference cases; low-res mask IoU per case for decoders."""
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        input_types = {i.name: ORT_DTYPES.get(i.type, np.float32) for i in session.get_inputs()}
        names = [o.name for o in session.get_outputs()]
        worst: Dict[str, Dict[str, Any]] = {}
        ious: Dict[str, float] = {}
        for case, (feeds, expected) in refs.runs(part).items():
            got = dict(zip(names, session.run(None, {k: v.astype(input_types[k]) for k, v in feeds.items()})))
            for name, reference in expected.items():
                if worst.get(name, {}).get("max_abs", 0.0) is None:
                    continue  # a shape mismatch was already recorded
                if got[name].shape != reference.shape:
                    worst[name] = {"max_abs": None, "case": case, "shape": list(got[name].shape),
                                   "reference_shape": list(reference.shape)}
                    continue
                err = max_abs(got[name], reference)
                if name not in worst or err > worst[name]["max_abs"]:
                    worst[name] = {"max_abs": err, "case": case, "reference_max_abs": float(np.abs(reference).max())}
            mask_name = {"official": "low_res_masks", "split": "masks"}.get(part.form)
            if mask_name and mask_name in expected:
                ious[case] = mask_iou(got[mask_name], expected[mask_name])
    except Exception as exc:  # the file is still committed; the manifest says why it does not run
        return {"runnable": False, "error": f"{type(exc).__name__}: {str(exc).strip()[:600]}"}
    result: Dict[str, Any] = {"runnable": True, "outputs": worst}
    if ious:
        result["low_res_mask_iou"] = {**ious, "min": min(ious.values())}
    return result


# --- describing files -----------------------------------------------------------------------


def version(dist: str) -> Optional[str]:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def versions() -> Dict[str, Optional[str]]:
    return {"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": version("onnxruntime"),
            "onnxslim": version("onnxslim"), "onnxscript": version("onnxscript")}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


TENSOR_TYPES = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.FLOAT16: "float16",
                onnx.TensorProto.INT64: "int64", onnx.TensorProto.UINT8: "uint8", onnx.TensorProto.INT8: "int8"}


def describe_model(path: Path) -> Dict[str, Any]:
    """Opset, inputs/outputs, external data, node metadata and naming of an ONNX file."""
    model = onnx.load(str(path), load_external_data=False)
    graph = model.graph

    def value(v) -> Dict[str, Any]:
        t = v.type.tensor_type
        return {"dtype": TENSOR_TYPES.get(t.elem_type, str(t.elem_type)),
                "shape": [d.dim_param or d.dim_value for d in t.shape.dim]}

    external = sorted({e.value for t in graph.initializer for e in t.external_data if e.key == "location"})
    node_keys = Counter(p.key for n in graph.node for p in n.metadata_props)
    # dynamo namespace ": Root/<module path>: Class/.../<fx node>: <aten op>": one "/" when the node was
    # traced in the exported module's own forward (no submodule call around it)
    namespaces = [p.value for n in graph.node for p in n.metadata_props if p.key == "namespace"]
    ops = Counter(n.op_type for n in graph.node)
    weighted = [n for n in graph.node if n.op_type in ("Conv", "MatMul", "Gemm", "ConvInteger", "MatMulInteger")]
    initializers = [t.name for t in graph.initializer]
    return {
        "opset": next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None),
        "ir_version": model.ir_version,
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "inputs": {v.name: value(v) for v in graph.input},
        "outputs": {v.name: value(v) for v in graph.output},
        "external_data": external,
        "nodes": len(graph.node),
        "initializers": len(initializers),
        "metadata": {
            "node_metadata_props": dict(sorted(node_keys.items())),
            "model_metadata_props": sorted(p.key for p in model.metadata_props),
            "node_name_examples": [n.name for n in weighted[:2]],
            "initializer_name_examples": initializers[:3],
            **({"namespace_root_only_nodes": sum(ns.count("/") == 1 for ns in namespaces),
                "namespace_module_scoped_nodes": sum(ns.count("/") > 1 for ns in namespaces)}
               if namespaces else {}),
        },
        "quantization_ops": {op: ops[op] for op in QUANT_OPS if ops[op]},
    }


def metadata_survival(source: Dict[str, Any], derived: Dict[str, Any]) -> Dict[str, List[str]]:
    before = set(source["metadata"]["node_metadata_props"])
    after = set(derived["metadata"]["node_metadata_props"])
    return {"kept": sorted(before & after), "lost": sorted(before - after), "added": sorted(after - before)}


# --- output folder ------------------------------------------------------------------------------


def prepare_out(root: Path) -> None:
    """Wipes an earlier run's folder (its manifest names this script), refuses anything else."""
    if root.exists() and any(root.iterdir()):
        manifest = root / "manifest.json"
        ours = manifest.exists() and json.loads(manifest.read_text()).get("exporter_script") == EXPORTER_MARK
        if not ours:
            raise SystemExit(f"{root} is not empty and not an earlier export_styles.py output; refusing")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)


def load_model(config: str, weights: Path):
    torch.manual_seed(0)
    torch.set_grad_enabled(False)
    sam = build_sam(sam_configs.resolve(config))
    load_checkpoint_(sam, weights)
    return sam


def rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def file_records(root: Path, entries: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Every file under root: the model entries completed with bytes/sha256, external data files too."""
    files: Dict[str, Dict[str, Any]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != "manifest.json"):
        key = rel(path, root)
        record = dict(entries.get(key, {}))
        if key not in entries and path.suffix == ".data":
            record["external_data_of"] = key[: -len(".data")]
        record.update(bytes=path.stat().st_size, sha256=sha256(path))
        files[key] = record
    return files


# --- styles mode ---------------------------------------------------------------------------------


def run_styles(args: argparse.Namespace) -> Tuple[Dict[str, Any], List[str]]:
    features = exporter_features()
    sam = load_model(args.config, args.weights)
    sam16 = half_model(sam)
    refs = References(args.references, sam)
    image = torch.from_numpy(refs.input_image)
    out = args.out
    prepare_out(out)
    common = {"versions": versions()}
    entries: Dict[str, Dict[str, Any]] = {}
    described: Dict[str, Dict[str, Any]] = {}
    skipped: List[Dict[str, str]] = []
    problems: List[str] = []

    for style in EXPORT_STYLES:
        lacking = missing_features(style, features)
        for key in style.parts:
            part = PARTS[key]
            name = f"{style.name}/{part.file}"
            if lacking:
                skipped.append({"file": name, "reason": lacking})
                continue
            path = out / style.name / part.file
            path.parent.mkdir(parents=True, exist_ok=True)
            print(f"export_styles: {name}", flush=True)
            try:
                made = export_one(style, part, sam16 if style.half else sam, image, path, features)
            except Exception as exc:
                for leftover in path.parent.glob(part.file + "*"):
                    leftover.unlink()
                skipped.append({"file": name, "reason": f"export failed: {exc}"})
                problems.append(f"{name}: export failed")
                continue
            described[name] = describe_model(path)
            entry = {"style": style.name, "exporter": style.exporter, "tool": "torch.onnx.export",
                     "weights_dtype": "float16" if style.half else "float32",
                     "components": list(part.components), "form": part.form,
                     "module": module_description(part, style.exporter), **made, **common}
            if style.half and part.form == "official":
                entry["upstream_patch"] = HALF_PATCH
            entries[name] = entry

    for style in DERIVED_STYLES:
        for key in style.parts:
            part = PARTS[key]
            name, source_name = f"{style.name}/{part.file}", f"{style.source}/{part.file}"
            if source_name not in entries:
                skipped.append({"file": name, "reason": f"its source {source_name} was not made"})
                continue
            path = out / style.name / part.file
            path.parent.mkdir(parents=True, exist_ok=True)
            print(f"export_styles: {name}", flush=True)
            try:
                made = derive_one(style, part, out / source_name, path, sam)
            except Exception as exc:
                path.unlink(missing_ok=True)
                skipped.append({"file": name, "reason": f"{style.tool} failed: {exc}"})
                problems.append(f"{name}: {style.tool} failed")
                continue
            described[name] = describe_model(path)
            entry = {"style": style.name, "exporter": style.tool, "tool": style.tool, "source": source_name,
                     "weights_dtype": weights_dtype(style),
                     "components": list(part.components), "form": part.form,
                     "module": entries[source_name]["module"], **made, **common,
                     "metadata_from_source": metadata_survival(described[source_name], described[name])}
            if style.note:
                entry["note"] = style.note
            entries[name] = entry

    for name, entry in entries.items():
        entry.update(described[name])
        entry["onnxruntime_vs_pytorch"] = onnxruntime_vs_pytorch(out / name, PARTS_BY_FILE[Path(name).name], refs)
        result = entry["onnxruntime_vs_pytorch"]
        if entry["weights_dtype"] == "float32":
            if not result["runnable"]:
                problems.append(f"{name}: onnxruntime cannot run it: {result['error'][:200]}")
            elif not within_tolerance(result):
                problems.append(f"{name}: onnxruntime vs PyTorch beyond {F32_TOLERANCE} (or a shape mismatch)")

    manifest = styles_manifest(args, features, refs, file_records(out, entries), skipped)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest, problems


def styles_manifest(args: argparse.Namespace, features: Dict[str, bool], refs: References,
                    files: Dict[str, Dict[str, Any]], skipped: List[Dict[str, str]]) -> Dict[str, Any]:
    root = Path(__file__).resolve().parent.parent

    def shown(path: Path) -> str:
        try:
            return path.resolve().relative_to(root).as_posix()
        except ValueError:
            return str(path)

    styles: Dict[str, Any] = {}
    for s in EXPORT_STYLES:
        styles[s.name] = {"exporter": s.exporter, "opset": s.opset if s.opset is not None else "exporter default",
                          "weights_dtype": "float16" if s.half else "float32",
                          "files": [PARTS[k].file for k in s.parts]}
        if s.exporter == "dynamo":
            styles[s.name]["external_data"] = s.external_data
    for d in DERIVED_STYLES:
        styles[d.name] = {"tool": d.tool, "source": d.source, "options": d.options,
                          "files": [PARTS[k].file for k in d.parts], **({"note": d.note} if d.note else {})}
    model_bytes = sum(f["bytes"] for f in files.values())
    return {
        "exporter_script": EXPORTER_MARK,
        "command": " ".join(["converters/export_styles.py", "--config", args.config,
                             "--weights", shown(args.weights), "--references", shown(args.references)]),
        "config": args.config,
        "weights": {"file": shown(args.weights), "sha256": sha256(args.weights)},
        "references": shown(refs.root),
        "python": platform.python_version(),
        "versions": versions(),
        "exporter_features": features,
        "styles": styles,
        "files": files,
        "total_bytes": model_bytes,
        "skipped": skipped,
        "notes": {
            "onnxruntime_vs_pytorch": (
                "CPUExecutionProvider, default session options. Per output: the largest |onnxruntime - PyTorch| "
                "over the set's cases (image encoder: references/input_image.npy -> image_embeddings.npy; "
                "official decoders: references/<case>/onnx_*.npy, every case, fed the reference image "
                "embeddings; split pair: the point-only cases, the mask decoder fed the reference sparse "
                "embeddings), the case where it occurs and the reference's largest |value|. References are "
                "PyTorch float32: for fp16 and int8 files the figure is their precision loss. The official "
                "decoders' 'masks' (upscaled to the original size) has no stored file: its reference is "
                "PyTorch float32 SamOnnxModel run here on the same inputs. low_res_mask_iou: per case, "
                "|A and B| / |A or B| of logits > 0 over all four low-res masks, onnxruntime vs reference. "
                "runnable false: onnxruntime could not load or run the file; error is its message."),
            "pytorch_vs_stored_references_max_abs": refs.pytorch_vs_references,
            "pytorch_vs_stored_references": (
                "PyTorch here vs the stored references on the official decoder's outputs: non-zero when this "
                "machine's CPU kernels round differently from the one that made the set"),
            "removed_node_metadata": (
                "dynamo files: every node's pkg.torch.onnx.stack_trace is removed after export (source paths "
                "and line text, most of a file's bytes and machine-specific); namespace, "
                "pkg.torch.onnx.name_scopes, pkg.torch.onnx.class_hierarchy and pkg.torch.onnx.fx_node stay. "
                "Nothing else is changed. TorchScript files and the onnxslim/onnxruntime outputs are as the "
                "tools wrote them"),
            "wrappers": (
                "the dynamo image encoders are export_dynamo.Wrapped (initializers named model.*, class "
                "__main__.Wrapped), as reference_outputs/tiny/dynamo; the TorchScript ones export "
                "sam.image_encoder itself, as the set's top-level ImageEncoder.onnx"),
            "torchscript-opset17": (
                "the same calls as the set's top-level ImageEncoder.onnx, PromptEncoder.onnx, MaskDecoder.onnx "
                "and mobile_sam_decoder.onnx: byte-identical files (git stores each once)"),
            "int8_image_encoder": INT8_ENCODER_NOTE,
            "fp16": HALF_PATCH + "; the encoder needs no patch",
            "reproducibility": (
                "a rerun with the same versions rewrites every model file byte for byte (all exporters and "
                "tools here are deterministic for a fixed input; export example inputs are fixed or "
                "seeded). The onnxruntime figures and the int8-qdq scales (from an onnxruntime calibration "
                "run) depend on the CPU's kernels, so another machine kind may change them in the last bits"),
        },
    }


# --- reference-set mode (full size) ------------------------------------------------------------


def copy_tree(source: Path, target: Path) -> None:
    """Copies files' bytes only (a read-only source folder must not make a read-only copy)."""
    for path in sorted(source.rglob("*")):
        if path.is_file():
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / path.relative_to(source))


def default_exporter(features: Dict[str, bool]) -> str:
    return "dynamo" if features["dynamo_is_default"] else "torchscript"


def run_reference_set(args: argparse.Namespace) -> Tuple[Dict[str, Any], List[str]]:
    """Image encoder + segment_anything's official decoder with torch's default exporter and options,
    beside a copy of an existing set's references/: a reference set samverify reads."""
    features = exporter_features()
    exporter = default_exporter(features)
    style = ExportStyle("default", exporter, None, ("image_encoder", "official_decoder_sa"))
    lacking = missing_features(style, features)
    if lacking:
        raise SystemExit(f"export_styles.py: {lacking}")
    sam = load_model(args.config, args.weights)
    out = args.out
    prepare_out(out)
    print(f"export_styles: copying {args.references / 'references'}", flush=True)
    copy_tree(args.references / "references", out / "references")
    (out / "config.json").write_text(json.dumps(sam_configs.resolve(args.config), indent=1, sort_keys=True) + "\n")
    refs = References(args.references, sam, segment_anything_onnx_model())
    image = torch.from_numpy(refs.input_image)
    exports: Dict[str, Any] = {}
    problems: List[str] = []
    for key in style.parts:
        part = PARTS[key]
        print(f"export_styles: {part.file} ({exporter}, torch {torch.__version__})", flush=True)
        made = export_one(style, part, sam, image, out / part.file, features)
        entry = {"exporter": exporter, "module": module_description(part, exporter),
                 "components": list(part.components), "form": part.form, **made, **describe_model(out / part.file)}
        entry["onnxruntime_vs_pytorch"] = onnxruntime_vs_pytorch(out / part.file, part, refs)
        result = entry["onnxruntime_vs_pytorch"]
        if not result["runnable"]:
            problems.append(f"{part.file}: {result['error'][:200]}")
        elif not within_tolerance(result):
            problems.append(f"{part.file}: onnxruntime vs PyTorch above {F32_TOLERANCE}")
        exports[part.file] = entry

    source = json.loads((args.references / "manifest.json").read_text())
    manifest = {
        "exporter_script": EXPORTER_MARK,
        "model": f"mobile_sam vit_t ({args.config} config)",
        "config": sam_configs.resolve(args.config),
        "weights": {"file": str(args.weights), "sha256": sha256(args.weights)},
        "references_from": str(args.references),
        "image_size": source["image_size"],
        "cases": [{"name": c["name"], "files": c.get("files", [])} for c in source["cases"]],
        "tolerances": source.get("tolerances", {"atol": 1e-4, "rtol": 1e-4}),
        "exports": exports,
        "pytorch_vs_stored_references_max_abs": refs.pytorch_vs_references,
        "pytorch_vs_stored_references_note": (
            "segment_anything's SamOnnxModel (PyTorch float32, these weights) vs the set's stored onnx_* "
            "outputs, made with mobile_sam's SamOnnxModel: the same computation"),
        "versions": versions(),
        "exporter_features": features,
        "command": " ".join(["converters/export_styles.py", *sys.argv[1:]]),
        "files": export_reference.file_entries(out),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    (out / "README.md").write_text(reference_set_readme(args, exporter, exports))
    return manifest, problems


def reference_set_readme(args: argparse.Namespace, exporter: str, exports: Dict[str, Any]) -> str:
    lines = [
        f"# MobileSAM reference set ({args.config}): torch's default exporter, segment_anything's SamOnnxModel",
        "",
        f"Made by `{EXPORTER_MARK} --reference-set` from `{args.weights}` with torch {torch.__version__} "
        f"({exporter} exporter, its default opset and options); `references/` is a copy of "
        f"`{args.references}/references` (same weights, so the same PyTorch outputs).",
        "",
    ]
    for name, entry in exports.items():
        outs = entry["onnxruntime_vs_pytorch"].get("outputs", {})
        figures = ", ".join(f"{k} {v['max_abs']:.3g}" for k, v in outs.items())
        lines.append(f"* `{name}`: {entry['module']}; onnxruntime vs PyTorch max abs: {figures}")
    lines += ["", "Check a model converted from it:", "",
              "    samconvert <this folder> --out model.samw && samverify model.samw --references <this folder>", ""]
    return "\n".join(lines)


# --- command line ---------------------------------------------------------------------------------


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), default="tiny")
    parser.add_argument("--weights", type=Path, default=root / "reference_outputs/tiny/mobile_sam.h5",
                        help="state dict (.pt/.pth) or flat .h5")
    parser.add_argument("--references", type=Path, default=root / "reference_outputs/tiny",
                        help="a reference set made from the same weights (manifest.json, references/)")
    parser.add_argument("--out", type=Path, default=None, help="default: <references>/exports (styles mode)")
    parser.add_argument("--reference-set", action="store_true",
                        help="write a reference set: image encoder + segment_anything's official decoder with "
                             "torch's default exporter, and a copy of --references' references/")
    args = parser.parse_args(argv)
    if args.out is None:
        if args.reference_set:
            parser.error("--reference-set needs --out")
        args.out = args.references / "exports"
    for path, what in ((args.weights, "--weights"), (args.references / "manifest.json", "--references")):
        if not path.is_file():
            parser.error(f"{what}: {path} does not exist")
    return args


def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    manifest, problems = run_reference_set(args) if args.reference_set else run_styles(args)
    summary = summarize(manifest)
    print(json.dumps(summary, indent=1))
    if problems:
        raise SystemExit("export_styles.py: " + "; ".join(problems))
    return manifest


def summarize(manifest: Dict[str, Any]) -> Dict[str, Any]:
    """Per file: the worst output difference and the lowest mask IoU, or why it does not run."""
    entries = manifest.get("files", {})
    entries = {k: v for k, v in entries.items() if "onnxruntime_vs_pytorch" in v} or manifest.get("exports", {})
    summary: Dict[str, Any] = {}
    for name, entry in entries.items():
        result = entry["onnxruntime_vs_pytorch"]
        if not result["runnable"]:
            summary[name] = "not runnable: " + result["error"][:120]
            continue
        line = {k: v["max_abs"] for k, v in result["outputs"].items()}
        if "low_res_mask_iou" in result:
            line["min_mask_iou"] = result["low_res_mask_iou"]["min"]
        summary[name] = line
    summary["skipped"] = manifest.get("skipped", [])
    return summary


if __name__ == "__main__":
    main()

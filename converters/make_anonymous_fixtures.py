#!/usr/bin/env python3
"""Write reference_outputs/tiny/anonymous/: tiny exports with every name removed.

Each file is one of the tiny MobileSAM exports (reference_outputs/tiny/exports/) or the tiny
SAM ViT set's (reference_outputs/vit_tiny/) passed through ``anonymize_onnx.py``
(initializers and values renamed, node names and metadata dropped; ``shuffled`` files also
re-sorted into another topological order; ``renamed`` files have only their initializers renamed,
as a hand edit does, and keep node names and metadata). ``ambiguous-labels.onnx`` is one of them with the
label one point embedding is compared against changed from 2 to 1, so two embeddings claim
label 1 and none label 2: an importer must refuse it and list both. ``dropped-norm-multiply.onnx``
has its first LayerNorm2d weight multiply removed (what optimisers do to a multiply by ones): the
norm's bias is still matched, its weight is missing. ``sam2-decoder.onnx`` is the tiny SAM 2.1
decoder, which must be refused with a message that says so. ``manifest.json`` says
where each file came from and which committed state dict holds its weights.

Usage::

    venv/bin/python converters/make_anonymous_fixtures.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from anonymize_onnx import anonymize, rename_initializers

ROOT = Path(__file__).resolve().parent.parent
EXPORTS = ROOT / "reference_outputs/tiny/exports"
OUT = ROOT / "reference_outputs/tiny/anonymous"

# (output name, export, shuffle seed or None, components)
FILES = [
    ("torchscript-opset17-official.onnx", "torchscript-opset17/mobile_sam_decoder.onnx", None, ["prompt_encoder", "mask_decoder"]),
    ("torchscript-opset14-official.onnx", "torchscript-opset14/mobile_sam_decoder.onnx", None, ["prompt_encoder", "mask_decoder"]),
    ("torchscript-opset17-official-shuffled.onnx", "torchscript-opset17/mobile_sam_decoder.onnx", 1, ["prompt_encoder", "mask_decoder"]),
    ("dynamo-default-official.onnx", "dynamo-default/mobile_sam_decoder.onnx", None, ["prompt_encoder", "mask_decoder"]),
    ("onnxslim-dynamo-default-official.onnx", "onnxslim-dynamo-default/mobile_sam_decoder.onnx", None, ["prompt_encoder", "mask_decoder"]),
    ("dynamo-default-segment_anything.onnx", "dynamo-default/segment_anything_decoder.onnx", 2, ["prompt_encoder", "mask_decoder"]),
    ("torchscript-opset17-PromptEncoder.onnx", "torchscript-opset17/PromptEncoder.onnx", None, ["prompt_encoder"]),
    ("torchscript-opset17-MaskDecoder.onnx", "torchscript-opset17/MaskDecoder.onnx", None, ["mask_decoder"]),
    ("dynamo-default-PromptEncoder.onnx", "dynamo-default/PromptEncoder.onnx", 3, ["prompt_encoder"]),
    ("dynamo-default-MaskDecoder.onnx", "dynamo-default/MaskDecoder.onnx", 4, ["mask_decoder"]),
    ("torchscript-opset17-ImageEncoder.onnx", "torchscript-opset17/ImageEncoder.onnx", None, ["image_encoder"]),
    ("torchscript-opset14-ImageEncoder.onnx", "torchscript-opset14/ImageEncoder.onnx", 5, ["image_encoder"]),
    ("dynamo-default-ImageEncoder.onnx", "dynamo-default/ImageEncoder.onnx", 6, ["image_encoder"]),
    ("vit-torchscript-ImageEncoder.onnx", "../../vit_tiny/ImageEncoder.onnx", 7, ["image_encoder"]),
    ("vit-torchscript-official.onnx", "../../vit_tiny/sam_decoder.onnx", 8, ["prompt_encoder", "mask_decoder"]),
]


# Initializers renamed, node names and metadata kept: (output name, export, components).
RENAMED = [
    ("torchscript-opset17-official-renamed.onnx", "torchscript-opset17/mobile_sam_decoder.onnx", ["prompt_encoder", "mask_decoder"]),
    ("torchscript-opset17-ImageEncoder-renamed.onnx", "torchscript-opset17/ImageEncoder.onnx", ["image_encoder"]),
    ("dynamo-default-inline-official-renamed.onnx", "dynamo-default-inline/mobile_sam_decoder.onnx", ["prompt_encoder", "mask_decoder"]),
]


def relabel(model: onnx.ModelProto, old: int, new: int) -> onnx.ModelProto:
    """Changes the scalar constant one `Equal` compares the labels against from `old` to `new`."""
    initializers = {init.name: init for init in model.graph.initializer}
    constants = {node.output[0]: node for node in model.graph.node if node.op_type == "Constant"}
    for node in model.graph.node:
        if node.op_type != "Equal":
            continue
        for name in node.input:
            if name in initializers:
                value = numpy_helper.to_array(initializers[name])
                if value.size == 1 and value.item() == old:
                    initializers[name].CopyFrom(numpy_helper.from_array(np.full_like(value, new), name))
                    return model
            elif name in constants:
                attribute = constants[name].attribute[0]
                value = numpy_helper.to_array(attribute.t)
                if value.size == 1 and value.item() == old:
                    attribute.t.CopyFrom(numpy_helper.from_array(np.full_like(value, new)))
                    return model
    raise SystemExit(f"make_anonymous_fixtures: no Equal compares with {old}")


def drop_channel_multiply(model: onnx.ModelProto) -> onnx.ModelProto:
    """Removes the first LayerNorm2d weight multiply (a Mul by a stored [C,1,1]), as graph
    optimisers do when the weight is all ones: its readers read the normalised map instead."""
    shapes = {init.name: list(init.dims) for init in model.graph.initializer}
    for node in model.graph.node:
        stored = [name for name in node.input if len(shapes.get(name, [])) == 3 and shapes[name][1:] == [1, 1]]
        if node.op_type == "Mul" and stored:
            other = next(name for name in node.input if name not in stored)
            for reader in model.graph.node:
                reader.input[:] = [other if name == node.output[0] else name for name in reader.input]
            model.graph.node.remove(node)
            weight = next(init for init in model.graph.initializer if init.name == stored[0])
            model.graph.initializer.remove(weight)
            return model
    raise SystemExit("make_anonymous_fixtures: no LayerNorm2d multiply found")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = {"files": {}}
    for name, source, shuffle, components in FILES:
        model = anonymize(onnx.load(EXPORTS / source), shuffle)
        onnx.checker.check_model(model)
        onnx.save(model, OUT / name)
        state_dict = "vit_tiny/sam.h5" if "vit_tiny" in source else "tiny/mobile_sam.h5"
        manifest["files"][name] = {"source": str((EXPORTS / source).resolve().relative_to(ROOT / "reference_outputs")),
                                   "shuffle_seed": shuffle, "components": components, "state_dict": state_dict}
    for name, source, components in RENAMED:
        model = rename_initializers(onnx.load(EXPORTS / source))
        onnx.save(model, OUT / name)
        manifest["files"][name] = {"source": f"tiny/exports/{source}", "shuffle_seed": None, "components": components,
                                   "state_dict": "tiny/mobile_sam.h5", "initializers_only": True}
    ambiguous = relabel(anonymize(onnx.load(EXPORTS / FILES[0][1]), None), 2, 1)
    onnx.save(ambiguous, OUT / "ambiguous-labels.onnx")
    manifest["files"]["ambiguous-labels.onnx"] = {"source": f"tiny/exports/{FILES[0][1]}", "shuffle_seed": None,
                                                  "components": FILES[0][3], "state_dict": "tiny/mobile_sam.h5",
                                                  "edit": "the Equal comparing labels with 2 compares with 1"}
    dropped = drop_channel_multiply(anonymize(onnx.load(EXPORTS / FILES[0][1]), None))
    onnx.checker.check_model(dropped)
    onnx.save(dropped, OUT / "dropped-norm-multiply.onnx")
    manifest["files"]["dropped-norm-multiply.onnx"] = {"source": f"tiny/exports/{FILES[0][1]}", "shuffle_seed": None,
                                                       "components": FILES[0][3], "state_dict": "tiny/mobile_sam.h5",
                                                       "edit": "the first LayerNorm2d weight multiply removed"}
    sam2 = anonymize(onnx.load(ROOT / "reference_outputs/sam2_tiny/decoder.onnx"), None)
    onnx.save(sam2, OUT / "sam2-decoder.onnx")
    manifest["files"]["sam2-decoder.onnx"] = {"source": "sam2_tiny/decoder.onnx", "shuffle_seed": None,
                                              "components": ["prompt_encoder", "mask_decoder"],
                                              "edit": "none: a SAM 2 decoder, which has no structural module order"}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(manifest['files'])} files to {OUT}")


if __name__ == "__main__":
    main()

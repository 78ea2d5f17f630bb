#!/usr/bin/env python3
"""Dump every submodule's output of one forward pass, for porting a model module by module.

Usage::

    # a builder (any callable returning an nn.Module: a family's build function, or a class)
    venv/bin/python converters/dump_modules.py --builder export_sam_hq:build_weighted \
        --kwargs '{"config": "hq_tiny_vit_tiny"}' --call image_encoder \
        --input x=reference_outputs/sam_hq_tiny_vit_tiny/references/input_image.npy --out /tmp/dumps
    venv/bin/python converters/dump_modules.py --builder segment_anything.modeling:ImageEncoderViT \
        --kwargs '{"img_size": 128, "embed_dim": 32, "depth": 4, "num_heads": 2}' --checkpoint weights.pth \
        --input input_image.npy --prefix blocks.0 blocks.1 --out /tmp/dumps
    # or a whole pickled model (torch.save(model)) / a TorchScript file
    venv/bin/python converters/dump_modules.py --model sam.pt --call image_encoder --input x=image.npy --out /tmp/dumps

``--input [NAME=]FILE.npy`` (repeatable): without NAME a positional argument of forward, in order;
with NAME a keyword argument. A 0-d array is passed as a Python scalar (flags such as
``multimask_output``). ``--call PATH`` runs that submodule's forward instead of the model's; paths
stay the model's (``image_encoder.blocks.0``), the names its state dict uses.

Writes ``<out>/modules/<module.path>.npy`` for every module output that is a tensor (a tuple or
list: ``<path>.<i>.npy``, a dict: ``<path>.<key>.npy``; a module called again: ``<path>#<n>``), and
``<out>/module_order.json``: the calls in the order they finished (a module after its children),
with each file's shape and dtype. Outputs are cloned as the hook fires (later in-place ops cannot
change them). TorchScript modules take no forward hooks: a ``--torchscript`` model dumps only the
output of the module it calls.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so --builder export_sam_hq:... imports


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--builder", help="module:callable returning an nn.Module")
    source.add_argument("--model", type=Path, help="a torch.save(model) file (unpickled: trusted files only)")
    source.add_argument("--torchscript", type=Path, help="a torch.jit.save file")
    parser.add_argument("--kwargs", default="{}", help="JSON keyword arguments of --builder")
    parser.add_argument("--checkpoint", type=Path, help="a state dict (.pt/.pth; {'model': ...} unwrapped), loaded strictly")
    parser.add_argument("--call", default="", help="the submodule whose forward runs (default: the model)")
    parser.add_argument("--input", action="append", default=[], metavar="[NAME=]FILE.npy")
    parser.add_argument("--prefix", nargs="*", default=[], help="dump only paths under these")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def load_model(args: argparse.Namespace) -> torch.nn.Module:
    if args.builder:
        module, _, name = args.builder.partition(":")
        model = getattr(importlib.import_module(module), name)(**json.loads(args.kwargs))
    elif args.model:
        model = torch.load(args.model, map_location="cpu", weights_only=False)
    else:
        model = torch.jit.load(str(args.torchscript), map_location="cpu")
    if args.checkpoint:
        state = torch.load(args.checkpoint, map_location="cpu", weights_only=True)
        model.load_state_dict(state.get("model", state) if isinstance(state, dict) else state, strict=True)
    return model.eval()


def load_inputs(specs: List[str]):
    args, kwargs = [], {}
    for spec in specs:
        name, _, path = spec.rpartition("=")
        array = np.load(path, allow_pickle=False)
        value = array.item() if array.ndim == 0 else torch.from_numpy(array)
        if name:
            kwargs[name] = value
        else:
            args.append(value)
    return args, kwargs


def tensors(value: Any, suffix: str = ""):
    """(suffix, tensor) for every tensor in an output, tuples/lists/dicts flattened."""
    if isinstance(value, torch.Tensor):
        yield suffix, value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from tensors(item, f"{suffix}.{i}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from tensors(item, f"{suffix}.{key}")


def main(argv=None) -> None:
    args = parse_args(argv)
    model = load_model(args)
    target = model.get_submodule(args.call) if args.call else model
    call_args, call_kwargs = load_inputs(args.input)
    wanted = lambda path: not args.prefix or any(path == p or path.startswith(p + ".") for p in args.prefix)  # noqa: E731

    calls: List[Dict[str, Any]] = []
    counts: Dict[str, int] = {}

    def hook_for(path: str):
        def hook(_module, _inputs, output):
            outputs = [(s, t.detach().clone()) for s, t in tensors(output)]
            if outputs:
                counts[path] = counts.get(path, 0) + 1
                calls.append({"path": path, "call": counts[path] - 1, "outputs": outputs})
        return hook

    scripted = isinstance(model, torch.jit.ScriptModule)  # refuses forward hooks
    handles = [] if scripted else [
        module.register_forward_hook(hook_for(path)) for path, module in model.named_modules()
        if (path == args.call or path.startswith(args.call + ".") or not args.call) and wanted(path)]
    with torch.no_grad():
        output = target(*call_args, **call_kwargs)
    for handle in handles:
        handle.remove()
    if scripted:  # the called module's output only
        hook_for(args.call)(target, None, output)

    (args.out / "modules").mkdir(parents=True, exist_ok=True)
    order = []
    for call in calls:
        name = (call["path"] or "model") + (f"#{call['call']}" if call["call"] else "")
        files = []
        for suffix, tensor in call["outputs"]:
            rel = f"modules/{name}{suffix}.npy"
            array = tensor.cpu().numpy()
            np.save(args.out / rel, array)
            files.append({"file": rel, "shape": list(array.shape), "dtype": str(array.dtype)})
        order.append({"module": call["path"], "call": call["call"], "outputs": files})
    (args.out / "module_order.json").write_text(json.dumps(order, indent=1) + "\n")
    print(f"{len(order)} module calls, {sum(len(o['outputs']) for o in order)} files -> {args.out}")


if __name__ == "__main__":
    main()

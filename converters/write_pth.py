#!/usr/bin/env python3
"""Save a SAM state dict the way the published checkpoints are saved: ``torch.save(sam.state_dict())``.

Usage::

    venv/bin/python converters/write_pth.py --config vit_b --weights /tmp/vit_b_set/sam.h5 \\
        --out /tmp/vit_b_set_pth/sam_vit_b.pth

``sam_vit_b_01ec64.pth`` and its siblings are a bare state dict (an ``OrderedDict`` of tensors,
upstream ``segment_anything`` names, no wrapper) written by ``torch.save``'s zip format. This
loads ``--weights`` (flat .h5 or .pth) into the upstream classes (strict) and writes their
``state_dict()`` so, so samconvert can be tried on the same weights as a reference set's HDF5.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sam_configs  # noqa: E402
from build_model import build_sam, load_checkpoint_  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), required=True)
    parser.add_argument("--weights", type=Path, required=True, help="state dict: flat .h5 or .pth")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sam = build_sam(sam_configs.resolve(args.config))
    load_checkpoint_(sam, args.weights)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(sam.state_dict(), args.out)
    print(f"{args.out}: {len(sam.state_dict())} tensors, {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()

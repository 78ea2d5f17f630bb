"""Writes a seeded MobileSAM state dict at one of sam_configs' sizes, with no reference outputs.

For measuring conversion and model load on a file of the size users convert (``--config large``
is ViT-B-sized, ~375 MB). The weights are drawn as export_reference.py draws them.

    .venv/bin/python converters/make_sized_model.py --config large --seed 0 --out out/large
    # -> out/large/mobile_sam.h5 (flat dotted names) and out/large/config.json
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import h5py
import torch

import sam_configs
from build_model import build_sam, check_encoder_output, seeded_init_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", choices=sorted(sam_configs.CONFIGS), default="large")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    cfg = sam_configs.resolve(args.config)
    torch.manual_seed(args.seed)
    sam = build_sam(cfg)
    seeded_init_(sam)
    check_encoder_output(sam, cfg)
    args.out.mkdir(parents=True, exist_ok=True)
    state = sam.state_dict()
    with h5py.File(args.out / "mobile_sam.h5", "w") as f:
        f.attrs["source"] = f"converters/make_sized_model.py --config {args.config} --seed {args.seed}"
        for key in sorted(state):
            f.create_dataset(key, data=state[key].detach().cpu().numpy())
    (args.out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    parameters = sum(t.numel() for t in state.values() if t.is_floating_point())
    print(f"wrote {args.out}/mobile_sam.h5: {len(state)} tensors, {parameters / 1e6:.1f}M parameters")


if __name__ == "__main__":
    main()

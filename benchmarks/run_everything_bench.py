#!/usr/bin/env python3
"""Segment everything, native beside PyTorch, on the same weights, photo and thread count.

Each round runs, as separate processes and one after the other, upstream's SamAutomaticMaskGenerator
(converters/export_amg.py, which times generate() alone and writes the masks) and
`samrun MODEL IMAGE --everything` (which prints the generator's time), both with the generator's
defaults unless parameters are given. Reports the generator times, their ratio, the native decoder's
throughput (masks decoded per second, three per grid point: the time beyond a one-point run of the
same command, which holds the encoder and fixed costs), each side's peak RSS, and how the two
sides' masks match (one to one at IoU >= 0.95). Writes a JSON file with every figure.

    benchmarks/run_everything_bench.py --bin .build/release --reference-set DIR --threads 2 [--image PHOTO] [--rounds 1]
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(command, env):
    """(wall seconds, peak RSS in MiB, stdout) of one child process; its peak as GNU time reports it."""
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "peak_rss_kib %M"] + [str(part) for part in command], env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"run_everything_bench.py: {' '.join(map(str, command))} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    peaks = re.findall(r"peak_rss_kib (\d+)", done.stderr)
    return seconds, (int(peaks[-1]) / 1024 if peaks else float("nan")), done.stdout


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, type=Path, help="folder of the release samconvert and samrun")
    parser.add_argument("--reference-set", "--drop", dest="drop", required=True, type=Path, help="a full-size MobileSAM set (mobile_sam.h5, image.png)")
    parser.add_argument("--image", type=Path, help="the photo (default: the set's image.png)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench-everything.json")
    parser.add_argument("parameters", nargs="*", help="generator options for both sides, e.g. --points-per-side 16 (after --)")
    args = parser.parse_args()
    image = args.image or args.drop / "image.png"
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), SAM_NUM_THREADS=str(args.threads))
    work = Path(tempfile.mkdtemp(prefix="bench-everything-"))
    model = work / "mobile_sam.samw"
    run([args.bin / "samconvert", args.drop / "mobile_sam.h5", "--out", model], env)

    rounds = []
    for index in range(args.rounds):
        upstream_out = work / f"upstream-{index}"
        torch_seconds, torch_rss, _ = run(
            [sys.executable, ROOT / "converters" / "export_amg.py", "--model", "vit_t", "--config", "full",
             "--weights", args.drop / "mobile_sam.h5", "--no-weights-copy", "--image", image, "--threads", str(args.threads),
             "--out", upstream_out] + args.parameters, env)
        manifest = json.loads((upstream_out / "manifest.json").read_text())
        photo = manifest["images"][0]
        native_out = work / f"native-{index}"
        native_wall, native_rss, stdout = run(
            [args.bin / "samrun", model, image, "--everything", "--out", native_out] + args.parameters, env)
        found = re.search(r"(\d+) masks from (\d+) prompts in ([0-9.]+) s", stdout)
        masks, prompts, native_seconds = int(found.group(1)), int(found.group(2)), float(found.group(3))
        # The same run on a one-point grid: the encoder and the fixed costs; the difference is the
        # decoding of the other prompts (three masks each) and their filtering.
        single = [part for part in args.parameters]
        if "--points-per-side" in single:
            position = single.index("--points-per-side")
            del single[position:position + 2]
        _, _, one_stdout = run([args.bin / "samrun", model, image, "--everything", "--out", work / f"native-one-{index}",
                                "--points-per-side", "1"] + single, env)
        one = re.search(r"(\d+) masks from (\d+) prompts in ([0-9.]+) s", one_stdout)
        one_prompts, one_seconds = int(one.group(2)), float(one.group(3))
        compared = subprocess.run([sys.executable, ROOT / "converters" / "compare_amg.py", native_out / "masks.json",
                                   upstream_out / photo["masks"]], capture_output=True, text=True).stdout
        rounds.append({
            "upstream_generate_s": photo["generate_seconds"], "upstream_process_s": torch_seconds, "upstream_peak_rss_mib": torch_rss,
            "upstream_masks": photo["mask_count"], "native_generate_s": native_seconds, "native_process_s": native_wall,
            "native_peak_rss_mib": native_rss, "native_masks": masks, "prompts": prompts,
            "ratio": native_seconds / photo["generate_seconds"],
            "native_one_point_s": one_seconds,
            "native_decoded_masks_per_s": 3 * (prompts - one_prompts) / max(native_seconds - one_seconds, 1e-9),
            "comparison": compared.strip().splitlines(),
        })
        r = rounds[-1]
        print(f"round {index}: upstream {r['upstream_generate_s']:.1f} s ({r['upstream_masks']} masks, {torch_rss:.0f} MiB), "
              f"native {native_seconds:.1f} s ({masks} masks, {native_rss:.0f} MiB): {r['ratio']:.3f}x; "
              f"decoder {r['native_decoded_masks_per_s']:.0f} masks/s (one-point run {one_seconds:.2f} s)", flush=True)
        print("  " + "\n  ".join(r["comparison"][:3]), flush=True)

    result = {
        "machine": {"cpu": cpu_name(), "cores": os.cpu_count(), "threads": args.threads,
                    "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE")},
        "date": time.strftime("%Y-%m-%d"), "image": str(image), "parameters": args.parameters, "rounds": rounds,
        "ratio_median": sorted(r["ratio"] for r in rounds)[len(rounds) // 2],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"median ratio {result['ratio_median']:.3f}x (native / PyTorch generator time); {args.json}")


if __name__ == "__main__":
    main()

"""`make bench-sam2`: the native SAM 2 image encoder beside onnxruntime on samexporter's export.

One reference set made by converters/export_sam2.py --onnx (SET: config.json, encoder.onnx,
references/input_image.npy): the native model is converted from the set's encoder.onnx (the same
export onnxruntime runs), then `sambench encoder` and `ort_encoder_bench.py` run in separate processes,
interleaved, ROUNDS times each, same thread count, each process WARMUPS untimed runs then RUNS timed ones. Prints a table and writes --json (medians of the
per-round medians and the fastest run of each side, ratios native / onnxruntime for time and peak RSS),
with GFLOP/s of the export's products and the share of `sambench fma-peak` measured after the rounds.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from onnx_flops import graph_gflop, throughput_sentence


def run_json(command, env):
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="release bin folder (samconvert, sambench)")
    p.add_argument("--set", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--runs", type=int, default=2, help="timed encoder runs per process (after the warm-ups)")
    # Two: with one, onnxruntime's first timed run in these interleaved rounds took 2.6-2.9 s against
    # 1.8-1.95 s for its second (SAM 2.1 tiny, Zen 4), and the medians mixed the two.
    p.add_argument("--warmups", type=int, default=2, help="untimed encoder runs per process, on both sides")
    p.add_argument("--json", default="out/bench-sam2.json")
    p.add_argument("--bf16", action="store_true",
                   help="also run the native encoder with bfloat16 linear layers (sambench --bf16; CPUs with AVX512_BF16)")
    a = p.parse_args()
    env = dict(os.environ, SAM_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads))
    # SAM_CPU_CAP=avx2 holds the tools to an AVX2 CPU's kernels, and sambench refuses --bf16 there.
    held_to_avx2 = os.environ.get("SAM_CPU_CAP", "").lower() == "avx2"
    bf16 = a.bf16 and "avx512_bf16" in Path("/proc/cpuinfo").read_text().split() and not held_to_avx2
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "encoder.samw")
        config = os.path.join(a.set, "config.json")
        subprocess.run([os.path.join(a.bin, "samconvert"), os.path.join(a.set, "encoder.onnx"), "--config", config,
                        "--out", model], check=True, capture_output=True, env=env)
        rounds = []
        for _ in range(a.rounds):
            native_cmd = [os.path.join(a.bin, "sambench"), "encoder", model, a.set, "--runs", str(a.runs),
                          "--warmups", str(a.warmups), "--threads", str(a.threads)]
            native = run_json(native_cmd, env)
            ort = run_json([sys.executable, str(Path(__file__).with_name("ort_encoder_bench.py")),
                            os.path.join(a.set, "encoder.onnx"), os.path.join(a.set, "references", "input_image.npy"),
                            "--runs", str(a.runs), "--warmups", str(a.warmups), "--threads", str(a.threads)], env)
            rounds.append({"native": native, "onnxruntime": ort})
            if bf16:
                rounds[-1]["native_bf16"] = run_json(native_cmd + ["--bf16"], env)
        # The float32 ceiling after the rounds, and the export's products (onnx_flops.py), for GFLOP/s and
        # the share of the ceiling.
        fma_peak = run_json([os.path.join(a.bin, "sambench"), "fma-peak", "--threads", str(a.threads)], env)
        gflop, unknown = graph_gflop(os.path.join(a.set, "encoder.onnx"), os.path.join(a.set, "references", "input_image.npy"))
    def med(side, key):
        return statistics.median(r[side][key] for r in rounds)

    def fastest(side):
        return min(t for r in rounds for t in r[side]["encoder_runs"])
    result = {
        "set": a.set, "threads": a.threads, "warmups": a.warmups, "runs": a.runs, "rounds": rounds, "machine": platform.processor() or platform.machine(),
        "encoder_s": {"native": med("native", "encoder_median_s"), "onnxruntime": med("onnxruntime", "encoder_median_s")},
        "encoder_min_s": {"native": fastest("native"), "onnxruntime": fastest("onnxruntime")},
        "peak_rss_kib": {"native": med("native", "peak_rss_kib"), "onnxruntime": med("onnxruntime", "peak_rss_kib")},
        "load_s": {"native": med("native", "load_s"), "onnxruntime": med("onnxruntime", "load_s")},
        "blas": rounds[0]["native"].get("blas"), "onnxruntime_version": rounds[0]["onnxruntime"].get("version"),
        "fma_peak": fma_peak, "gflop": gflop, "gflop_unknown_nodes": unknown,
    }
    for key in ("encoder_s", "encoder_min_s", "peak_rss_kib", "load_s"):
        result[key]["ratio"] = result[key]["native"] / result[key]["onnxruntime"]
    if bf16:
        result["encoder_bf16_s"] = {"median": med("native_bf16", "encoder_median_s"), "fastest": fastest("native_bf16"),
                                    "peak_rss_kib": med("native_bf16", "peak_rss_kib")}
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(result, indent=1) + "\n")
    print(f"SAM 2 image encoder, {a.set}, {a.threads} threads, {a.rounds} interleaved rounds of {a.warmups} warm-ups + "
          f"{a.runs} timed runs per process ({result['blas']})")
    print("| what | native | onnxruntime | ratio |\n|---|---|---|---|")
    print(f"| encoder | {result['encoder_s']['native'] * 1000:.0f} ms | {result['encoder_s']['onnxruntime'] * 1000:.0f} ms "
          f"| {result['encoder_s']['ratio']:.2f}x |")
    print(f"| encoder, minimum | {result['encoder_min_s']['native'] * 1000:.0f} ms | {result['encoder_min_s']['onnxruntime'] * 1000:.0f} ms "
          f"| {result['encoder_min_s']['ratio']:.2f}x |")
    print(f"| peak RSS | {result['peak_rss_kib']['native'] / 1024:.0f} MiB | {result['peak_rss_kib']['onnxruntime'] / 1024:.0f} MiB "
          f"| {result['peak_rss_kib']['ratio']:.2f}x |")
    print(f"| load | {result['load_s']['native'] * 1000:.0f} ms | {result['load_s']['onnxruntime'] * 1000:.0f} ms "
          f"| {result['load_s']['ratio']:.2f}x |")
    print("\n" + throughput_sentence(gflop, unknown, fma_peak["gflops"], result["encoder_s"]["native"],
                                      result["encoder_min_s"]["native"], result["encoder_s"]["onnxruntime"]) + "\n")
    if bf16:
        b, o = result["encoder_bf16_s"], result["encoder_s"]["onnxruntime"]
        print(f"| encoder, bfloat16 linear layers (opt-in) | {b['median'] * 1000:.0f} ms | {o * 1000:.0f} ms "
              f"| {b['median'] / o:.2f}x |")
        print(f"| same, minimum | {b['fastest'] * 1000:.0f} ms | {result['encoder_min_s']['onnxruntime'] * 1000:.0f} ms "
              f"| {b['fastest'] / result['encoder_min_s']['onnxruntime']:.2f}x |")


if __name__ == "__main__":
    main()

"""`make bench-encoders`: image encoders alone, native (`sambench encoder`) against onnxruntime on each
reference set's ImageEncoder.onnx, in interleaved separate processes (run_bench.py's encoder-set
comparison without the MobileSAM run around it), with each encoder's GFLOP/s (the exported graph's products,
onnx_flops.py) and its share of `sambench fma-peak` measured after the rounds. Prints the tables and
writes --json.
"""
import argparse
import datetime
import json
import os
import sys
import tempfile

from run_bench import bench_encoder_set, cpu_model, encoder_set_report, run_json


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="release bin folder holding sambench and samconvert")
    p.add_argument("--encoder-set", action="append", required=True,
                   help="a reference set folder (weights .h5, config.json, ImageEncoder.onnx, references/input_image.npy)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=10, help="interleaved process pairs per set")
    p.add_argument("--json", default="out/bench-encoders.json")
    p.add_argument("--bf16", action="store_true",
                   help="also native with bfloat16 linear layers (sambench --bf16; CPUs with AVX512_BF16)")
    a = p.parse_args()
    t = str(a.threads)
    env = dict(os.environ, OMP_NUM_THREADS=t, OPENBLAS_NUM_THREADS=t, SAM_NUM_THREADS=t)
    sambench, samconvert = os.path.join(a.bin, "sambench"), os.path.join(a.bin, "samconvert")
    with tempfile.TemporaryDirectory() as tmp:
        results = [bench_encoder_set(folder, sambench, samconvert, t, a.rounds, env, tmp, bf16=a.bf16)
                   for folder in a.encoder_set]
    # The float32 ceiling right after the rounds, for each encoder's share of it.
    fma_peak = run_json([sambench, "fma-peak", "--threads", t], env)
    lines = [f"# Image encoders alone, {a.threads} threads", "",
             f"{cpu_model()}, {datetime.date.today().isoformat()}; OPENBLAS_CORETYPE="
             f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}."]
    for result in results:
        lines += encoder_set_report(result, fma_peak["gflops"])
    print("\n".join(lines))
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"cpu": cpu_model(), "date": datetime.date.today().isoformat(), "threads": a.threads, "fma_peak": fma_peak, "sets": results}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())

"""onnxruntime side of `make bench-sam2`: one process, prints one JSON object.

samexporter's SAM 2 image encoder (SET/encoder.onnx: high_res_feats_0, high_res_feats_1, image_embed)
on SET/references/input_image.npy, one untimed warm-up first, as `sambench encoder` runs the native
one. Thread count via OMP_NUM_THREADS and intra_op_num_threads (set before onnxruntime is imported).
Peak RSS = VmHWM at the end.
"""
import argparse
import json
import os
import sys
import time


def peak_rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("set")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.intra_op_num_threads = a.threads
    o.inter_op_num_threads = 1
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    t0 = time.perf_counter()
    enc = ort.InferenceSession(os.path.join(a.set, "encoder.onnx"), o, providers=["CPUExecutionProvider"])
    load_s = time.perf_counter() - t0
    image = np.load(os.path.join(a.set, "references", "input_image.npy")).astype(np.float32)
    name = enc.get_inputs()[0].name
    times = []
    for run in range(a.runs + 1):  # run 0 is a warm-up
        s = time.perf_counter()
        enc.run(None, {name: image})
        if run > 0:
            times.append(time.perf_counter() - s)
    json.dump({"mode": "onnxruntime", "version": ort.__version__, "load_s": load_s, "encoder_runs": times,
               "encoder_median_s": float(np.median(times)), "threads": a.threads, "peak_rss_kib": peak_rss_kib()},
              sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()

"""onnxruntime side of the encoder-only comparisons (`make bench ENCODER_SETS=...`, `make bench-sam2`;
any model family, every output of the encoder): one process, prints one JSON object.

Creates a session for ENCODER.onnx, runs it on IMAGE.npy (--warmups untimed runs, one by default,
then --runs timed runs) and reports session creation time, the run times and peak RSS (VmHWM). Same work as
`sambench encoder MODEL.samw IMAGE.npy`. Threads via OMP_NUM_THREADS and intra_op_num_threads.
With --reference REF.npy, also the first output's largest and mean absolute difference from REF (after
the timed runs, outside them).
"""
import argparse
import json
import os
import time


def peak_rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("encoder")
    p.add_argument("image")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--warmups", type=int, default=1)
    p.add_argument("--reference", default=None, help="a .npy the first output is compared with (max/mean abs)")
    a = p.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = a.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    t0 = time.perf_counter()
    session = ort.InferenceSession(a.encoder, options, providers=["CPUExecutionProvider"])
    load_s = time.perf_counter() - t0
    image = np.load(a.image).astype(np.float32)
    feeds = {session.get_inputs()[0].name: image}
    times = []
    for run in range(a.warmups + a.runs):  # the first `warmups` runs are not timed
        outputs = None  # the previous run's outputs are not held through this one
        s = time.perf_counter()
        outputs = session.run(None, feeds)
        if run >= a.warmups:
            times.append(time.perf_counter() - s)
    result = {"mode": "onnxruntime_encoder", "version": ort.__version__, "load_s": load_s, "encoder_runs": times,
              "encoder_median_s": float(np.median(times)), "peak_rss_kib": peak_rss_kib()}
    if a.reference:
        reference = np.load(a.reference).astype(np.float64)
        if reference.shape == outputs[0].shape:
            difference = np.abs(outputs[0].astype(np.float64) - reference)
            result.update(reference_max_abs=float(difference.max()), reference_mean_abs=float(difference.mean()))
        else:
            result["reference_error"] = f"shape {list(outputs[0].shape)} vs reference {list(reference.shape)}"
    json.dump(result, os.sys.stdout)
    print()


if __name__ == "__main__":
    main()

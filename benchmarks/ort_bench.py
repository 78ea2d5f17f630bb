"""onnxruntime side of `make bench`: one process, prints one JSON object.

Same inputs as `sambench run`: references/input_image.npy through ImageEncoder.onnx, and the
official decoder mobile_sam_decoder.onnx (prompt encoder + mask decoder + upscaling to
orig_im_size 1365x2048) on the point1 / points16 / points100 cases' ONNX inputs, with the
image embeddings this process just computed. Thread count via OMP_NUM_THREADS and
intra_op_num_threads (set before onnxruntime is imported). Peak RSS = VmHWM at the end.
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
    p.add_argument("drop")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--encoder-runs", type=int, default=1)
    p.add_argument("--decoder-runs", type=int, default=5)
    a = p.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    import numpy as np
    import onnxruntime as ort

    refs = os.path.join(a.drop, "references")

    def options():
        o = ort.SessionOptions()
        o.intra_op_num_threads = a.threads
        o.inter_op_num_threads = 1
        o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        return o

    t0 = time.perf_counter()
    enc = ort.InferenceSession(os.path.join(a.drop, "ImageEncoder.onnx"), options(), providers=["CPUExecutionProvider"])
    dec = ort.InferenceSession(os.path.join(a.drop, "mobile_sam_decoder.onnx"), options(), providers=["CPUExecutionProvider"])
    load_s = time.perf_counter() - t0

    image = np.load(os.path.join(refs, "input_image.npy")).astype(np.float32)
    enc_in = enc.get_inputs()[0].name
    times = []
    emb = None
    for run in range(a.encoder_runs + 1):  # run 0 is a warm-up
        s = time.perf_counter()
        emb = enc.run(None, {enc_in: image})[0]
        if run > 0:
            times.append(time.perf_counter() - s)

    decoder = {}
    mask_shape = None
    for name, n in (("point1", 1), ("points16", 16), ("points100", 100)):
        d = os.path.join(refs, name)
        feeds = {
            "image_embeddings": emb,
            "point_coords": np.load(os.path.join(d, "onnx_point_coords.npy")).astype(np.float32),
            "point_labels": np.load(os.path.join(d, "onnx_point_labels.npy")).astype(np.float32),
            "mask_input": np.load(os.path.join(d, "onnx_mask_input.npy")).astype(np.float32),
            "has_mask_input": np.load(os.path.join(d, "onnx_has_mask_input.npy")).astype(np.float32),
            "orig_im_size": np.array([1365, 2048], dtype=np.float32),
        }
        dt = []
        for run in range(a.decoder_runs + 1):
            s = time.perf_counter()
            out = dec.run(None, feeds)
            if run > 0:
                dt.append(time.perf_counter() - s)
        mask_shape = list(out[0].shape)
        decoder[str(n)] = {"runs": dt, "median_s": float(np.median(dt)), "points": n}

    json.dump({
        "mode": "onnxruntime", "version": ort.__version__, "load_s": load_s,
        "encoder_runs": times, "encoder_median_s": float(np.median(times)),
        "decoder": decoder, "decoder_masks_shape": mask_shape, "threads": a.threads,
        "peak_rss_kib": peak_rss_kib(),
    }, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()

"""`make bench`: native runtime (sambench) vs onnxruntime (ort_bench.py) on the full-size set.

Interleaves whole processes (native, onnxruntime, native, onnxruntime, ...), each measuring model
load, one warm-up plus --encoder-runs timed image-encoder runs, decoder runs per point count, and
its own peak RSS; times samconvert on the full-size set; times a large sgemm and the CPU's fused multiply-add
ceiling (sambench fma-peak) for the achieved/peak figures;
writes BENCHMARKS.md and benchmarks/results.json. With --alt-coretype the native side also runs
(interleaved in the same rounds) with another OPENBLAS_CORETYPE (or none). With --bf16 (CPUs with
AVX512_BF16) it also runs with the opt-in bfloat16 linear layers, and samverify --bf16 measures their
accuracy at the task level on the full-size set's cases.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from onnx_flops import graph_gflop, throughput_sentence


def run_json(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def timed(cmd, env):
    t = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def timed_with_rss(cmd, env):
    """(seconds, peak RSS in MiB) of one run of `cmd`."""
    t = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - t
    if status != 0:
        raise subprocess.CalledProcessError(status, cmd)
    return seconds, usage.ru_maxrss / 1024


def copy_seconds(path, tmp):
    """Time to copy `path` and flush the copy to disk, what samconvert's own write costs at least."""
    target = os.path.join(tmp, "copy")
    t = time.perf_counter()
    with open(path, "rb") as src, open(target, "wb") as dst:
        while chunk := src.read(1 << 24):
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    seconds = time.perf_counter() - t
    os.remove(target)
    return seconds


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def cpu_model():
    """The model name, with cpuid's family and model: a VM's name ("AMD EPYC") does not say which
    generation ran, and generations differ (Zen 4 splits AVX-512 into two 256-bit halves, Zen 5 does not)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "cpu family", "model") and key not in fields:
                    fields[key] = value.strip()
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or "unknown"
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']}, model {fields['model']})"
    return name


def cpu_flag(flag):
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and flag in line.split() for line in f)
    except OSError:
        return False


def avx512():
    return cpu_flag("avx512f")


def bf16_accuracy(samverify, model, drop, env, tmp):
    """samverify --bf16 on the full-size set: the task-level figures (against PyTorch's float32 references) and
    the image embeddings' error."""
    return task_accuracy(samverify, model, drop, env, tmp, ["--bf16"])


def task_accuracy(samverify, model, drop, env, tmp, extra=()):
    """samverify (with `extra` options) on a reference set: the task-level figures (against PyTorch's float32
    references) and the image embeddings' error."""
    report = os.path.join(tmp, "accuracy-verify.json")
    if os.path.exists(report):
        os.remove(report)  # never read an earlier model's report
    subprocess.run([samverify, model, "--references", drop, *extra, "--quiet", "--json", report],
                   env=env, stdout=subprocess.DEVNULL)
    r = json.load(open(report))
    tasks = [c["task"] for c in r["cases"] if c.get("task")]
    embeddings = next(o["figures"] for c in r["cases"] if c["kind"] == "image_encoder" for o in c["outputs"])
    return {
        "linear_precision": r.get("linearPrecision"),
        "min_mask_iou": min(t["minMaskIoU"] for t in tasks),
        "min_mask_iou_end_to_end": min(t["minMaskIoU"] for c, t in zip(r["cases"], tasks) if c["kind"] == "image_encoder"),
        "best_mask_agreements": sum(t["bestMaskAgreements"] for t in tasks),
        "best_mask_disagreements": sum(t["bestMaskDisagreements"] for t in tasks),
        "max_iou_prediction_error": max(t["maxIoUPredictionError"] for t in tasks),
        "task_cases": r["taskCounts"],
        "image_embeddings_max_abs": embeddings["maxAbs"], "image_embeddings_mean_abs": embeddings["meanAbs"],
    }


def summarise(runs):
    """Pooled medians over a side's process runs."""
    s = {
        "processes": len(runs),
        "encoder_s": med([t for r in runs for t in r["encoder_runs"]]),
        "encoder_runs_s": [t for r in runs for t in r["encoder_runs"]],
        "load_s": med([r["load_s"] for r in runs]),
        "peak_rss_mib": med([r["peak_rss_kib"] / 1024 for r in runs]),
        "decoder_s": {n: med([t for r in runs for t in r["decoder"][n]["runs"]]) for n in ("1", "16", "100")},
    }
    if "blas" in runs[0]:
        s["blas"] = runs[0]["blas"]
        s["decode_only_s"] = {n: med([r["decoder"][n]["decode_only_median_s"] for r in runs]) for n in ("1", "16", "100")}
        s["decoder_image_state_s"] = med([r["decoder_image_state_median_s"] for r in runs])
    if "linear_kernel" in runs[0]:
        s["linear_kernel"] = runs[0]["linear_kernel"]
    return s


def encoder_set_weights(folder):
    """A reference set's weights file and the samconvert options it needs: (path, [--config FILE] or [])."""
    names = ("sam.h5", "mobile_sam.h5", "sam_hq.h5", "efficientvit_sam.h5")
    weights = next((os.path.join(folder, name) for name in names if os.path.exists(os.path.join(folder, name))), None)
    if weights is None:
        sys.exit(f"bench: {folder} holds none of {', '.join(names)}")
    # The set's config.json, where it names a model family the weights alone would not (SAM-HQ's).
    config_file = os.path.join(folder, "config.json")
    named = os.path.exists(config_file) and "modelFamily" in json.load(open(config_file))
    return weights, (["--config", config_file] if named else [])


def bench_encoder_set(folder, sambench, samconvert, threads, rounds, env, tmp, bf16=False):
    """Image encoder alone, native (`sambench encoder`) and onnxruntime (ort_encoder_bench.py) in
    interleaved separate processes, on one reference set; with `bf16` also native with bfloat16
    linear layers."""
    folder = os.path.abspath(folder)
    weights, config_args = encoder_set_weights(folder)
    model = os.path.join(tmp, "encoder-set.samw")
    convert_s = timed([samconvert, weights, "--out", model, "--force"] + config_args, env)
    image = os.path.join(folder, "references", "input_image.npy")
    native_cmd = [sambench, "encoder", model, image, "--threads", threads]
    ort_cmd = [sys.executable, os.path.join(os.path.dirname(__file__), "ort_encoder_bench.py"),
               os.path.join(folder, "ImageEncoder.onnx"), image, "--threads", threads]
    native, ort, native_bf16 = [], [], []
    for i in range(rounds):
        print(f"[bench] {os.path.basename(folder)} encoder round {i + 1}/{rounds}", file=sys.stderr, flush=True)
        native.append(run_json(native_cmd, env))
        ort.append(run_json(ort_cmd, env))
        if bf16:
            native_bf16.append(run_json(native_cmd + ["--bf16"], env))
    config = json.load(open(os.path.join(folder, "config.json")))
    os.remove(model)
    # The exported graph's products (onnx_flops.py; one profiled onnxruntime run where shapes are computed
    # at run time), for GFLOP/s and the share of the ceiling.
    gflop, unknown = graph_gflop(os.path.join(folder, "ImageEncoder.onnx"), image)
    return {"folder": folder, "label": os.path.basename(folder), "weights": os.path.basename(weights),
            "encoder": config.get("imageEncoder", {}), "convert_s": convert_s, "rounds": rounds,
            "native": native, "onnxruntime": ort, "native_bf16": native_bf16,
            "gflop": gflop, "gflop_unknown_nodes": unknown}


def encoder_set_report(result, fma_peak_gflops=None):
    """The set's tables; with `fma_peak_gflops` (`sambench fma-peak` in the same run) also each side's
    GFLOP/s as a share of that ceiling."""
    native = [r["encoder_median_s"] for r in result["native"]]
    ort = [r["encoder_median_s"] for r in result["onnxruntime"]]
    rss_n = med([r["peak_rss_kib"] / 1024 for r in result["native"]])
    rss_o = med([r["peak_rss_kib"] / 1024 for r in result["onnxruntime"]])
    load_n = med([r["load_s"] for r in result["native"]])
    load_o = med([r["load_s"] for r in result["onnxruntime"]])
    encoder = result["encoder"]
    described = ", ".join(f"{k} {encoder[k]}" for k in ("family", "embedDim", "depth", "numHeads") if k in encoder)
    return ["", f"## Image encoder alone: `{result['label']}`", "",
            f"{result['rounds']} interleaved rounds of separate processes (native `sambench encoder`, then "
            f"onnxruntime on the set's ImageEncoder.onnx), each: load, 1 untimed warm-up, 1 timed run on "
            f"references/input_image.npy. Model: {described or 'see the set'}; the .samw converted from "
            f"{result['weights']} in {result['convert_s']:.2f} s.", "",
            "| Measurement | native | onnxruntime | native / ort |", "|---|---:|---:|---:|",
            f"| Encoder, median | {med(native) * 1000:.0f} ms | {med(ort) * 1000:.0f} ms | {med(native) / med(ort):.2f} |",
            f"| Encoder, minimum | {min(native) * 1000:.0f} ms | {min(ort) * 1000:.0f} ms | {min(native) / min(ort):.2f} |",
            f"| Model load (median) | {load_n * 1000:.0f} ms | {load_o * 1000:.0f} ms | {load_n / load_o:.2f} |",
            f"| Peak RSS (VmHWM, median) | {rss_n:.0f} MiB | {rss_o:.0f} MiB | {rss_n / rss_o:.2f} |", "",
            f"Spread: native {min(native) * 1000:.0f}–{max(native) * 1000:.0f} ms, "
            f"onnxruntime {min(ort) * 1000:.0f}–{max(ort) * 1000:.0f} ms."] + throughput_rows(result, native, ort, fma_peak_gflops) \
        + bf16_rows(result, ort)


def throughput_rows(result, native, ort, fma_peak_gflops):
    if not result.get("gflop"):
        return []
    return ["", throughput_sentence(result["gflop"], result.get("gflop_unknown_nodes"), fma_peak_gflops,
                                    med(native), min(native), med(ort))]


def bf16_rows(result, ort):
    bf16 = [r["encoder_median_s"] for r in result.get("native_bf16", [])]
    if not bf16:
        return []
    return ["", f"With bfloat16 linear layers (opt-in, `sambench encoder --bf16`, interleaved in the same rounds): "
            f"median {med(bf16) * 1000:.0f} ms ({med(bf16) / med(ort):.2f}x onnxruntime), "
            f"minimum {min(bf16) * 1000:.0f} ms ({min(bf16) / min(ort):.2f}x)."]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="release bin folder holding sambench and samconvert")
    p.add_argument("--reference-set", "--drop", dest="drop", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5, help="process pairs (native, onnxruntime)")
    p.add_argument("--encoder-runs", type=int, default=1, help="timed encoder runs per process (after one warm-up)")
    p.add_argument("--decoder-runs", type=int, default=5, help="timed decoder runs per point count per process")
    p.add_argument("--convert-runs", type=int, default=3)
    p.add_argument("--sized-model", default=None,
                   help="a folder with mobile_sam.h5 and config.json (converters/make_sized_model.py) to time samconvert on too")
    p.add_argument("--alt-coretype", default=None,
                   help="also run the native side with another OpenBLAS kernel path: 'unset' removes OPENBLAS_CORETYPE, "
                        "a name (Haswell, SkylakeX, ...) sets it, 'auto' = unset if the environment sets it, "
                        "else SkylakeX on an AVX-512 CPU, else Haswell; 'avx2-cap' runs an AVX2 CPU's kernels throughout "
                        "(SAM_CPU_CAP=avx2: OpenBLAS's Haswell kernels, no AVX-512 panel product or sixteen-lane loops) "
                        "and reports that path's own float32 ceiling")
    p.add_argument("--bf16", action="store_true",
                   help="also run the native side with bfloat16 linear layers (sambench --bf16; CPUs with AVX512_BF16), "
                        "and report their task-level accuracy (samverify --bf16)")
    p.add_argument("--encoder-set", action="append", default=[],
                   help="a reference set folder (converters/export_reference.py: sam.h5 or mobile_sam.h5, ImageEncoder.onnx, "
                        "references/input_image.npy) whose image encoder is timed alone against onnxruntime; repeatable")
    p.add_argument("--encoder-set-rounds", type=int, default=10, help="interleaved process pairs per encoder set")
    p.add_argument("--build-flags", default="", help="the Swift build flags the binaries were built with (for the report)")
    p.add_argument("--markdown", default="BENCHMARKS.md")
    p.add_argument("--json", default="benchmarks/results.json")
    a = p.parse_args()

    drop = os.path.abspath(a.drop)
    sambench = os.path.join(a.bin, "sambench")
    bf16 = a.bf16 and cpu_flag("avx512_bf16")
    if a.bf16 and not bf16:
        print("[bench] --bf16: this CPU has no AVX512_BF16; the bfloat16 column is not measured", file=sys.stderr)
    samconvert = os.path.join(a.bin, "samconvert")
    t = str(a.threads)
    base = dict(os.environ, OMP_NUM_THREADS=t, OPENBLAS_NUM_THREADS=t, SAM_NUM_THREADS=t)
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    alt = a.alt_coretype
    if alt == "auto":
        alt = "unset" if coretype else ("SkylakeX" if avx512() else "Haswell")
    unset = {k: v for k, v in base.items() if k != "OPENBLAS_CORETYPE"}
    if alt == "avx2-cap":
        unset["SAM_CPU_CAP"] = "avx2"  # the tools start again with OPENBLAS_CORETYPE=Haswell
    elif alt and alt != "unset":
        unset["OPENBLAS_CORETYPE"] = alt
    alt_label = None if not alt else {"unset": "OPENBLAS_CORETYPE unset",
                                      "avx2-cap": "SAM_CPU_CAP=avx2"}.get(alt, f"OPENBLAS_CORETYPE={alt}")

    with tempfile.TemporaryDirectory(prefix="sambench-") as tmp:
        onnx_samw, h5_samw = os.path.join(tmp, "onnx.samw"), os.path.join(tmp, "h5.samw")
        convert_onnx = [samconvert, f"{drop}/ImageEncoder.onnx", f"{drop}/mobile_sam_decoder.onnx", "--out", onnx_samw, "--force"]
        convert_h5 = [samconvert, f"{drop}/mobile_sam.h5", "--out", h5_samw, "--force"]
        conv = {"onnx": [], "h5": [], "h5_rss_mib": [], "h5_copy": [], "sized": [], "sized_rss_mib": [], "sized_copy": []}
        sized_samw = os.path.join(tmp, "sized.samw")
        if a.sized_model:
            sized = os.path.abspath(a.sized_model)
            convert_sized = [samconvert, f"{sized}/mobile_sam.h5", "--config", f"{sized}/config.json", "--out", sized_samw, "--force"]
        for i in range(a.convert_runs):
            print(f"[bench] samconvert round {i + 1}/{a.convert_runs}", file=sys.stderr, flush=True)
            conv["onnx"].append(timed(convert_onnx, base))
            seconds, rss = timed_with_rss(convert_h5, base)
            conv["h5"].append(seconds)
            conv["h5_rss_mib"].append(rss)
            conv["h5_copy"].append(copy_seconds(f"{drop}/mobile_sam.h5", tmp))
            if a.sized_model:
                seconds, rss = timed_with_rss(convert_sized, base)
                conv["sized"].append(seconds)
                conv["sized_rss_mib"].append(rss)
                conv["sized_copy"].append(copy_seconds(f"{sized}/mobile_sam.h5", tmp))
        if a.sized_model:
            os.remove(sized_samw)

        sgemm = {"as_is": run_json([sambench, "sgemm", "--threads", t], base)}
        if alt:
            sgemm["alt"] = run_json([sambench, "sgemm", "--threads", t], unset)
        fma_peak = run_json([sambench, "fma-peak", "--threads", t], base)
        # Under the cap the ceiling is the eight-lane one (half the sixteen-lane one where 512-bit
        # operations run whole).
        fma_peak_alt = run_json([sambench, "fma-peak", "--threads", t], unset) if alt == "avx2-cap" else None

        native, native_unset, native_bf16, ort = [], [], [], []
        bench_native = [sambench, "run", h5_samw, drop, "--threads", t,
                        "--encoder-runs", str(a.encoder_runs), "--decoder-runs", str(a.decoder_runs)]
        bench_ort = [sys.executable, os.path.join(os.path.dirname(__file__), "ort_bench.py"), drop, "--threads", t,
                     "--encoder-runs", str(a.encoder_runs), "--decoder-runs", str(a.decoder_runs)]
        for i in range(a.rounds):
            print(f"[bench] round {i + 1}/{a.rounds}", file=sys.stderr, flush=True)
            native.append(run_json(bench_native, base))
            ort.append(run_json(bench_ort, base))
            if alt:
                native_unset.append(run_json(bench_native, unset))
            if bf16:
                native_bf16.append(run_json(bench_native + ["--bf16"], base))
        accuracy = bf16_accuracy(os.path.join(a.bin, "samverify"), h5_samw, drop, base, tmp) if bf16 else None

        encoder_sets = [bench_encoder_set(folder, sambench, samconvert, t, a.encoder_set_rounds, base, tmp, bf16)
                        for folder in a.encoder_set]

    n, o = summarise(native), summarise(ort)
    nu = summarise(native_unset) if native_unset else None
    nb = summarise(native_bf16) if native_bf16 else None
    ratio = lambda x, y: x / y if y else float("nan")
    pick = lambda side, get: get(side) if side else None
    rows = [("Model load", n["load_s"], o["load_s"], nu and nu["load_s"], pick(nb, lambda x: x["load_s"]), "s")]
    rows.append(("Image encoder", n["encoder_s"], o["encoder_s"], nu and nu["encoder_s"], pick(nb, lambda x: x["encoder_s"]), "s"))
    for k in ("1", "16", "100"):
        rows.append((f"Decoder + upscale, {k} point{'s' if k != '1' else ''}", n["decoder_s"][k], o["decoder_s"][k],
                     nu and nu["decoder_s"][k], pick(nb, lambda x: x["decoder_s"][k]), "s"))
    rows.append(("Peak RSS (VmHWM)", n["peak_rss_mib"], o["peak_rss_mib"], nu and nu["peak_rss_mib"],
                 pick(nb, lambda x: x["peak_rss_mib"]), "MiB"))

    machine = {
        "nproc": os.cpu_count(),
        "nproc_cmd": subprocess.run(["nproc"], stdout=subprocess.PIPE, text=True).stdout.strip(),
        "cpu": cpu_model(),
        "kernel": platform.release(),
        "openblas_coretype_env": coretype,
        "blas_as_is": n["blas"],
        "blas_alt": nu["blas"] if nu else None,
        "linear_kernel": n.get("linear_kernel"),
        "alt_label": alt_label,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "onnxruntime": ort[0]["version"],
        "threads": a.threads,
    }
    # The products of the set's ImageEncoder.onnx, which onnxruntime runs (MobileSAM's: 77.5 GFLOP).
    encoder_gflop, _ = graph_gflop(f"{drop}/ImageEncoder.onnx", f"{drop}/references/input_image.npy")
    gflops = {
        "encoder_graph": encoder_gflop,
        "encoder_as_is": encoder_gflop / n["encoder_s"],
        "encoder_onnxruntime": encoder_gflop / o["encoder_s"],
        "sgemm_peak_as_is": sgemm["as_is"]["gflops"],
        "fma_peak": fma_peak["gflops"],
    }
    if nb:
        gflops["encoder_bf16"] = encoder_gflop / nb["encoder_s"]
    if nu:
        gflops["encoder_alt"] = encoder_gflop / nu["encoder_s"]
        gflops["sgemm_peak_alt"] = sgemm["alt"]["gflops"]

    results = {
        "machine": machine, "settings": vars(a), "native": n, "native_alt": nu, "native_bf16": nb, "bf16_accuracy": accuracy,
        "onnxruntime": o,
        "ratios_native_over_onnxruntime": {r[0]: ratio(r[1], r[2]) for r in rows},
        "samconvert_s": {"runs": conv, "onnx_median": med(conv["onnx"]), "h5_median": med(conv["h5"]),
                         "h5_copy_median": med(conv["h5_copy"]), "sized_median": med(conv["sized"]),
                         "sized_copy_median": med(conv["sized_copy"])},
        "sgemm": sgemm, "fma_peak": fma_peak, "fma_peak_alt": fma_peak_alt, "gflops": gflops, "encoder_sets": encoder_sets,
        "raw": {"native": native, "native_alt": native_unset, "native_bf16": native_bf16, "onnxruntime": ort},
    }
    os.makedirs(os.path.dirname(a.json) or ".", exist_ok=True)
    with open(a.json, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")

    def fmt(v, unit):
        if v is None:
            return "–"
        return f"{v * 1000:.1f} ms" if unit == "s" else f"{v:.0f} MiB"

    L = ["# Benchmarks: native runtime vs onnxruntime", "",
         "Generated by `make bench` (benchmarks/run_bench.py); raw numbers in benchmarks/results.json.", "",
         "## Machine", "",
         f"- Date: {machine['date_utc']}",
         f"- CPU: {machine['cpu']}, `nproc` = {machine['nproc_cmd']}, Linux {machine['kernel']}; "
         + ("AVX-512 (avx512f) present" if avx512() else "AVX2, no AVX-512"),
         f"- Threads: {a.threads} on both sides (native: SAM_NUM_THREADS workers run its loops and split each large "
         f"matrix product between them, one single-threaded kernel call per block; onnxruntime {machine['onnxruntime']}: "
         f"OMP_NUM_THREADS and intra_op_num_threads)",
         f"- Native float32 linear layers: `{n.get('linear_kernel', 'blas')}` (panels: CVectorMath's panel product on "
         f"AVX-512 CPUs, and on AVX2 ones over at most 256 inputs, the weight packed once per call, whatever "
         f"OPENBLAS_CORETYPE says; blas: OpenBLAS sgemm); "
         f"on AVX-512 CPUs with `panels`, convolutions' products over tiles of pixels (1x1 tiles, im2col bands, "
         f"MBConv rows) run on the panel product too; other convolutions, transposed convolutions and narrow-head "
         f"attention run on OpenBLAS",
         (f"- Native build: `swift build -c release {a.build_flags}` (CPU_FLAGS: code for this CPU's AVX2+FMA)"
          if a.build_flags else "- Native build: `swift build -c release` (portable x86-64)"),
         f"- OPENBLAS_CORETYPE in the environment: `{coretype}`" + (" (not set: OpenBLAS picks its kernels from cpuid; the native tools may start again with another, as `BLAS that ran` shows)" if not coretype else ""),
         f"- BLAS that ran (as-is): `{n['blas']}`"]
    if nu:
        L.append(f"- BLAS that ran ({alt_label}): `{nu['blas']}`")
    L += ["", "## Method", "",
          f"- {a.rounds} rounds of separate processes, interleaved: native, onnxruntime"
          + (f", native with {alt_label}" if nu else "") + (", native with bfloat16 linear layers" if nb else "")
          + "; each process: load the model, "
          f"1 untimed warm-up + {a.encoder_runs} timed image-encoder run(s), then per point count 1 warm-up + "
          f"{a.decoder_runs} timed decoder runs, then read VmHWM. Medians pooled over all timed runs.",
          "- Image encoder: native `Sam.encodeImage` vs ImageEncoder.onnx, both on references/input_image.npy [1,3,1024,1024].",
          "- Decoder, per prompt: official mobile_sam_decoder.onnx (prompt encoder + mask decoder + upscaling of all 4 masks to "
          "orig_im_size 1365x2048) vs native `Sam.decode` + `MaskPostprocessor.upscale` of the 4 masks to 1365x2048, "
          "same ONNX inputs (references/{point1,points16,points100}/onnx_*.npy, padding point included), same embeddings source. "
          "The native side does the decoder's prompt-independent work once per image, as `SegmentAnything.setImage` does "
          f"(`Sam.decoderImageState`, {n['decoder_image_state_s'] * 1000:.1f} ms per image, not in the per-prompt figures; "
          "the same outputs, bit for bit); onnxruntime's decoder graph repeats it for every prompt.",
          "- Model load: `ModelFile.load` of the .samw converted from mobile_sam.h5 (table and metadata checked, every tensor's CRC-32 verified, model built on the mapped weights; tables derived from weights, TinyViT's expanded attention biases and the dense positional encoding, are computed on their first use, in the warm-up runs) vs creating the two onnxruntime sessions.",
          "- Peak RSS: whole process (the onnxruntime one includes the Python interpreter and numpy).",
          "", "## Results", "",
          "| Measurement | native | onnxruntime | native / ort |" + (f" native, {alt_label} (/ ort) |" if nu else "")
          + (" native, bfloat16 linear layers, opt-in (/ ort) |" if nb else ""),
          "|---|---:|---:|---:|" + ("---:|" if nu else "") + ("---:|" if nb else "")]
    for name, nv, ov, uv, bv, unit in rows:
        line = f"| {name} | {fmt(nv, unit)} | {fmt(ov, unit)} | {ratio(nv, ov):.2f} |"
        if nu:
            line += f" {fmt(uv, unit)} ({ratio(uv, ov):.2f}) |"
        if nb:
            line += f" {fmt(bv, unit)} ({ratio(bv, ov):.2f}) |"
        L.append(line)
    spread = lambda xs: f"{min(xs) * 1000:.0f}–{max(xs) * 1000:.0f} ms"
    L += ["", "Image encoder spread (min–max over the timed runs, separate processes): native "
          + spread(n["encoder_runs_s"]) + ", onnxruntime " + spread(o["encoder_runs_s"])
          + (f", native with {alt_label} " + spread(nu["encoder_runs_s"]) if nu else "")
          + ". Run-to-run variation on a shared VM is large: compare medians, and rerun before trusting small differences."]
    L += ["", "Native decoder split (median per process, decode only, without upscale): "
          + ", ".join(f"{k} pt: {n['decode_only_s'][k] * 1000:.1f} ms" for k in ("1", "16", "100")), "",
          "## samconvert", "",
          f"Medians over {a.convert_runs} runs; \"copy\" is reading the input and writing it to a file flushed to disk "
          "(samconvert flushes its output too).", "",
          f"- `samconvert ImageEncoder.onnx mobile_sam_decoder.onnx --out …`: {med(conv['onnx']):.2f} s",
          f"- `samconvert mobile_sam.h5 --out …` ({os.path.getsize(drop + '/mobile_sam.h5') / 1e6:.0f} MB): "
          f"{med(conv['h5']):.2f} s, peak RSS {med(conv['h5_rss_mib']):.0f} MiB; copy {med(conv['h5_copy']):.2f} s "
          f"({med(conv['h5']) / med(conv['h5_copy']):.1f}x)"]
    if a.sized_model:
        L.append(f"- `samconvert` of `{os.path.basename(os.path.normpath(a.sized_model))}/mobile_sam.h5` "
                 f"({os.path.getsize(os.path.join(a.sized_model, 'mobile_sam.h5')) / 1e6:.0f} MB, converters/make_sized_model.py): "
                 f"{med(conv['sized']):.2f} s, peak RSS {med(conv['sized_rss_mib']):.0f} MiB; copy {med(conv['sized_copy']):.2f} s "
                 f"({med(conv['sized']) / med(conv['sized_copy']):.1f}x)")
    L += ["",
          "## Throughput", "",
          f"- Image encoder, {encoder_gflop:.1f} GFLOP (the products of ImageEncoder.onnx, benchmarks/onnx_flops.py): native {gflops['encoder_as_is']:.1f} GFLOP/s, "
          f"onnxruntime {gflops['encoder_onnxruntime']:.1f} GFLOP/s",
          f"- Measured sgemm peak ({sgemm['as_is']['size']}^3 via BLAS.sgemm, {a.threads} threads, as-is): "
          f"{sgemm['as_is']['gflops']:.1f} GFLOP/s -> native encoder at {100 * gflops['encoder_as_is'] / sgemm['as_is']['gflops']:.0f}% of it"]
    if nu:
        L.append(f"- With {alt_label}: sgemm {gflops['sgemm_peak_alt']:.1f} GFLOP/s, "
                 f"native encoder {gflops['encoder_alt']:.1f} GFLOP/s "
                 f"({100 * gflops['encoder_alt'] / gflops['sgemm_peak_alt']:.0f}% of it)"
                 + (f"; its float32 ceiling ({fma_peak_alt['lanes']} lanes) {fma_peak_alt['gflops']:.1f} GFLOP/s, the encoder at "
                    f"{100 * gflops['encoder_alt'] / fma_peak_alt['gflops']:.0f}% of it" if fma_peak_alt else ""))
    # The ceiling no kernel passes: what an encoder time of half onnxruntime's would need of it.
    half_ort = 2 * gflops["encoder_onnxruntime"]
    L.append(f"- CPU float32 ceiling (`sambench fma-peak`: register-only fused multiply-adds, {fma_peak['lanes']} lanes, "
             f"{a.threads} threads, fastest of {len(fma_peak['runs'])} runs): {gflops['fma_peak']:.1f} GFLOP/s. "
             f"Native encoder at {100 * gflops['encoder_as_is'] / gflops['fma_peak']:.0f}% of it, onnxruntime at "
             f"{100 * gflops['encoder_onnxruntime'] / gflops['fma_peak']:.0f}%; an encoder at half onnxruntime's time would need "
             f"{half_ort:.1f} GFLOP/s ({100 * half_ort / gflops['fma_peak']:.0f}% of the ceiling)")
    if nb and accuracy:
        counts = accuracy["task_cases"]
        L += ["", "## bfloat16 linear layers (opt-in)", "",
              "`sambench --bf16` / `samverify --bf16` (`Kernels.setLinearPrecision(.bfloat16)`): every linear layer's weights and "
              "inputs rounded to bfloat16, float32 sums (AMX-BF16 tiles where the CPU and OS allow them, else AVX512_BF16); convolutions and attention products stay float32. "
              f"Image encoder {nb['encoder_s'] * 1000:.1f} ms ({ratio(nb['encoder_s'], o['encoder_s']):.2f}x onnxruntime, "
              f"{ratio(nb['encoder_s'], n['encoder_s']):.2f}x the float32 path, {gflops['encoder_bf16']:.1f} GFLOP/s). "
              "Accuracy against PyTorch's float32 references on the full-size set (samverify --bf16, task level: thresholded full-size masks):",
              "",
              f"- lowest mask IoU over every case's four masks: {accuracy['min_mask_iou']:.4f} "
              f"(end to end, bfloat16 encoder and decoder on the photo: {accuracy['min_mask_iou_end_to_end']:.4f})",
              f"- best mask (highest predicted IoU) the same as the reference's: {accuracy['best_mask_agreements']} of "
              f"{accuracy['best_mask_agreements'] + accuracy['best_mask_disagreements']} prompts",
              f"- largest IoU-prediction error {accuracy['max_iou_prediction_error']:.2e}; image embeddings max abs error "
              f"{accuracy['image_embeddings_max_abs']:.2e}, mean {accuracy['image_embeddings_mean_abs']:.2e} (float32 path: under 1e-5)",
              f"- task-level cases passing samverify's thresholds (IoU >= 0.99, best mask agrees): {counts['passed']} of {counts['cases']}",
              "",
              "The weights are seeded random: a trained model's activations differ, so judge the path on your own model's "
              "reference set with `samverify --bf16`."]
    for result in encoder_sets:
        L += encoder_set_report(result, fma_peak["gflops"])
    with open(a.markdown, "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()

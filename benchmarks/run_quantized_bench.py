"""`make bench-quantized`: the image encoder at each weight precision samconvert writes (--dtype f32, f16,
int8, q4) beside onnxruntime on the set's ImageEncoder.onnx in float32 and as onnxruntime's own dynamic int8
export of it (`onnxruntime.quantization.quantize_dynamic`, weight_type=QInt8, defaults otherwise).

Per reference set (a folder with the weights run_bench.encoder_set_weights finds, config.json, ImageEncoder.onnx
and references/input_image.npy):

1. converts the weights once per --dtype (a dtype samconvert refuses, an old samconvert's unknown one
   included, is reported and left out), timing each conversion and its peak RSS, and noting the file sizes;
2. writes onnxruntime's quantize_dynamic export of ImageEncoder.onnx into the temporary folder (in a child
   process, timed; with external data when the model passes protobuf's 2 GB);
3. times the encoder in separate processes, interleaved, --rounds rounds: `sambench encoder` on each .samw,
   then benchmarks/ort_encoder_bench.py on the float32 and the int8 ONNX; each process loads the model, runs
   --warmups untimed and --runs timed encoder passes and reports its load time and peak RSS (VmHWM);
4. unless --no-accuracy, measures each side's error against PyTorch's float32 references: samverify on each
   .samw (image embeddings, and masks at the task level), the ONNX sides' first output against
   references/image_embeddings.npy.

Prints markdown tables and writes --json. Threads: --threads for OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
SAM_NUM_THREADS and onnxruntime's intra_op_num_threads.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from run_bench import cpu_model, encoder_set_weights, med, task_accuracy

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ("f32", "f16", "int8", "q4")
PROTOBUF_LIMIT = 2 ** 31 - 1
NATIVE = "native {}"
# int8 weights multiplied in int8 products (`sambench --int8-products`), the opt-in path.
NATIVE_INT8_PRODUCTS = "native int8 products"
ORT_F32, ORT_INT8 = "onnxruntime f32", "onnxruntime int8 (quantize_dynamic)"


def onnx_bytes(path):
    """An ONNX file's size with its external data (every file the graph names beside it)."""
    total = os.path.getsize(path)
    try:
        import onnx
    except ImportError:
        return total
    model = onnx.load(path, load_external_data=False)
    folder = os.path.dirname(os.path.abspath(path))
    locations = {entry.value for tensor in model.graph.initializer if tensor.data_location == onnx.TensorProto.EXTERNAL
                 for entry in tensor.external_data if entry.key == "location"}
    return total + sum(os.path.getsize(os.path.join(folder, location)) for location in locations)


def child(cmd, env):
    """Runs `cmd`: (exit status, seconds, peak RSS MiB from wait4, stdout, stderr)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        return code, seconds, usage.ru_maxrss / 1024, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def last_lines(text, n=3):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-n:]) or "(no message)"


def convert(samconvert, weights, config_args, dtype, out, env):
    cmd = [samconvert, weights, "--out", out, "--force", "--dtype", dtype] + config_args
    print(f"[bench-quantized] samconvert --dtype {dtype}", file=sys.stderr, flush=True)
    code, seconds, rss, _, err = child(cmd, env)
    entry = {"dtype": dtype, "command": cmd, "exit_status": code}
    if code != 0 or not os.path.exists(out):
        entry.update(converted=False, refusal=last_lines(err))
        print(f"[bench-quantized]   refused (exit {code}): {entry['refusal']}", file=sys.stderr, flush=True)
        return entry
    entry.update(converted=True, path=out, bytes=os.path.getsize(out), seconds=seconds, peak_rss_mib=rss)
    return entry


def ort_quantize(source, target, env):
    """onnxruntime's dynamic int8 export of `source`, in a child process (this script's --quantize-only)."""
    print("[bench-quantized] onnxruntime quantize_dynamic (QInt8)", file=sys.stderr, flush=True)
    cmd = [sys.executable, os.path.abspath(__file__), "--quantize-only", source, target]
    code, seconds, rss, out, err = child(cmd, env)
    entry = {"command": "quantize_dynamic(model_input, model_output, weight_type=QuantType.QInt8"
                        + (", use_external_data_format=True)" if onnx_bytes(source) > PROTOBUF_LIMIT else ")"),
             "exit_status": code}
    if code != 0 or not os.path.exists(target):
        entry.update(converted=False, refusal=last_lines(err))
        print(f"[bench-quantized]   failed (exit {code}): {entry['refusal']}", file=sys.stderr, flush=True)
        return entry
    entry.update(converted=True, path=target, bytes=onnx_bytes(target), seconds=seconds, peak_rss_mib=rss,
                 external_data=json.loads(out)["external_data"])
    return entry


def quantize_only(source, target):
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process, per tensor it leaves alone
    external = onnx_bytes(source) > PROTOBUF_LIMIT
    quantize_dynamic(source, target, weight_type=QuantType.QInt8, use_external_data_format=external)
    print(json.dumps({"external_data": external}))


def run_side(cmd, env):
    code, seconds, rss, out, err = child(cmd, env)
    if code != 0:
        return {"failed": True, "exit_status": code, "error": last_lines(err)}
    result = json.loads(out)
    result.update(process_s=seconds, ru_maxrss_mib=rss)
    return result


def bench_set(folder, a, env, tmp):
    folder = os.path.abspath(folder)
    label = os.path.basename(folder)
    weights, config_args = encoder_set_weights(folder)
    encoder_onnx = os.path.join(folder, "ImageEncoder.onnx")
    if not os.path.exists(encoder_onnx):
        sys.exit(f"bench-quantized: {folder} has no ImageEncoder.onnx")
    image = os.path.join(folder, "references", "input_image.npy")
    reference = os.path.join(folder, "references", "image_embeddings.npy")
    samconvert, sambench = os.path.join(a.bin, "samconvert"), os.path.join(a.bin, "sambench")
    work = tempfile.mkdtemp(prefix=f"{label}-", dir=tmp)

    conversions = [convert(samconvert, weights, config_args, dtype, os.path.join(work, f"{dtype}.samw"), env)
                   for dtype in a.dtypes]
    ort_int8 = ort_quantize(encoder_onnx, os.path.join(work, "ImageEncoder.int8.onnx"), env) if not a.no_ort_int8 else None

    t = str(a.threads)
    timing = ["--threads", t, "--runs", str(a.runs), "--warmups", str(a.warmups)]
    ort_script = os.path.join(HERE, "ort_encoder_bench.py")
    sides = {NATIVE.format(c["dtype"]): [sambench, "encoder", c["path"], image] + timing
             for c in conversions if c["converted"]}
    int8 = next((c for c in conversions if c["dtype"] == "int8" and c["converted"]), None)
    if int8:
        sides[NATIVE_INT8_PRODUCTS] = [sambench, "encoder", int8["path"], image, "--int8-products"] + timing
    # The ONNX sides compare their output with PyTorch's after the timed runs and the VmHWM reading.
    compare = ["--reference", reference] if not a.no_accuracy and os.path.exists(reference) else []
    sides[ORT_F32] = [sys.executable, ort_script, encoder_onnx, image] + timing + compare
    if ort_int8 and ort_int8["converted"]:
        sides[ORT_INT8] = [sys.executable, ort_script, ort_int8["path"], image] + timing + compare
    runs = {name: [] for name in sides}
    failures = {}
    for i in range(a.rounds):
        print(f"[bench-quantized] {label} round {i + 1}/{a.rounds}", file=sys.stderr, flush=True)
        for name, cmd in sides.items():
            if name in failures:
                continue
            result = run_side(cmd, env)
            if result.get("failed"):
                failures[name] = result
                print(f"[bench-quantized]   {name} failed (exit {result['exit_status']}): {result['error']}",
                      file=sys.stderr, flush=True)
            else:
                runs[name].append(result)

    accuracy = {}
    if not a.no_accuracy:
        samverify = os.path.join(a.bin, "samverify")
        for c in conversions:
            name = NATIVE.format(c["dtype"])
            if c["converted"] and name not in failures:
                print(f"[bench-quantized] samverify {c['dtype']}", file=sys.stderr, flush=True)
                try:
                    accuracy[name] = task_accuracy(samverify, c["path"], folder, env, tmp)
                except (OSError, ValueError, KeyError, StopIteration) as error:
                    accuracy[name] = {"error": f"{type(error).__name__}: {error}"}
        for name in (ORT_F32, ORT_INT8):
            if compare and runs.get(name):
                last = runs[name][-1]
                accuracy[name] = ({"image_embeddings_max_abs": last["reference_max_abs"],
                                   "image_embeddings_mean_abs": last["reference_mean_abs"]}
                                  if "reference_max_abs" in last else {"error": last.get("reference_error")})

    shutil.rmtree(work)  # the converted models and the int8 export: gigabytes at ViT-H's size
    summary = {name: summarise(results) for name, results in runs.items() if results}
    config_file = os.path.join(folder, "config.json")  # the MobileSAM drop has none: its model is vit_t
    config = json.load(open(config_file)) if os.path.exists(config_file) else {}
    manifest_file = os.path.join(folder, "manifest.json")
    model = json.load(open(manifest_file)).get("model") if os.path.exists(manifest_file) else None
    return {"folder": folder, "label": label, "weights": os.path.basename(weights),
            "weights_bytes": os.path.getsize(weights), "onnx_bytes": onnx_bytes(encoder_onnx),
            "model": model, "encoder": config.get("imageEncoder", {}), "conversions": conversions, "ort_int8_export": ort_int8,
            "sides": summary, "failures": failures, "accuracy": accuracy, "ratios": ratios(summary), "raw": runs}


def summarise(results):
    times = [t for r in results for t in r["encoder_runs"]]
    return {"processes": len(results), "encoder_median_s": med(times), "encoder_fastest_s": min(times),
            "encoder_runs_s": times, "load_median_s": med([r["load_s"] for r in results]),
            "peak_rss_mib": med([r["peak_rss_kib"] / 1024 for r in results]),
            "ru_maxrss_mib": med([r["ru_maxrss_mib"] for r in results]),
            **({"linear_kernel": results[0]["linear_kernel"], "blas": results[0]["blas"]} if "blas" in results[0] else {})}


def ratios(summary):
    """Median and fastest-run time ratios of every native side over each onnxruntime side."""
    out = {}
    for name, side in summary.items():
        if not name.startswith("native"):
            continue
        for ort_name in (ORT_F32, ORT_INT8):
            if ort_name in summary:
                o = summary[ort_name]
                out[f"{name} / {ort_name}"] = {"median": side["encoder_median_s"] / o["encoder_median_s"],
                                               "fastest": side["encoder_fastest_s"] / o["encoder_fastest_s"]}
    return out


def mb(n):
    return f"{n / 1e6:.1f} MB"


def report(result):
    sides, conversions = result["sides"], result["conversions"]
    encoder = result["encoder"]
    described = ", ".join(f"{k} {encoder[k]}" for k in ("family", "embedDim", "depth", "numHeads", "embedDims")
                          if k in encoder) or result.get("model")
    f32 = next((c for c in conversions if c["dtype"] == "f32" and c["converted"]), None)
    L = ["", f"## `{result['label']}` ({described or 'see the set'})", "",
         f"Weights {result['weights']} ({mb(result['weights_bytes'])}), ImageEncoder.onnx "
         f"{mb(result['onnx_bytes'])} with its external data.", "",
         "### Files", "",
         "| Model | how | size | vs f32 .samw | time | peak RSS |", "|---|---|---:|---:|---:|---:|"]
    for c in conversions:
        if c["converted"]:
            vs = f"{c['bytes'] / f32['bytes']:.3f}" if f32 else "–"
            L.append(f"| native {c['dtype']} | `samconvert --dtype {c['dtype']}` | {mb(c['bytes'])} | {vs} | "
                     f"{c['seconds']:.2f} s | {c['peak_rss_mib']:.0f} MiB |")
        else:
            L.append(f"| native {c['dtype']} | `samconvert --dtype {c['dtype']}`: refused (exit {c['exit_status']}) "
                     f"| – | – | – | – |")
    L.append(f"| {ORT_F32} | the set's ImageEncoder.onnx | {mb(result['onnx_bytes'])} | "
             + (f"{result['onnx_bytes'] / f32['bytes']:.3f}" if f32 else "–") + " | – | – |")
    q = result["ort_int8_export"]
    if q and q["converted"]:
        L.append(f"| {ORT_INT8} | `{q['command']}` | {mb(q['bytes'])} | "
                 + (f"{q['bytes'] / f32['bytes']:.3f}" if f32 else "–") + f" | {q['seconds']:.2f} s | {q['peak_rss_mib']:.0f} MiB |")
    elif q:
        L.append(f"| {ORT_INT8} | quantize_dynamic failed (exit {q['exit_status']}) | – | – | – | – |")
    refused = [c for c in conversions if not c["converted"]]
    if refused or (q and not q["converted"]):
        L.append("")
        L += [f"- `--dtype {c['dtype']}` refused: {c['refusal']}" for c in refused]
        if q and not q["converted"]:
            L.append(f"- quantize_dynamic failed: {q['refusal']}")

    rounds = max((s["processes"] for s in sides.values()), default=0)
    L += ["", "### Image encoder", "",
          f"{rounds} interleaved round(s) of separate processes, in the order of the rows; medians over every timed run, "
          "peak RSS the median of each process's VmHWM (onnxruntime's includes the Python interpreter and numpy).", "",
          f"| Side | encoder, median | fastest | load (median) | peak RSS | median / ORT f32 | median / ORT int8 |",
          "|---|---:|---:|---:|---:|---:|---:|"]
    ort_f32, ort_int8 = sides.get(ORT_F32), sides.get(ORT_INT8)
    ratio = lambda s, o: f"{s['encoder_median_s'] / o['encoder_median_s']:.2f}" if o else "–"
    for name, s in sides.items():
        L.append(f"| {name} | {s['encoder_median_s'] * 1000:.0f} ms | {s['encoder_fastest_s'] * 1000:.0f} ms | "
                 f"{s['load_median_s'] * 1000:.0f} ms | {s['peak_rss_mib']:.0f} MiB | {ratio(s, ort_f32)} | {ratio(s, ort_int8)} |")
    for name, failure in result["failures"].items():
        L.append(f"| {name} | failed (exit {failure['exit_status']}): {failure['error']} | | | | | |")
    def missing(name):
        """Why a side has no figures."""
        if name == ORT_INT8 and not q:
            return "onnxruntime int8 left out"
        if name == ORT_INT8 and not q["converted"]:
            return "quantize_dynamic failed"
        c = next((c for c in conversions if NATIVE.format(c["dtype"]) == name), None)
        if name.startswith("native") and c is None:
            return f"{name} not in --dtypes"
        if c and not c["converted"]:
            return f"samconvert refused --dtype {c['dtype']}"
        return f"{name} failed"

    headline = []
    for native, other in (("int8", ORT_F32), ("int8", ORT_INT8), ("int8 products", ORT_F32), ("int8 products", ORT_INT8),
                          ("f32", ORT_F32)):
        name = NATIVE.format(native)
        r = result["ratios"].get(f"{name} / {other}")
        short = "ORT f32" if other == ORT_F32 else "ORT int8"
        absent = next((n for n in (name, other) if n not in sides), None)
        headline.append(f"native {native} / {short}: " + (f"{r['median']:.2f} (fastest runs {r['fastest']:.2f})" if r
                                                          else f"n/a ({missing(absent)})"))
    L += ["", "; ".join(headline) + "."]

    if result["accuracy"]:
        L += ["", "### Accuracy against PyTorch's float32 references", "",
              "Native: samverify on the set (image embeddings; task level: thresholded full-size masks over every case). "
              "onnxruntime: its first output against references/image_embeddings.npy.", "",
              "| Side | embeddings max abs | mean abs | lowest mask IoU | best mask agrees |", "|---|---:|---:|---:|---:|"]
        for name, acc in result["accuracy"].items():
            if "error" in acc:
                L.append(f"| {name} | error: {acc['error']} | | | |")
                continue
            iou = f"{acc['min_mask_iou']:.4f}" if "min_mask_iou" in acc else "–"
            agree = (f"{acc['best_mask_agreements']} of {acc['best_mask_agreements'] + acc['best_mask_disagreements']}"
                     if "best_mask_agreements" in acc else "–")
            L.append(f"| {name} | {acc['image_embeddings_max_abs']:.2e} | {acc['image_embeddings_mean_abs']:.2e} | {iou} | {agree} |")
    return L


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--quantize-only":
        return quantize_only(sys.argv[2], sys.argv[3])
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True, help="release bin folder holding samconvert, sambench and samverify")
    p.add_argument("--set", action="append", required=True,
                   help="a reference set folder (weights, config.json, ImageEncoder.onnx, references/); repeatable")
    p.add_argument("--dtypes", default=",".join(DTYPES), help=f"samconvert --dtype values (default {','.join(DTYPES)})")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds of processes per set")
    p.add_argument("--runs", type=int, default=1, help="timed encoder runs per process")
    p.add_argument("--warmups", type=int, default=1, help="untimed encoder runs per process, before the timed ones")
    p.add_argument("--no-ort-int8", action="store_true", help="leave out onnxruntime's quantize_dynamic export")
    p.add_argument("--no-accuracy", action="store_true", help="leave out samverify and the ONNX outputs' error")
    p.add_argument("--tmp", default=None, help="folder for the converted models (default: the system's temporary folder)")
    p.add_argument("--json", default="out/bench-quantized.json")
    a = p.parse_args()
    a.dtypes = [d.strip() for d in a.dtypes.split(",") if d.strip()]
    t = str(a.threads)
    env = dict(os.environ, OMP_NUM_THREADS=t, OPENBLAS_NUM_THREADS=t, SAM_NUM_THREADS=t)
    load_before = os.getloadavg()  # other work on the machine shows here: rerun if it was busy
    with tempfile.TemporaryDirectory(prefix="bench-quantized-", dir=a.tmp) as tmp:
        results = [bench_set(folder, a, env, tmp) for folder in a.set]
    load_after = os.getloadavg()
    import onnxruntime

    date = datetime.datetime.now(datetime.timezone.utc)
    lines = [f"# Image encoder by weight precision, {a.threads} threads", "",
             f"{cpu_model()}, {date.strftime('%Y-%m-%d %H:%M UTC')}; onnxruntime {onnxruntime.__version__}; "
             f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; "
             f"{a.runs} timed run(s) after {a.warmups} warm-up(s) per process; load average "
             f"{load_before[0]:.2f} before, {load_after[0]:.2f} after (1 min)."]
    for result in results:
        lines += report(result)
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"cpu": cpu_model(), "date": date.date().isoformat(), "date_utc": date.strftime("%Y-%m-%d %H:%M UTC"),
                   "onnxruntime": onnxruntime.__version__, "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
                   "threads": a.threads, "loadavg_before": load_before, "loadavg_after": load_after,
                   "settings": vars(a), "markdown": lines, "sets": results}, f, indent=1)
        f.write("\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())

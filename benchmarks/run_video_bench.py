#!/usr/bin/env python3
"""`make bench-video`: SAM 2 video tracking, samtrack beside upstream's SAM2VideoPredictor.

One video set from converters/export_sam2_video.py (SET: checkpoint.pt, config.json, frames/,
prompts.json, reference.json). Both sides get the same weights (samconvert of the set's
checkpoint.pt, once), frames and prompts file, and run as separate processes with the same thread
count, interleaved (PyTorch, native, PyTorch, native ...), ROUNDS times for each case:

  one object   the set's prompts of its first object (file order), every round they have
  two objects  the prompts of its first two objects

PyTorch: this script in a child process (--worker) builds the model as
sam2.build_sam.build_sam2_video_predictor builds it (the set's reference.json "model" configuration,
its checkpoint, CPU), then runs the exporter's own tracking sequence (export_sam2_video.run_tracking:
init_state, each round's prompts in file order, propagate_in_video; hole filling as the set was made,
with the exporter's port of sam2's CUDA connected components), timing each yield of
propagate_in_video. Native: `samtrack MODEL FRAMES --prompts P --out DIR --no-logits` (masks and
overlays are still written), each frame timed as its `samtrack: frame ...` line arrives on stderr.

Per-frame time: the intervals between consecutive frames of the last round's propagation, the first
frame left out (it holds PyTorch's preflight, and on the native side everything since the prompts),
median per process, then the median over rounds. Also, from each process's start (one monotonic
clock): the time to the last round's first frame (model load, every earlier round, the prompts) and to
its last frame; each process's wall time and peak RSS (wait4); PyTorch's phases (imports, model build,
init_state with its decoding of every frame, tracking: init_state less decoding to the last yield); and
how the two sides' outputs agree (object scores, mask areas), to show they ran the same inputs.
(samtrack's own frames/s has two decimals, too coarse below a few frames/s to time its load apart.)

Memory: samtrack's peak RSS tracking the set's round-0 prompts of its first prompted frame through a
--short-frames and a --long-frames clip made by ping-ponging the set's frames (native only, one run
each); the ratio should stay <= 1.2x (memory does not grow with the clip).

    benchmarks/run_video_bench.py --bin .build/release --set DIR [--threads 2] [--rounds 3] [--json out/bench-video.json]
        [--long-frames 200] [--short-frames 10] [--max-frames N] [--skip-memory]
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_bench import cpu_model

ROOT = Path(__file__).resolve().parent.parent
FRAME_LINE = re.compile(r"^samtrack: frame (\S+) \((\d+) of (\d+)\) ([0-9.]+) frames/s")
PROMPT_KEYS = ("frame", "object", "points", "box", "mask", "round")
MEMORY_TARGET = 1.2


def fail(message):
    sys.exit(f"run_video_bench.py: {message}")


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def ratio(a, b):
    return a / b if b and a == a and b == b else float("nan")


def cpu_flags():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# --- the PyTorch side (a child process: --worker SPEC.json) -----------------------------------------


def worker(spec_path):
    """Runs upstream's tracking once as the spec says; writes the timings to spec["result"]."""
    started = time.monotonic()
    spec = json.loads(Path(spec_path).read_text())
    threads = spec["threads"]
    os.environ.setdefault("TQDM_DISABLE", "1")
    import torch

    torch.set_num_threads(threads)
    torch.set_grad_enabled(False)
    sys.path.insert(0, str(ROOT / "converters"))
    import build_sam2
    import export_sam2_video as exporter
    import sam2_configs
    from sam2.build_sam import build_sam2_video_predictor
    imported = time.monotonic()

    name = spec["model"]
    cfg = sam2_configs.CONFIGS[name]
    if cfg["overrides"] or cfg["heads"]:
        # an exporter-only configuration (not a published one): its overrides, as the exporter built it
        model = build_sam2.build_video(name)[0]
        build_sam2.load_checkpoint_(model, Path(spec["checkpoint"]))
        builder = "converters/build_sam2.py build_video + load_checkpoint_"
    else:
        model = build_sam2_video_predictor(cfg["hydra"], spec["checkpoint"], device="cpu")
        builder = "sam2.build_sam.build_sam2_video_predictor"
    built = time.monotonic()

    # Timings from inside the exporter's sequence: init_state, each add_* call, each yield.
    calls = {"init_state": [], "prompts": [], "propagations": []}

    def timed_call(name, log):
        original = getattr(model, name)

        def wrapper(*a, **kw):
            t = time.monotonic()
            out = original(*a, **kw)
            log.append((t, time.monotonic()))
            return out
        setattr(model, name, wrapper)

    timed_call("init_state", calls["init_state"])
    timed_call("add_new_points_or_box", calls["prompts"])
    timed_call("add_new_mask", calls["prompts"])
    propagate = model.propagate_in_video

    def timed_propagate(*a, **kw):
        record = {"start": time.monotonic(), "yields": []}
        calls["propagations"].append(record)
        for item in propagate(*a, **kw):
            record["yields"].append(time.monotonic())
            yield item
    model.propagate_in_video = timed_propagate

    # init_state decodes every frame into memory first (samtrack decodes each as it gets to it): timed apart
    import sam2.sam2_video_predictor as predictor_module
    decode_log = []
    load_video_frames = predictor_module.load_video_frames

    def timed_load(*a, **kw):
        t = time.monotonic()
        out = load_video_frames(*a, **kw)
        decode_log.append(time.monotonic() - t)
        return out
    predictor_module.load_video_frames = timed_load

    entries = json.loads(Path(spec["prompts"]).read_text())
    for e in entries:
        e.setdefault("round", 0)
    args = argparse.Namespace(fill_holes=spec["fill_holes"], start_frame=spec["start_frame"],
                              max_frames=spec["max_frames"], reverse=spec["reverse"])
    model.add_all_frames_to_correct_as_cond = spec["corrections_as_conditioning"]
    run = exporter.run_tracking(model, Path(spec["root"]), entries, args, keep_frames=set())
    finished = time.monotonic()

    last = calls["propagations"][-1]
    stamps = [last["start"]] + last["yields"]
    intervals = [b - a for a, b in zip(stamps, stamps[1:])]
    frames = []
    for f in run["propagations"][-1]["frames"]:
        logits = f["logits"]
        frames.append({"stem": exporter.stem(f["frame"]), "objects": list(f["obj_ids"]), "object_score_logits": f["scores"],
                       "mask_areas": [int((logits[i] > 0).sum()) for i in range(logits.shape[0])]})
    all_intervals = []
    for p in calls["propagations"]:
        s = [p["start"]] + p["yields"]
        all_intervals.append([b - a for a, b in zip(s, s[1:])])
    # tracking begins with init_state, less its decoding (it also runs the image encoder on the first frame)
    decode = sum(decode_log)
    began = calls["init_state"][0][0] + decode
    result = {
        "builder": builder, "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
        "sam2": exporter.versions().get("sam2"),
        "import_s": imported - started, "build_s": built - imported,
        "init_state_s": sum(b - a for a, b in calls["init_state"]), "decode_frames_s": decode,
        "prompt_calls_s": [b - a for a, b in calls["prompts"]],
        "first_frame_s": last["yields"][0] - began if last["yields"] else None,
        "last_round_preflight_and_first_frame_s": intervals[0] if intervals else None,
        "frame_intervals_s": intervals,
        "per_frame_s": med(intervals[1:]),
        "all_propagations_intervals_s": all_intervals,
        "tracking_s": (last["yields"][-1] if last["yields"] else finished) - began,
        # CLOCK_MONOTONIC, the same clock in every process: the parent subtracts its spawn time
        "first_output_at": last["yields"][0] if last["yields"] else None,
        "last_output_at": last["yields"][-1] if last["yields"] else None,
        "in_process_s": finished - started,
        "frames": frames, "warnings": run["warnings"],
    }
    Path(spec["result"]).write_text(json.dumps(result) + "\n")


# --- running the two sides --------------------------------------------------------------------------


def wait_child(child):
    """(exit status, peak RSS MiB) of a Popen child, from wait4: that child's own maxrss."""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, usage.ru_maxrss / 1024


def run_pytorch(spec, work, env, tag):
    spec = dict(spec, result=str(work / f"{tag}.result.json"))
    spec_path = work / f"{tag}.spec.json"
    spec_path.write_text(json.dumps(spec))
    log_path = work / f"{tag}.log"
    with open(log_path, "w") as log:
        t = time.monotonic()
        child = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", str(spec_path)],
                                 env=env, stdout=log, stderr=subprocess.STDOUT)
        status, rss = wait_child(child)
        wall = time.monotonic() - t
    if status != 0:
        fail(f"the PyTorch run ({tag}) failed with status {status}:\n{log_path.read_text()[-3000:]}")
    result = json.loads(Path(spec["result"]).read_text())
    if result["last_output_at"] is None:
        fail(f"the PyTorch run ({tag}) yielded no frame in its last propagation")
    result.update(wall_s=wall, peak_rss_mib=rss, to_first_output_s=result["first_output_at"] - t,
                  to_last_output_s=result["last_output_at"] - t)
    return result


def proc_status_kib(pid, keys=("VmRSS", "VmHWM")):
    """The child's current and peak RSS (KiB) from /proc, while it runs."""
    values = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in keys:
                values[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return [values.get(k) for k in keys]


def run_native(bin_dir, model, frames, prompts, out, options, env, tag, work):
    """samtrack once; per-frame times from its stderr lines, stamped as they arrive."""
    command = [str(bin_dir / "samtrack"), str(model), str(frames), "--prompts", str(prompts), "--out", str(out),
               "--no-logits"] + options
    stdout_path = work / f"{tag}.stdout"
    other = []
    stamps = []  # (arrival, stem, k, n, frames/s)
    seen = []  # (VmRSS, VmHWM) KiB as each frame's line arrives
    with open(stdout_path, "w") as stdout:
        t = time.monotonic()
        child = subprocess.Popen(command, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True, bufsize=1)
        for line in child.stderr:
            now = time.monotonic()
            found = FRAME_LINE.match(line)
            if found:
                stamps.append((now, found.group(1), int(found.group(2)), int(found.group(3)), float(found.group(4))))
                seen.append(proc_status_kib(child.pid))
            else:
                other.append(line)
        child.stderr.close()
        status, rss = wait_child(child)
        wall = time.monotonic() - t
    if status != 0:
        fail(f"samtrack ({tag}) failed with status {status}: {' '.join(command)}\n{''.join(other)[-3000:]}")
    if not stamps:
        fail(f"samtrack ({tag}) printed no `samtrack: frame` lines: {' '.join(command)}\n{''.join(other)[-3000:]}")
    arrivals = [s[0] for s in stamps]
    intervals = [b - a for a, b in zip(arrivals, arrivals[1:])]
    # samtrack's frames/s has two decimals: below a few frames/s, frames / (frames/s) is too coarse to
    # time its tracking apart from its load; times here are from the process's start
    result = {"command": command, "wall_s": wall, "peak_rss_mib": rss, "to_first_output_s": arrivals[0] - t,
              "to_last_output_s": arrivals[-1] - t, "frame_intervals_s": intervals, "per_frame_s": med(intervals),
              "frames_printed": len(stamps), "last_line_frames_per_s": stamps[-1][4], "stderr_other": other[-20:],
              "rss_mib_by_frame": [None if v is None else v / 1024 for v, _ in seen],
              "peak_rss_mib_by_frame": [None if h is None else h / 1024 for _, h in seen]}
    report = Path(out) / "result.json"
    if report.exists():
        result["frames"] = [{"stem": f["stem"], "objects": f["objects"], "object_score_logits": f["object_score_logits"],
                             "mask_areas": f["mask_areas"]} for f in json.loads(report.read_text())["frames"]]
    return result


def agreement(pytorch, native):
    """How far the two sides' last-round outputs are: object scores and mask areas, frame by frame."""
    theirs = {f["stem"]: f for f in pytorch.get("frames", [])}
    ours = {f["stem"]: f for f in native.get("frames", [])}
    if set(theirs) != set(ours):
        return {"same_frames": False, "pytorch_frames": sorted(theirs), "native_frames": sorted(ours)}
    score_diff, area_diff, objects_match = 0.0, 0.0, True
    for stem, t in theirs.items():
        o = ours[stem]
        if t["objects"] != o["objects"]:
            objects_match = False
            continue
        for a, b in zip(t["object_score_logits"], o["object_score_logits"]):
            score_diff = max(score_diff, abs(a - b))
        for a, b in zip(t["mask_areas"], o["mask_areas"]):
            area_diff = max(area_diff, abs(a - b) / max(a, b, 1))
    return {"same_frames": True, "frames": len(theirs), "same_objects": objects_match,
            "max_object_score_abs_diff": score_diff, "max_mask_area_rel_diff": area_diff}


# --- inputs -----------------------------------------------------------------------------------------


def clean_entry(entry, set_dir):
    """A prompts.json entry for a prompts file outside the set: only the schema's keys, the mask path
    absolute (samtrack reads it relative to the prompts file, the exporter's sequence relative to its
    root: an absolute path is the same file for both)."""
    out = {k: entry[k] for k in PROMPT_KEYS if k in entry}
    out.setdefault("round", 0)
    if "mask" in out and not os.path.isabs(out["mask"]):
        out["mask"] = str((set_dir / out["mask"]).resolve())
    return out


def pingpong_clip(set_frames, start, count, target):
    """`count` frames (00000.jpg ...) copied from the set's frames, from `start` forward, then back, ..."""
    n = len(set_frames)
    target.mkdir(parents=True)
    period = 2 * (n - 1)
    for t in range(count):
        i = (start + t) % period if n > 1 else 0
        if i >= n:
            i = period - i
        shutil.copyfile(set_frames[i], target / f"{t:05d}.jpg")


def set_frames_of(set_dir):
    frames = sorted((p for p in (set_dir / "frames").iterdir() if p.suffix.lower() in (".jpg", ".jpeg")),
                    key=lambda p: int(p.stem))
    if not frames:
        fail(f"{set_dir}/frames holds no .jpg frames")
    return frames


# --- main -------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="release bin folder (samconvert, samtrack)")
    parser.add_argument("--set", type=Path, help="a video set from converters/export_sam2_video.py")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (one PyTorch and one native process each) per case")
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench-video.json")
    parser.add_argument("--long-frames", type=int, default=200, help="frames of the memory check's long clip")
    parser.add_argument("--short-frames", type=int, default=10, help="frames of the memory check's short clip")
    parser.add_argument("--max-frames", type=int, default=None,
                        help="frames tracked after the start frame, both sides (default: the set's own setting); "
                             "for short test runs, e.g. 2")
    parser.add_argument("--skip-memory", action="store_true", help="leave out the memory check")
    parser.add_argument("--bf16", action="store_true",
                        help="samtrack --bf16: linear layers and memory attention in bfloat16 products (PyTorch stays float32)")
    parser.add_argument("--build-flags", default="", help="the release build's flags, recorded in the JSON")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.worker:
        worker(a.worker)
        return
    if a.bin is None or a.set is None:
        parser.error("--bin and --set are required")

    # everything the run needs, checked first
    set_dir = a.set.resolve()
    if not set_dir.is_dir():
        fail(f"the video set {a.set} is missing (make one with converters/export_sam2_video.py)")
    for name in ("checkpoint.pt", "config.json", "prompts.json", "reference.json", "frames"):
        if not (set_dir / name).exists():
            fail(f"the video set {set_dir} has no {name} (is its export finished? converters/export_sam2_video.py)")
    for tool in ("samconvert", "samtrack"):
        if not os.access(a.bin / tool, os.X_OK):
            fail(f"{a.bin / tool} is missing: build it with `swift build -c release --product {tool}` (make bench-video does)")
    try:
        import importlib.util
        missing = [m for m in ("torch", "sam2", "hydra", "scipy") if importlib.util.find_spec(m) is None]
    except Exception as error:  # noqa: BLE001
        missing = [str(error)]
    if missing:
        fail(f"{sys.executable} lacks {', '.join(missing)}: run it with the converters' venv (make venv; .venv/bin/python)")
    if a.rounds < 1:
        fail("--rounds must be at least 1")

    reference = json.loads((set_dir / "reference.json").read_text())
    config = json.loads((set_dir / "config.json").read_text())
    video = config.get("video") or {}
    model_name = reference.get("model")
    if not model_name:
        fail(f"{set_dir}/reference.json has no \"model\"")
    fill_holes = bool(reference.get("fill_holes", True))
    corrections = bool(reference.get("corrections_as_conditioning", video.get("add_all_frames_to_correct_as_cond", False)))
    reverse = bool(reference.get("reverse", False))
    start_frame = reference.get("start_frame")
    max_frames = a.max_frames if a.max_frames is not None else reference.get("max_frames")
    entries = [clean_entry(e, set_dir) for e in json.loads((set_dir / "prompts.json").read_text())]
    objects = []
    for e in entries:
        if e["object"] not in objects:
            objects.append(e["object"])
    cases = {"one_object": objects[:1]}
    if len(objects) >= 2:
        cases["two_objects"] = objects[:2]

    threads = str(a.threads)
    env = dict(os.environ, SAM_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads,
               MKL_NUM_THREADS=threads, TQDM_DISABLE="1")
    native_options = (["--reverse"] if reverse else []) + (["--start-frame", str(start_frame)] if start_frame is not None else []) \
        + (["--max-frames", str(max_frames)] if max_frames is not None else []) + ([] if fill_holes else ["--no-fill-holes"]) \
        + (["--corrections-as-conditioning"] if corrections else []) + (["--bf16"] if a.bf16 else [])
    flags = cpu_flags()
    machine = {"cpu": cpu_model(), "avx512f": "avx512f" in flags, "avx2": "avx2" in flags, "fma": "fma" in flags,
               "avx512_bf16": "avx512_bf16" in flags, "nproc": os.cpu_count(), "kernel": platform.release(),
               "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"), "build_flags": a.build_flags,
               "loadavg_at_start": os.getloadavg()}

    work = Path(tempfile.mkdtemp(prefix="bench-video-"))
    try:
        model = work / "model.samw"
        convert = [str(a.bin / "samconvert"), str(set_dir / "checkpoint.pt"), "--config", str(set_dir / "config.json"),
                   "--out", str(model)]
        done = subprocess.run(convert, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            fail(f"samconvert failed ({done.returncode}): {' '.join(convert)}\n{done.stderr[-3000:]}")

        results = {}
        for case, ids in cases.items():
            chosen = [e for e in entries if e["object"] in ids]
            prompts = work / f"{case}.prompts.json"
            prompts.write_text(json.dumps(chosen, indent=1) + "\n")
            spec = {"threads": a.threads, "model": model_name, "checkpoint": str(set_dir / "checkpoint.pt"),
                    "root": str(set_dir), "prompts": str(prompts), "fill_holes": fill_holes, "start_frame": start_frame,
                    "max_frames": max_frames, "reverse": reverse, "corrections_as_conditioning": corrections}
            rounds = []
            for r in range(a.rounds):
                print(f"{case}, round {r + 1}/{a.rounds}: PyTorch ...", file=sys.stderr, flush=True)
                pt = run_pytorch(spec, work, env, f"{case}-{r}")
                print(f"{case}, round {r + 1}/{a.rounds}: samtrack ...", file=sys.stderr, flush=True)
                out = work / f"{case}-{r}-out"
                nat = run_native(a.bin, model, set_dir / "frames", prompts, out, native_options, env, f"{case}-{r}", work)
                shutil.rmtree(out, ignore_errors=True)
                rounds.append({"pytorch": pt, "native": nat, "agreement": agreement(pt, nat)})
            summary = {"objects": ids, "prompts": chosen, "frames": len(rounds[0]["native"]["frame_intervals_s"]) + 1,
                       "rounds": rounds}
            for key in ("per_frame_s", "to_first_output_s", "to_last_output_s", "wall_s", "peak_rss_mib"):
                p, n = med(r["pytorch"][key] for r in rounds), med(r["native"][key] for r in rounds)
                summary[key] = {"pytorch": p, "native": n, "ratio": ratio(n, p)}
            summary["per_frame_min_s"] = {
                "pytorch": min((t for r in rounds for t in r["pytorch"]["frame_intervals_s"][1:]), default=float("nan")),
                "native": min((t for r in rounds for t in r["native"]["frame_intervals_s"]), default=float("nan"))}
            summary["per_frame_min_s"]["ratio"] = ratio(summary["per_frame_min_s"]["native"], summary["per_frame_min_s"]["pytorch"])
            summary["pytorch_phases_s"] = {k: med(r["pytorch"][k] for r in rounds) for k in ("import_s", "build_s", "init_state_s", "decode_frames_s", "first_frame_s", "tracking_s")}
            summary["agreement"] = rounds[-1]["agreement"]
            results[case] = summary

        memory = None
        if not a.skip_memory:
            first = min(e["frame"] for e in entries if e["round"] == 0) if any(e["round"] == 0 for e in entries) else None
            if first is None:
                fail("the set has no round-0 prompt for the memory check")
            chosen = [dict(e, frame=0, round=0) for e in entries if e["round"] == 0 and e["frame"] == first]
            prompts = work / "memory.prompts.json"
            prompts.write_text(json.dumps(chosen, indent=1) + "\n")
            memory = {"prompts": chosen, "clip": f"the set's frames from {first}, forward then back (ping-pong)", "target_ratio": MEMORY_TARGET}
            options = [] if fill_holes else ["--no-fill-holes"]
            for key, count in (("short", a.short_frames), ("long", a.long_frames)):
                clip = work / f"clip-{count}"
                pingpong_clip(set_frames_of(set_dir), first, count, clip)
                print(f"memory: samtrack on {count} frames ...", file=sys.stderr, flush=True)
                out = work / f"memory-{count}-out"
                nat = run_native(a.bin, model, clip, prompts, out, options, env, f"memory-{count}", work)
                shutil.rmtree(out, ignore_errors=True)
                shutil.rmtree(clip, ignore_errors=True)
                nat.pop("frames", None)
                memory[key] = {"frames": count, "peak_rss_mib": nat["peak_rss_mib"], "wall_s": nat["wall_s"],
                               "per_frame_s": nat["per_frame_s"], "frames_printed": nat["frames_printed"],
                               # after each frame (VmRSS, VmHWM): whether the peak grows with the clip or comes at the end
                               "rss_mib_by_frame": nat["rss_mib_by_frame"], "peak_rss_mib_by_frame": nat["peak_rss_mib_by_frame"]}
            memory["ratio"] = ratio(memory["long"]["peak_rss_mib"], memory["short"]["peak_rss_mib"])
            memory["met"] = memory["ratio"] <= MEMORY_TARGET
    finally:
        shutil.rmtree(work, ignore_errors=True)

    machine["loadavg_at_end"] = os.getloadavg()  # other work on the machine shows here
    any_round = next(iter(results.values()))["rounds"][0]["pytorch"]
    result = {"set": str(set_dir), "model": model_name, "threads": a.threads, "rounds": a.rounds, "machine": machine,
              "torch": any_round["torch"], "sam2": any_round["sam2"], "pytorch_builder": any_round["builder"],
              "options": {"fill_holes": fill_holes, "corrections_as_conditioning": corrections, "reverse": reverse,
                          "start_frame": start_frame, "max_frames": max_frames, "native": native_options + ["--no-logits"]},
              "cases": results, "memory": memory}
    a.json.parent.mkdir(parents=True, exist_ok=True)
    a.json.write_text(json.dumps(result, indent=1) + "\n")

    isa = ", ".join(f for f in ("avx512f", "avx512_bf16", "avx2", "fma") if machine[f]) or "no AVX2"
    print(f"SAM 2 video tracking, {set_dir.name} ({model_name}){', native in bfloat16 products (--bf16)' if a.bf16 else ''}, "
          f"{a.threads} threads, {a.rounds} interleaved rounds of separate "
          f"processes per case; {machine['cpu']} ({isa}), {machine['date_utc']}; torch {result['torch']}, sam2 {result['sam2']}; "
          f"load average {machine['loadavg_at_start'][0]:.1f} at start, {machine['loadavg_at_end'][0]:.1f} at end")
    print("| what | native | PyTorch | ratio |\n|---|---|---|---|")
    for case, s in results.items():
        label = f"{len(s['objects'])} object{'s' if len(s['objects']) != 1 else ''}, {s['frames']} frames"
        rows = [("per frame (median)", "per_frame_s", 1000, "ms"), ("per frame (fastest)", "per_frame_min_s", 1000, "ms"),
                ("start to the last round's first frame", "to_first_output_s", 1, "s"),
                ("start to the last frame", "to_last_output_s", 1, "s"), ("process wall", "wall_s", 1, "s"),
                ("peak RSS", "peak_rss_mib", 1, "MiB")]
        for what, key, scale, unit in rows:
            n, p = s[key]["native"] * scale, s[key]["pytorch"] * scale
            digits = 0 if unit in ("ms", "MiB") else 2
            print(f"| {label}: {what} | {n:.{digits}f} {unit} | {p:.{digits}f} {unit} | {s[key]['ratio']:.2f}x |")
    if memory:
        print(f"| samtrack peak RSS, {memory['short']['frames']} frames | {memory['short']['peak_rss_mib']:.0f} MiB | | |")
        print(f"| samtrack peak RSS, {memory['long']['frames']} frames | {memory['long']['peak_rss_mib']:.0f} MiB | | "
              f"{memory['ratio']:.2f}x ({'met' if memory['met'] else 'NOT met'}: <= {MEMORY_TARGET}x) |")
        hwm = memory["long"]["peak_rss_mib_by_frame"]
        marks = sorted({min(k, len(hwm)) for k in (memory["short"]["frames"], len(hwm) // 4, len(hwm) // 2, 3 * len(hwm) // 4, len(hwm))})
        print(f"samtrack's peak RSS on the {memory['long']['frames']}-frame clip after frame " + ", ".join(
            f"{k}: {hwm[k - 1]:.0f} MiB" for k in marks if k >= 1 and hwm[k - 1] is not None)
            + f"; at exit {memory['long']['peak_rss_mib']:.0f} MiB")
    for case, s in results.items():
        g = s["agreement"]
        if g.get("same_frames"):
            print(f"{case}: outputs agree to {g['max_object_score_abs_diff']:.2e} in object scores, "
                  f"{g['max_mask_area_rel_diff'] * 100:.2f}% in mask areas ({g['frames']} frames"
                  + ("" if g["same_objects"] else "; object ids differ") + ")")
        else:
            print(f"{case}: the two sides yielded different frames: PyTorch {g['pytorch_frames']}, native {g['native_frames']}")
    print("Per frame: intervals between the last round's frames after its first (native: masks and overlays written; "
          f"PyTorch: nothing written, frames decoded beforehand). PyTorch's process wall includes init_state decoding every "
          f"frame ({next(iter(results.values()))['pytorch_phases_s']['decode_frames_s']:.2f} s). JSON: {a.json}")


if __name__ == "__main__":
    main()

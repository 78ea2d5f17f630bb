# The front door. `make demo` runs the main job on bundled data; `make test` runs the tests.
# Both install what is missing first (see scripts/setup.sh).

SWIFT        ?= swift
# A full-size reference set (DROP is its former name, still honoured).
DROP          ?= ../shared/fixtures/mobilesam-seed0
REFERENCE_SET ?= $(DROP)
VENV         ?= .venv
PYTHON       := $(VENV)/bin/python
RELEASE_BIN   = $(shell $(SWIFT) build -c release --show-bin-path)
# Release builds made here target this machine's vector units, like -march=native: with AVX2 and
# FMA present, Swift code is compiled for them (the GELU/softmax/epilogue loops run 8 lanes with
# fused multiply-adds, SAM_FMA, instead of SSE2's 4). Such binaries need a CPU with AVX2+FMA; a plain `swift build -c
# release` stays portable x86-64. Override with CPU_FLAGS= (empty) for a portable build.
CPU_FLAGS    ?= $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo 2>/dev/null \
                  && echo "-Xswiftc -target-cpu -Xswiftc haswell -Xswiftc -DSAM_FMA")
RELEASE      := -c release $(CPU_FLAGS)

.PHONY: setup build test test-blas-paths test-release-tools check-dependency check-reference-set check-drops docs verify verify-fuzz demo references venv \
        regen-onnx-proto clean bench bench-venv bench-encoders bench-quantized bench-everything fuzz fuzz-explore test-asan sam2-references verify-sam2 bench-sam2 \
        bench-video video-references verify-video

setup:
	@scripts/setup.sh

build: setup
	$(SWIFT) build $(RELEASE)

# Unit and numeric tests on the committed fixtures: no network, no Python, no full-size reference set.
# The tests' temporary folders go to one scratch folder (TMPDIR), removed when the run ends however
# it ends: the test process removes its own at exit, but not when it is killed or crashes.
test: setup
	@scratch=$$(mktemp -d "$${TMPDIR:-/tmp}/samport-test.XXXXXX") && trap 'rm -rf "$$scratch"' EXIT && \
	    TMPDIR="$$scratch" $(SWIFT) test

# The kernel tests on both of OpenBLAS's x86-64 kernel paths, whatever OPENBLAS_CORETYPE the
# environment sets: the CPU's own choice (AVX-512 kernels where the CPU has them) and Haswell's AVX2
# kernels. Their tolerances come from an error model, so both must pass.
test-blas-paths: setup
	env -u OPENBLAS_CORETYPE $(SWIFT) test --filter SAMKernelsTests
	OPENBLAS_CORETYPE=Haswell $(SWIFT) test --filter SAMKernelsTests

# The command-line and hostile-input suites against the release binaries users run.
test-release-tools: build
	@scratch=$$(mktemp -d "$${TMPDIR:-/tmp}/samport-test.XXXXXX") && trap 'rm -rf "$$scratch"' EXIT && \
	    TMPDIR="$$scratch" SAM_TOOLS_DIR="$(abspath $(RELEASE_BIN))" $(SWIFT) test --filter 'HostileInputTests|CommandLine'

# The runtime's API reference: DocC archives of the SAMRuntime product's targets (catalogs in
# Sources/<target>/<target>.docc) in .build/plugins/Swift-DocC/outputs/; a broken symbol link or article
# reference fails it. Then every public symbol of DOCS_CHECKED must carry a doc comment:
# scripts/check-doc-comments.swift reads the symbol graphs the documentation was built from and lists
# those without.
DOCS_TARGETS ?= SAMPipeline SAMEverything SAMModelFile SAMModel SAMImage SAMKernels SAMTensor SAMFiles SAMImageFiles SAMVideoFiles
DOCS_CHECKED ?= SAMPipeline SAMEverything SAMModelFile SAMModel SAMImage SAMKernels SAMTensor SAMFiles SAMImageFiles SAMVideoFiles
docs: setup
	$(SWIFT) package generate-documentation $(foreach target,$(DOCS_TARGETS),--target $(target)) --warnings-as-errors
	$(SWIFT) scripts/check-doc-comments.swift $(DOCS_CHECKED)

# Builds Examples/DependentPackage against a tagged clone, as an app adds the package (see the script).
check-dependency: build
	scripts/check-dependency.sh "$(RELEASE_BIN)/samconvert"

# The numeric checks against a full-size reference set (REFERENCE_SET; CI has one beside the clone), in an
# optimized build. A missing set is a failure here, never a skip. The kernel and image tests run
# here too, because this build has CPU_FLAGS (AVX2/FMA code paths) and `make test`'s does not:
# once on the CPU's own OpenBLAS kernels, once more (kernels only) on Haswell's. The encoder's
# cancellation latency is timed in a process of its own, with nothing else computing.
check-reference-set: setup
	@test -d "$(REFERENCE_SET)" || { echo "check-reference-set: reference set folder $(REFERENCE_SET) is missing" >&2; exit 1; }
	SAM_REFERENCE_SET_DIR="$(abspath $(REFERENCE_SET))" SAM_REQUIRE_REFERENCE_SET=1 OPENBLAS_NUM_THREADS=1 env -u OPENBLAS_CORETYPE \
	    $(SWIFT) test $(RELEASE) -Xswiftc -enable-testing --filter 'FullSizeSet|SAMKernelsTests|SAMImageTests' \
	    --skip cancellationStopsTheEncoder
	SAM_REFERENCE_SET_DIR="$(abspath $(REFERENCE_SET))" SAM_REQUIRE_REFERENCE_SET=1 OPENBLAS_NUM_THREADS=1 env -u OPENBLAS_CORETYPE \
	    $(SWIFT) test $(RELEASE) -Xswiftc -enable-testing --filter cancellationStopsTheEncoder
	OPENBLAS_CORETYPE=Haswell $(SWIFT) test $(RELEASE) -Xswiftc -enable-testing --filter SAMKernelsTests

# The former name of check-reference-set.
check-drops: check-reference-set

# samverify on the committed tiny set, the committed tiny SAM 2.1 set and a full-size reference set as it
# is, each model converted from the set's own weights into a temporary .samw; JSON and JUnit reports go
# to out/verify/, the full-size set's pictures to out/verify/reference-set-report/. The full-size run also reruns
# every case with 1, 2 and all worker threads and on OpenBLAS's other kernels (--determinism), then once
# more under SAM_CPU_CAP=avx2 (an AVX2 CPU's kernels throughout, held to the same tolerances).
# All always run; the target fails if any does (or if the full-size set is missing).
verify: setup
	$(SWIFT) build $(RELEASE)
	@test -d "$(REFERENCE_SET)" || { echo "verify: reference set folder $(REFERENCE_SET) is missing" >&2; exit 1; }
	@mkdir -p out/verify
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && status=0; \
	$(RELEASE_BIN)/samconvert reference_outputs/tiny/mobile_sam.h5 --config reference_outputs/tiny/config.json \
	    --out "$$tmp/tiny.samw" >/dev/null || exit 2; \
	$(RELEASE_BIN)/samverify "$$tmp/tiny.samw" --references reference_outputs/tiny --max-atol 1e-4 --max-rtol 1e-4 \
	    --json out/verify/tiny.json --junit out/verify/tiny.xml || status=$$?; \
	$(RELEASE_BIN)/samconvert reference_outputs/sam2_tiny/sam2.1_hiera_tiny_widths.pt --config reference_outputs/sam2_tiny/config.json \
	    --out "$$tmp/sam2_tiny.samw" >/dev/null || exit 2; \
	$(RELEASE_BIN)/samverify "$$tmp/sam2_tiny.samw" --references reference_outputs/sam2_tiny --max-atol 1e-4 --max-rtol 1e-4 \
	    --json out/verify/sam2_tiny.json --junit out/verify/sam2_tiny.xml || status=$$?; \
	$(RELEASE_BIN)/samconvert "$(REFERENCE_SET)/mobile_sam.h5" --out "$$tmp/full-size.samw" >/dev/null || exit 2; \
	env -u OPENBLAS_CORETYPE $(RELEASE_BIN)/samverify "$$tmp/full-size.samw" --references "$(REFERENCE_SET)" --max-atol 1e-4 --max-rtol 1e-4 \
	    --determinism --report out/verify/reference-set-report --json out/verify/full-size.json --junit out/verify/full-size.xml || status=$$?; \
	SAM_CPU_CAP=avx2 $(RELEASE_BIN)/samverify "$$tmp/full-size.samw" --references "$(REFERENCE_SET)" --max-atol 1e-4 --max-rtol 1e-4 \
	    --quiet --json out/verify/full-size-avx2.json --junit out/verify/full-size-avx2.xml || status=$$?; \
	if [ $$status -ne 0 ]; then echo "verify: samverify failed (exit $$status); reports in out/verify/" >&2; fi; \
	exit $$status

# FUZZ_COUNT seeded random prompts (FUZZ_SEED) on the full-size set's image, with PyTorch's outputs
# (converters/export_fuzz.py, from the set's own mobile_sam.h5 and image embeddings; ~200 MB, a few minutes
# on 2 cores, made in a temporary folder and removed), then samverify on them with the model converted from
# the same weights. Reports in out/verify/fuzz.json and fuzz.xml. The committed tiny sets' fuzzed prompts
# (reference_outputs/tiny_fuzz, vit_tiny_fuzz) run in `make test`. Not in CI: it needs the converters'
# Python environment (torch), which `make test` and CI never install.
FUZZ_COUNT ?= 200
FUZZ_SEED  ?= 0
verify-fuzz: setup venv
	$(SWIFT) build $(RELEASE)
	@test -d "$(REFERENCE_SET)" || { echo "verify-fuzz: reference set folder $(REFERENCE_SET) is missing" >&2; exit 1; }
	@mkdir -p out/verify
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT; \
	$(PYTHON) converters/export_fuzz.py --source "$(REFERENCE_SET)" --config full --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) \
	    --out "$$tmp/fuzz" >/dev/null || exit 2; \
	$(RELEASE_BIN)/samconvert "$(REFERENCE_SET)/mobile_sam.h5" --out "$$tmp/full-size.samw" >/dev/null || exit 2; \
	env -u OPENBLAS_CORETYPE $(RELEASE_BIN)/samverify "$$tmp/full-size.samw" --references "$$tmp/fuzz" --max-atol 1e-4 --max-rtol 1e-4 \
	    --quiet --json out/verify/fuzz.json --junit out/verify/fuzz.xml > "$$tmp/table.txt"; status=$$?; \
	tail -n 1 "$$tmp/table.txt"; exit $$status

# The main job on bundled data: convert the committed tiny model (HDF5 state dict, BatchNorm
# unfused) into a native .samw, then segment the bundled photo from a point prompt.
# Leaves out/tiny.samw and, in out/demo/, the masks (mask_*.png), overlay.png and result.json.
demo: build
	@mkdir -p out
	$(RELEASE_BIN)/samconvert reference_outputs/tiny/mobile_sam.h5 --config reference_outputs/tiny/config.json \
	    --out out/tiny.samw --force
	$(RELEASE_BIN)/samrun out/tiny.samw reference_outputs/demo/photo.png --point 64,40 --point 20,70,0 --out out/demo

# Python side (converters/): only for regenerating fixtures and references, never for `make test`.
venv:
	test -x $(PYTHON) || python3 -m venv $(VENV)
	SAM2_BUILD_CUDA=0 $(PYTHON) -m pip install -q -r converters/requirements.txt
	$(PYTHON) -m pip install -q --no-deps -r converters/requirements-no-deps.txt

# The committed tiny sets: weights, references, every ONNX export style (reference_outputs/tiny/exports,
# converters/export_styles.py, which export.py runs), SAM's ViT, both sets' fuzzed prompts, SAM 2.1
# (checkpoint and samexporter's ONNX pair), the format fixtures, and the tiny ViT set's weights as a
# transformers SamModel checkpoint and a samexporter encoder, the tiny SAM 2.1 set's as a Sam2Model
# checkpoint (import fixtures), and segment-everything sets from the tiny MobileSAM and SAM 2.1 weights on the demo
# photo (converters/export_amg.py, thresholds relaxed for random weights; docs/everything.md), with and without crops.
references: venv
	$(PYTHON) converters/export.py --model vit_t --seed 0 --config tiny --out reference_outputs/tiny
	$(PYTHON) converters/export_reference.py --config vit_tiny --seed 0 --out reference_outputs/vit_tiny
	$(PYTHON) converters/export_fuzz.py --source reference_outputs/tiny --count 200 --seed 0 --near-ties 2 --out reference_outputs/tiny_fuzz
	$(PYTHON) converters/export_fuzz.py --source reference_outputs/vit_tiny --count 64 --seed 0 --out reference_outputs/vit_tiny_fuzz
	$(PYTHON) converters/export_sam2.py --config tiny --seed 0 --onnx --out reference_outputs/sam2_tiny
	$(PYTHON) converters/make_format_fixtures.py --out Tests/SAMFormatsTests/Fixtures
	$(PYTHON) converters/make_checkpoint_fixtures.py --formats Tests/SAMFormatsTests/Fixtures --imports Tests/SAMImportTests/Fixtures \
	    --tiny reference_outputs/tiny/mobile_sam.h5 --sam2 reference_outputs/sam2_tiny/sam2.1_hiera_tiny_widths.pt
	$(PYTHON) converters/export_hf_sam.py --config vit_tiny --weights reference_outputs/vit_tiny/sam.h5 \
	    --out Tests/SAMImportTests/Fixtures/hf_vit_tiny.safetensors
	$(PYTHON) converters/export_hf_sam2.py --set reference_outputs/sam2_tiny \
	    --out Tests/SAMImportTests/Fixtures/hf_sam2_tiny.safetensors --report
	$(PYTHON) converters/export_samexporter.py --config vit_tiny --weights reference_outputs/vit_tiny/sam.h5 \
	    --out Tests/SAMImportTests/Fixtures/samexporter_vit_tiny.onnx
	$(PYTHON) converters/export_amg.py $(AMG_TINY) --out reference_outputs/tiny_amg
	$(PYTHON) converters/export_amg.py $(AMG_TINY) --crop-n-layers 1 --crop-nms-thresh 1.0 --out reference_outputs/tiny_amg_crops
	$(PYTHON) converters/export_amg.py $(AMG_SAM2_TINY) --out reference_outputs/sam2_tiny_amg
	$(PYTHON) converters/export_amg.py $(AMG_SAM2_TINY) --crop-n-layers 1 --crop-nms-thresh 1.0 --out reference_outputs/sam2_tiny_amg_crops
	$(PYTHON) converters/export_amg.py --model sam2.1_tiny --config tiny --weights reference_outputs/sam2_tiny/sam2.1_hiera_tiny_widths.pt \
	    --no-weights-copy --image reference_outputs/demo/photo.png --points-per-side 8 --pred-iou-thresh 0 \
	    --stability-score-thresh 0 --crop-n-layers 1 --mask-threshold 1.0 --out reference_outputs/sam2_tiny_amg_crop_masks
	$(PYTHON) converters/export_amg.py $(AMG_TINY) --crop-nms-thresh 1.0 --min-mask-region-area 30 --out reference_outputs/tiny_amg_regions
	$(PYTHON) converters/export_amg.py --model sam2.1_tiny --config tiny --weights reference_outputs/sam2_tiny/sam2.1_hiera_tiny_widths.pt \
	    --no-weights-copy --image reference_outputs/demo/photo.png --points-per-side 8 --pred-iou-thresh 0 \
	    --stability-score-thresh 0 --mask-threshold 1.0 --min-mask-region-area 30 --out reference_outputs/sam2_tiny_amg_regions
	$(PYTHON) converters/export_amg.py $(AMG_SAM2_TINY) --use-m2m --out reference_outputs/sam2_tiny_amg_m2m
	$(PYTHON) converters/export_amg.py $(AMG_SAM2_TINY) --no-multimask-output --out reference_outputs/sam2_tiny_amg_single
	$(PYTHON) converters/export_sam_hq.py --config hq_vit_tiny --seed 0 --out reference_outputs/sam_hq_vit_tiny
	$(PYTHON) converters/export_sam_hq_onnx.py --set reference_outputs/sam_hq_vit_tiny
	$(PYTHON) converters/export_sam_hq.py --config hq_tiny_vit_tiny --seed 0 --out reference_outputs/sam_hq_tiny_vit_tiny
	$(PYTHON) converters/export_hf_sam_hq.py --weights reference_outputs/sam_hq_vit_tiny/sam_hq.h5 \
	    --out Tests/SAMImportTests/Fixtures/hf_sam_hq_vit_tiny.safetensors
	$(PYTHON) converters/export_efficientvit_sam.py --config tiny --seed 0 --onnx --out reference_outputs/efficientvit_sam_tiny

# The committed segment-everything sets' models and generator parameters (random weights: see docs/everything.md).
AMG_TINY      = --model vit_t --config tiny --weights reference_outputs/tiny/mobile_sam.h5 --no-weights-copy \
                --image reference_outputs/demo/photo.png --points-per-side 8 --pred-iou-thresh 0.1 \
                --stability-score-offset 0.05 --stability-score-thresh 0.05 --box-nms-thresh 1.0 --min-masks 10
AMG_SAM2_TINY = --model sam2.1_tiny --config tiny --weights reference_outputs/sam2_tiny/sam2.1_hiera_tiny_widths.pt \
                --no-weights-copy --image reference_outputs/demo/photo.png --points-per-side 6 --pred-iou-thresh 0.6 \
                --stability-score-offset 0.2 --stability-score-thresh 0.2 --box-nms-thresh 1.0 --min-masks 10

# Native runtime vs onnxruntime on a full-size reference set (REFERENCE_SET), 2 threads each, interleaved
# processes: writes BENCHMARKS.md and benchmarks/results.json (see benchmarks/run_bench.py). Takes
# several minutes. SIZED_MODEL (a folder from converters/make_sized_model.py) adds samconvert on it.
# BENCH_BUILD_FLAGS (e.g. --scratch-path .build-bench) go to the release build; BENCH_ARGS to run_bench.py.
# On CPUs with AVX512_BF16 the native side also runs with the opt-in bfloat16 linear layers (--bf16:
# a column of its own, and samverify --bf16's task-level accuracy on the full-size set).
BENCH_BUILD_FLAGS ?=
BENCH_ARGS        ?= --rounds 5 --encoder-runs 1 --decoder-runs 5 --alt-coretype auto
SIZED_MODEL       ?=
# ENCODER_SETS: reference-set folders (converters/export_reference.py, e.g. --config vit_b) whose image
# encoders are also timed alone against onnxruntime, 10 interleaved rounds each.
ENCODER_SETS      ?=
# Passed to run_encoder_bench.py (e.g. --rounds 4 --bf16).
ENCODER_BENCH_ARGS ?=
bench: setup bench-venv
	@test -d "$(REFERENCE_SET)" || { echo "bench: reference set folder $(REFERENCE_SET) is missing" >&2; exit 1; }
	$(SWIFT) build $(RELEASE) $(BENCH_BUILD_FLAGS) --product sambench
	$(SWIFT) build $(RELEASE) $(BENCH_BUILD_FLAGS) --product samconvert
	$(SWIFT) build $(RELEASE) $(BENCH_BUILD_FLAGS) --product samverify
	$(PYTHON) benchmarks/run_bench.py --bin "$$($(SWIFT) build $(RELEASE) $(BENCH_BUILD_FLAGS) --show-bin-path)" \
	    --reference-set "$(REFERENCE_SET)" --threads 2 --build-flags "$(CPU_FLAGS)" --bf16 $(if $(SIZED_MODEL),--sized-model "$(SIZED_MODEL)") \
	    $(foreach set,$(ENCODER_SETS),--encoder-set "$(set)") $(BENCH_ARGS)

# Image encoders alone against onnxruntime on reference sets that carry an ImageEncoder.onnx (ENCODER_SETS:
# export_reference.py, export_sam_hq.py --onnx ... sets), 10 interleaved rounds of separate processes each,
# 2 threads, on OpenBLAS's own kernel choice; prints the tables, writes out/bench-encoders.json
# (benchmarks/run_encoder_bench.py).
bench-encoders: setup bench-venv
	@test -n "$(ENCODER_SETS)" || { echo "bench-encoders: name the sets with ENCODER_SETS=..." >&2; exit 1; }
	$(SWIFT) build $(RELEASE) --product sambench
	$(SWIFT) build $(RELEASE) --product samconvert
	env -u OPENBLAS_CORETYPE $(PYTHON) benchmarks/run_encoder_bench.py --bin "$$($(SWIFT) build $(RELEASE) --show-bin-path)" --threads 2 \
	    $(foreach set,$(ENCODER_SETS),--encoder-set "$(set)") $(ENCODER_BENCH_ARGS)

# The image encoder by weight precision (benchmarks/run_quantized_bench.py) on QUANT_SETS (REFERENCE_SET and
# ENCODER_SETS unless given: sets with an ImageEncoder.onnx): the set's weights converted with samconvert --dtype
# f32, f16, int8 and q4 (a dtype samconvert refuses is reported and left out), file sizes, conversion time and
# peak RSS; `sambench encoder` at each, onnxruntime on the set's ImageEncoder.onnx and on onnxruntime's own
# quantize_dynamic int8 export of it (weight_type QInt8), separate processes, 5 interleaved rounds, 2 threads;
# medians, fastest runs, load, peak RSS, ratios; each side's error against PyTorch's references (samverify);
# on OpenBLAS's own kernel choice.
# Prints the tables, writes out/bench-quantized.json. QUANT_BENCH_ARGS passes options (e.g. --rounds 1 --no-accuracy).
QUANT_SETS       ?= $(REFERENCE_SET) $(ENCODER_SETS)
QUANT_BENCH_ARGS ?=
bench-quantized: setup bench-venv
	@for set in $(QUANT_SETS); do test -f "$$set/ImageEncoder.onnx" || { echo "bench-quantized: $$set/ImageEncoder.onnx is missing" >&2; exit 1; }; done
	$(SWIFT) build $(RELEASE) --product sambench
	$(SWIFT) build $(RELEASE) --product samconvert
	$(SWIFT) build $(RELEASE) --product samverify
	env -u OPENBLAS_CORETYPE $(PYTHON) benchmarks/run_quantized_bench.py --bin "$$($(SWIFT) build $(RELEASE) --show-bin-path)" --threads 2 \
	    $(foreach set,$(QUANT_SETS),--set "$(set)") --rounds 5 --json out/bench-quantized.json $(QUANT_BENCH_ARGS)

# SAM 2.1's image encoder beside onnxruntime on samexporter's export of the same model (SAM2_SET, a
# full-size set from `make sam2-references`), separate processes, 10 interleaved rounds (median and fastest
# run), 2 threads each, on OpenBLAS's own kernel choice: prints a table, writes out/bench-sam2.json
# (benchmarks/run_sam2_bench.py).
SAM2_SETS ?= /tmp/sam2-sets
SAM2_SET  ?= $(SAM2_SETS)/sam2.1_hiera_tiny
bench-sam2: setup bench-venv
	@test -f "$(SAM2_SET)/encoder.onnx" || { echo "bench-sam2: $(SAM2_SET)/encoder.onnx is missing (make sam2-references)" >&2; exit 1; }
	$(SWIFT) build $(RELEASE) --product sambench
	$(SWIFT) build $(RELEASE) --product samconvert
	env -u OPENBLAS_CORETYPE $(PYTHON) benchmarks/run_sam2_bench.py --bin "$$($(SWIFT) build $(RELEASE) --show-bin-path)" \
	    --set "$(SAM2_SET)" --threads 2 --rounds 10 --bf16 --json out/bench-sam2.json

# SAM 2 video tracking: samtrack beside upstream's SAM2VideoPredictor on a video set (VIDEO_SET, from
# converters/export_sam2_video.py): the set's weights (samconvert of its checkpoint.pt), frames and prompts,
# its first object alone then its first two, separate processes, 3 interleaved rounds, 2 threads each;
# per-frame medians (the last round's propagation), tracking and process times, peak RSS, and samtrack's
# peak RSS on a 10-frame and a 200-frame clip of the set's frames (target <= 1.2x). Prints a table, writes
# out/bench-video.json (benchmarks/run_video_bench.py). Needs the converters' venv (torch, sam2).
# VIDEO_BENCH_ARGS passes options to the script (e.g. --rounds 1 --max-frames 2 --skip-memory for a quick run;
# --bf16 runs samtrack --bf16).
VIDEO_SETS       ?= /tmp/video-sets
VIDEO_SET        ?= $(VIDEO_SETS)/sam21t-seed0
VIDEO_BENCH_ARGS ?=
bench-video: setup venv
	@test -f "$(VIDEO_SET)/reference.json" || { echo "bench-video: $(VIDEO_SET)/reference.json is missing (converters/export_sam2_video.py)" >&2; exit 1; }
	$(SWIFT) build $(RELEASE) --product samconvert
	$(SWIFT) build $(RELEASE) --product samtrack
	env -u OPENBLAS_CORETYPE $(PYTHON) benchmarks/run_video_bench.py --bin "$$($(SWIFT) build $(RELEASE) --show-bin-path)" \
	    --set "$(VIDEO_SET)" --threads 2 --rounds 3 --json out/bench-video.json --build-flags "$(CPU_FLAGS)" $(VIDEO_BENCH_ARGS)

# Full-size SAM 2 video sets (converters/export_sam2_video.py, seeded weights, 8 frames of 640x480) into
# VIDEO_SETS, never committed: SAM 2.1 tiny with and without hole filling (checkpoint also as safetensors and
# HDF5), SAM 2.1 small, SAM 2.0 tiny, and SAM 2.1 tiny with an object that disappears. A few minutes each.
video-references: setup venv
	@mkdir -p "$(VIDEO_SETS)"
	$(PYTHON) converters/export_sam2_video.py --model sam2.1_hiera_tiny --seed 0 --scenario standard --dump-frames 1,4,7 --formats pt,safetensors,h5 --out "$(VIDEO_SETS)/sam21t-seed0"
	$(PYTHON) converters/export_sam2_video.py --model sam2.1_hiera_tiny --seed 0 --scenario standard --no-fill-holes --dump-frames 1,4,7 --formats pt,safetensors,h5 --out "$(VIDEO_SETS)/sam21t-seed0-noholes"
	$(PYTHON) converters/export_sam2_video.py --model sam2.1_hiera_small --seed 0 --scenario standard --dump-frames 1,4,7 --formats pt,safetensors,h5 --out "$(VIDEO_SETS)/sam21s-seed0"
	$(PYTHON) converters/export_sam2_video.py --model sam2_hiera_tiny --seed 0 --scenario standard --dump-frames 1,4,7 --formats pt,safetensors,h5 --out "$(VIDEO_SETS)/sam20t-seed0"
	$(PYTHON) converters/export_sam2_video.py --model sam2.1_hiera_tiny --seed 0 --scenario disappear --auto-object-score-bias --object-score-gain 40 --bias-scan 5.35,5.55,0.05 --dump-frames 1,2,4,7 --formats pt,safetensors --out "$(VIDEO_SETS)/sam21t-disappear"

# samtrack's tracking checked frame by frame against those sets (samverify on a video set): each set's
# checkpoint converted (VIDEO_FORMAT: pt, safetensors or h5), logits within 1e-3 on every frame (except
# where hole filling flipped around a logit within rounding of 0: docs/video.md), masks IoU >= 0.99,
# object scores within 1e-3; reports in out/verify-video/.
VIDEO_VERIFY_SETS ?= sam21t-seed0 sam21t-seed0-noholes sam21s-seed0 sam20t-seed0 sam21t-disappear
VIDEO_FORMAT      ?= pt
verify-video: setup
	$(SWIFT) build $(RELEASE) --product samconvert
	$(SWIFT) build $(RELEASE) --product samverify
	@mkdir -p out/verify-video
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && status=0; \
	for name in $(VIDEO_VERIFY_SETS); do set="$(VIDEO_SETS)/$$name"; \
	    test -f "$$set/reference.json" || { echo "verify-video: $$set is missing (make video-references)" >&2; exit 2; }; \
	    $(RELEASE_BIN)/samconvert "$$set/checkpoint.$(VIDEO_FORMAT)" --config "$$set/config.json" --out "$$tmp/$$name.samw" >/dev/null || exit 2; \
	    echo "== $$name ($(VIDEO_FORMAT))"; \
	    $(RELEASE_BIN)/samverify "$$tmp/$$name.samw" --references "$$set" --quiet | tee "out/verify-video/$$name.txt" || status=1; \
	done; exit $$status

# Full-size SAM 2.1 reference sets (seeded weights, the full-size set's photo, samexporter's ONNX pair) into
# SAM2_SETS: several GB with the checkpoints, never committed. SAM2_CONFIGS picks the models.
SAM2_CONFIGS ?= sam2.1_hiera_tiny sam2.1_hiera_small
sam2-references: venv
	@for config in $(SAM2_CONFIGS); do \
	    $(PYTHON) converters/export_sam2.py --config $$config --seed 0 --image "$(REFERENCE_SET)/image.png" --onnx \
	        --out "$(SAM2_SETS)/$$config" || exit 1; \
	done

# samverify on each full-size SAM 2.1 set, converted twice: from its .pt (no config: the published
# layout is read from the shapes) and from samexporter's ONNX pair. Reports in out/verify/.
verify-sam2: setup
	$(SWIFT) build $(RELEASE)
	@mkdir -p out/verify
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && status=0; \
	for config in $(SAM2_CONFIGS); do set="$(SAM2_SETS)/$$config"; \
	    test -d "$$set" || { echo "verify-sam2: $$set is missing (make sam2-references)" >&2; exit 2; }; \
	    $(RELEASE_BIN)/samconvert "$$set/$$config.pt" --out "$$tmp/$$config.samw" >/dev/null || exit 2; \
	    $(RELEASE_BIN)/samverify "$$tmp/$$config.samw" --references "$$set" --max-atol 1e-4 --max-rtol 1e-4 \
	        --json "out/verify/$$config.json" || status=$$?; \
	    $(RELEASE_BIN)/samconvert "$$set/encoder.onnx" "$$set/decoder.onnx" --out "$$tmp/$$config-onnx.samw" >/dev/null || exit 2; \
	    $(RELEASE_BIN)/samverify "$$tmp/$$config-onnx.samw" --references "$$set" --max-atol 1e-4 --max-rtol 1e-4 \
	        --json "out/verify/$$config-onnx.json" || status=$$?; \
	done; exit $$status

# The benchmark's Python side only (numpy + onnxruntime), lighter than `venv` (which installs torch).
# Segment everything on REFERENCE_SET's MobileSAM and photo (or EVERYTHING_IMAGE), 32x32 grid and upstream's
# defaults, beside PyTorch's SamAutomaticMaskGenerator on the same weights, photo and 2 threads, as
# separate processes (benchmarks/run_everything_bench.py): generator times and their ratio, decoded
# masks per second, peak RSS, the two mask sets matched; out/bench-everything.json. A PyTorch run takes
# minutes. EVERYTHING_ARGS passes options to the script (--rounds N, or -- --points-per-side 16 for both sides).
bench-everything: setup venv
	$(SWIFT) build $(RELEASE) --product samrun
	$(SWIFT) build $(RELEASE) --product samconvert
	$(PYTHON) benchmarks/run_everything_bench.py --bin "$$($(SWIFT) build $(RELEASE) --show-bin-path)" --reference-set "$(REFERENCE_SET)" \
	    --threads 2 $(if $(EVERYTHING_IMAGE),--image "$(EVERYTHING_IMAGE)") $(EVERYTHING_ARGS)

bench-venv:
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q -r benchmarks/requirements.txt

# Regenerates the committed protobuf-c bindings (see Sources/CONNXProto/GENERATED.md).
regen-onnx-proto:
	cd Sources/CONNXProto && protoc-c --c_out=. onnx.proto && mv onnx.pb-c.h include/

clean:
	rm -rf .build

# libFuzzer runs of the ONNX, .npy, .samw, HDF5, PyTorch and safetensors readers (Fuzz/, scripts/fuzz.sh).
# `make fuzz` (CI) is reproducible: the committed seeds and regressions, a fixed mutation seed and a fixed
# number of inputs per target (about 10 s each), so two runs on one commit try the same inputs and a
# failure is a finding of that commit. `make fuzz-explore` runs FUZZ_SECONDS per target with a random seed
# on a corpus kept in .build-fuzz/corpus/ (not in CI). In both, crashes become
# Tests/HostileInputTests/Corpus/regressions/ inputs (replayed by `swift test`): commit them.
FUZZ_SECONDS ?= 300
fuzz: setup
	scripts/fuzz.sh

fuzz-explore: setup
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh --explore

# Every test under AddressSanitizer, in its own scratch folder. Not in CI. On 2 cores: cold build + run ~7 min
# (the tests alone ~2.5 min). Leak checking is off by default: the only leaks LeakSanitizer reports are in
# XCTest and Foundation's Bundle.allBundles at exit, which fail the run with nothing of ours to fix;
# `make test-asan ASAN_OPTIONS=detect_leaks=1` turns it back on.
ASAN_OPTIONS ?= detect_leaks=0
test-asan: setup
	ASAN_OPTIONS=$(ASAN_OPTIONS) $(SWIFT) test --sanitize=address --scratch-path .build-asan

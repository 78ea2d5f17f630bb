#!/usr/bin/env bash
# libFuzzer runs of the SAMFormats readers (see Fuzz/Package.swift). Two modes:
#   scripts/fuzz.sh [TARGET...]            CI: reproducible. A fresh corpus of the committed seeds and
#                                          regressions, a fixed mutation seed (FUZZ_MUTATION_SEED, default 1)
#                                          and a fixed number of inputs per target (FUZZ_RUNS, default per
#                                          target, ~10 s each): two runs on one commit try the same inputs,
#                                          and the script prints a digest of what each target tried.
#   scripts/fuzz.sh --explore [TARGET...]  Exploration: FUZZ_SECONDS (default 60) per target, a random
#                                          seed, the working corpus kept in .build-fuzz/corpus/ to grow.
# TARGET in NPY ONNX SAMW HDF5 PTH SAFETENSORS (default: all). Seeds come from the committed good files,
# Fuzz/Seeds/<target> (HDF5 links and storage, ONNX subgraphs and nested types; made by
# converters/make_fuzz_seeds.py) and Tests/HostileInputTests/Corpus/regressions; Fuzz/Dictionaries/
# gives the HDF5 and ONNX targets their structures' tokens. In either mode a crash is copied to
# Tests/HostileInputTests/Corpus/regressions/<target>-<hash>.<ext>, which HostileInputTests replays through
# the CLIs (commit it); the script then exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
explore=0
if [ "${1:-}" = --explore ]; then explore=1; shift; fi
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_MUTATION_SEED=${FUZZ_MUTATION_SEED:-1}
SCRATCH=${FUZZ_SCRATCH:-$root/.build-fuzz}
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(NPY ONNX SAMW HDF5 PTH SAFETENSORS)
regressions=$root/Tests/HostileInputTests/Corpus/regressions
mkdir -p "$regressions"

# SwiftPM executable targets get main aliased to <Module>_main; each fuzz target defines that and calls
# LLVMFuzzerRunDriver, so -sanitize=fuzzer works across the package's modules (all instrumented).
product() { case $1 in SAFETENSORS) echo FuzzSafetensors;; *) echo "Fuzz$1";; esac; }

build() {
    (cd Fuzz && swift build --scratch-path "$SCRATCH" -c debug \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product "$(product "$1")" 2>&1 \
        | grep -v "Cannot export local symbol" | tail -3)
}

seed() {  # target corpus-folder
    local t=$1 dir=$2
    case $t in
        NPY)  cp reference_outputs/tiny/references/image_embeddings.npy "$dir/"
              find reference_outputs/tiny/references -name '*.npy' -size -8k | head -20 | xargs -r cp -t "$dir/" 2>/dev/null || true ;;
        ONNX) cp reference_outputs/tiny/PromptEncoder.onnx reference_outputs/tiny/MaskDecoder.onnx Fuzz/Seeds/ONNX/*.onnx \
                 reference_outputs/tiny/anonymous/torchscript-opset17-PromptEncoder.onnx \
                 reference_outputs/tiny/anonymous/torchscript-opset17-MaskDecoder.onnx "$dir/" ;;
        SAMW) "$(swift build --show-bin-path)/samconvert" reference_outputs/tiny/PromptEncoder.onnx --out "$dir/prompt.samw" --force >/dev/null ;;
        HDF5) cp reference_outputs/tiny/mobile_sam.h5 Fuzz/Seeds/HDF5/*.h5 "$dir/" ;;
        # The million-value pickles (stack flood, deep tuples and lists) would slow every mutation of them.
        PTH)  ls Tests/SAMFormatsTests/Fixtures/pth_*.pth | grep -vE 'stack_flood|deep_tuples|deep_value' | xargs cp -t "$dir/"
              cp Tests/SAMImportTests/Fixtures/tiny_mobile_sam.pth "$dir/" ;;
        SAFETENSORS) cp Tests/SAMFormatsTests/Fixtures/st_*.safetensors Tests/SAMImportTests/Fixtures/tiny_mobile_sam.safetensors "$dir/" ;;
    esac
}

ext() { case $1 in NPY) echo npy;; ONNX) echo onnx;; SAMW) echo samw;; HDF5) echo h5;; PTH) echo pth;; SAFETENSORS) echo safetensors;; esac; }

# Inputs per target in CI mode, about 10 s each on 2 cores (the readers differ a hundredfold in speed).
runs() { case $1 in NPY) echo 60000;; ONNX) echo 2000;; SAMW) echo 20000;; HDF5) echo 20000;; PTH) echo 5000;; SAFETENSORS) echo 3000;; esac; }

dictionary() {  # target: -dict=FILE when the target has one
    local file=$root/Fuzz/Dictionaries/$(echo "$1" | tr '[:upper:]' '[:lower:]').dict
    [ -f "$file" ] && echo "-dict=$file"
}

# Reproducible runs: Swift's hashing unseeded (Dictionary order, and so coverage, the same every run)
# and, where the kernel allows it, no address randomisation (hashes of object addresses).
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then norandom=(setarch "$(uname -m)" -R); fi

status=0
for t in "${targets[@]}"; do
    echo "== Fuzz$t: build"
    build "$t"
    if [ $explore = 1 ]; then
        corpus=$SCRATCH/corpus/$t
        mkdir -p "$corpus"
    else
        corpus=$SCRATCH/ci-corpus/$t
        rm -rf "$corpus"; mkdir -p "$corpus"
    fi
    if [ -z "$(ls -A "$corpus")" ]; then
        if [ "$t" = SAMW ] && [ ! -x "$(swift build --show-bin-path)/samconvert" ]; then
            swift build --product samconvert >/dev/null   # the ordinary debug build, to make a seed .samw
        fi
        seed "$t" "$corpus"
    fi
    find "$regressions" -name "*.$(ext "$t")" -exec cp {} "$corpus/" \;
    artifacts=$SCRATCH/artifacts/$t/
    rm -rf "$artifacts"; mkdir -p "$artifacts"
    if [ $explore = 1 ]; then
        echo "== Fuzz$t: ${FUZZ_SECONDS}s, random seed"
        limits=(-max_total_time="$FUZZ_SECONDS")
        runner=()
    else
        echo "== Fuzz$t: $(runs "$t") inputs, seed $FUZZ_MUTATION_SEED"
        limits=(-runs="${FUZZ_RUNS:-$(runs "$t")}" -seed="$FUZZ_MUTATION_SEED" -reload=0)
        # One fixed folder whatever the clone's path: ONNX messages and external-data paths hold it.
        inputs=/tmp/samfuzz-ci/$t
        rm -rf "$inputs"; mkdir -p "$inputs"
        # One worker thread: how a parallel loop splits its work (the .samw checksums) depends on timing.
        runner=(env SWIFT_DETERMINISTIC_HASHING=1 SAM_NUM_THREADS=1 SAM_FUZZ_INPUT_DIR="$inputs" "${norandom[@]}")
    fi
    # allocator_may_return_null: a request the machine cannot back returns NULL as glibc's malloc does
    # outside ASan. libhdf5 sizes some allocations from the file (a 43 GB one for
    # regressions/HDF5-bdf8729d9e28.h5) and reports a NULL as a corrupt file, which is what users get;
    # ASan's default aborts instead. Swift's own allocations still trap on NULL, so ours stay caught.
    if ! ASAN_OPTIONS="detect_leaks=${FUZZ_LEAKS:-0}:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "${runner[@]}" \
            "$SCRATCH/debug/$(product "$t")" "${limits[@]}" -rss_limit_mb=4096 -max_len=1048576 -detect_leaks="${FUZZ_LEAKS:-0}" \
            $(dictionary "$t") -artifact_prefix="$artifacts" -print_final_stats=1 "$corpus" > "$SCRATCH/Fuzz$t.log" 2>&1; then
        status=1
        tail -60 "$SCRATCH/Fuzz$t.log"
        for crash in "$artifacts"*; do
            [ -s "$crash" ] || [ -f "$crash" ] || continue
            name=$t-$(sha1sum "$crash" | cut -c1-12).$(ext "$t")
            cp "$crash" "$regressions/$name"
            echo "Fuzz$t: crash saved as Tests/HostileInputTests/Corpus/regressions/$name" >&2
        done
    else
        grep -E "stat::number_of_executed_units|Done" "$SCRATCH/Fuzz$t.log" | tail -2
        # What the run tried and kept: the same on every CI run of one commit.
        [ $explore = 1 ] || echo "Fuzz$t: corpus digest $(cd "$corpus" && ls | sort | sha256sum | cut -c1-16) ($(ls "$corpus" | wc -l) inputs)"
    fi
done
exit $status

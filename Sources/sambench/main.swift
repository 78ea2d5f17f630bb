// sambench: measures the native runtime on the full-size set and prints one JSON object.
//
//   sambench run MODEL.samw DROP_DIR [--encoder-runs N] [--decoder-runs N] [--threads T]
//   sambench sgemm [--size N] [--runs N] [--threads T]
//   sambench fma-peak [--runs N] [--threads T] [--lanes 8|16 | --bf16]
//   sambench load MODEL.samw [--runs N] [--skip-checksums]
//   sambench encoder MODEL.samw IMAGE.npy|SET_DIR [--runs N] [--threads T]
//   sambench profile-decoder MODEL.samw DROP_DIR [--runs N] [--depth D]
//   sambench profile-encoder MODEL.samw DROP_DIR [--runs N] [--modules] [--depth D] [--top N]
//   sambench decode MODEL.samw DROP_DIR CASE [--runs N]
//   sambench attention [--runs N] [--case TEXT] [--kernel blas|small-heads|panels|bfloat16]
//   sambench conv [--runs N] [--case TEXT]
//   sambench inverted-residual [--runs N] [--case TEXT]
//   sambench linear [--runs N] [--case TEXT]
//   sambench cancel-encode MODEL.samw [--runs N]
//   (model modes take --untuned: without Kernels.tuneProcessForInference, as an app that did not opt in,
//   and --bf16: linear layers in bfloat16 products)
//
// `run`: model load (ModelFile.load), image encoder latency on references/input_image.npy
// (one untimed warm-up first), the decoder's per-image preparation (Sam.decoderImageState, once per
// image in an app), decoder latency per prompt (Sam.decode(imageState:) + MaskPostprocessor.upscale to the
// original 1365x2048 image, the official ONNX decoder's equivalent work) for the point1,
// points16 and points100 cases, the BLAS backend that ran, and peak RSS (VmHWM) at the end.
// `encoder`: model load and the image encoder alone (every feature map, `Sam.encodeFeatures`) on a
// preprocessed [1,3,S,S] input (IMAGE.npy, or a set's references/input_image.npy), one untimed
// warm-up first, then peak RSS: any family, for sets without the full-size set's decoder cases
// (`make bench ENCODER_SETS=...`, `make bench-sam2`).
// `sgemm`: a large square BLAS.sgemm timing, for the achieved-vs-peak GFLOP/s figure.
// `fma-peak`: the CPU's arithmetic ceiling: register-only fused multiply-add chains at the widest
// vector width it has (or `--lanes`: 8 for AVX2's), on `threads` threads at once (no kernel reaches
// it; sgemm comes closest); `--bf16`: the same with vdpbf16ps, the opt-in bfloat16 products' ceiling.
// `decode`: one decoder case (point1, points16, points100) decoded and upscaled `--runs` times on the
// reference embeddings, as `run` times it (median ms of each), for a profiler on the decoder alone.
// `attention`: Kernels.attention alone on the shapes MobileSAM and SAM 2.1 tiny run, each kernel in
// turn (median ms per call), to choose between them and to A/B-time a kernel change, then
// Kernels.windowAttention on their windowed grids ("grid: ..." cases), and SAM ViT's relative-position
// attention ("relative positions: ..."); `--case` keeps the cases
// whose name contains TEXT, `--kernel` one kernel (for a profiler on one path).
// `conv`: Kernels.conv2d alone on encoders' depthwise and dense convolutions (median ms per call;
// `--case` keeps the cases whose name contains TEXT), to A/B-time a convolution change.
// `inverted-residual`: Kernels.invertedResidual by rows and by channel blocks beside the three
// convolutions run apart, on TinyViT's and EfficientViT-SAM L0's blocks and XL0's largest (median ms of each; `--case`).
// `linear`: Kernels.linear alone on the decoder's products over the image tokens and over its prompt
// tokens, and on SAM ViT-B's encoder products (median ms per call, GFLOP/s; `--case` as for `conv`), to
// A/B-time a linear-layer change.
// `cancel-encode`: how soon `Segmenter.encode` returns once its task is cancelled (ms from the cancel to
// the CancellationError, median and largest), cancelled at 10%, 50% and 90% of an uncancelled encode.
import CFMAPeak
import Foundation
import SAMBLAS
import SAMFormats
import SAMImage
import SAMKernels
import SAMModel
import SAMModelFile
import SAMPipeline
import SAMTensor

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    guard !s.isEmpty else { return .nan }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func peakRSSKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first { Int($0) != nil }.flatMap { Int($0) } ?? -1)
    }
    return -1
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("sambench: \(message)\n".utf8))
    exit(2)
}

/// The text after `name` in the arguments, nil when absent.
func textOption(_ args: [String], _ name: String) -> String? {
    args.firstIndex(of: name).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil }
}

/// Seconds of each of `runs` calls of `body`, after one untimed warm-up call.
func timedRuns(_ runs: Int, _ body: () -> Void) -> [Double] {
    var times: [Double] = []
    for run in 0...runs {
        let t0 = now()
        body()
        if run > 0 { times.append(now() - t0) }
    }
    return times
}

/// One case: `call` with each choice in turn, `runs` times after a warm-up round, so drifts in the
/// machine's speed hit every choice alike; the median ms per choice's label.
func alternating<Choice>(_ name: String, runs: Int, _ choices: [(label: String, choice: Choice)],
                         _ call: (Choice) -> Void) -> [String: Any] {
    var times: [String: [Double]] = [:]
    for run in 0...runs {
        for (label, choice) in choices {
            let t0 = now()
            call(choice)
            if run > 0 { times[label, default: []].append(now() - t0) }
        }
    }
    var result: [String: Any] = ["case": name]
    for (label, values) in times { result[label] = median(values) * 1000 }
    return result
}

func option(_ args: [String], _ name: String, _ fallback: Int) -> Int {
    guard let i = args.firstIndex(of: name), i + 1 < args.count, let v = Int(args[i + 1]) else { return fallback }
    return v
}

/// Inputs for the kernel modes: a linear congruential sequence, values in [-scale, scale].
struct BenchRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func tensor(_ shape: [Int], scale: Float = 1) -> FloatTensor {
        let count = shape.reduce(1, *)
        var data = [Float](repeating: 0, count: count)
        for i in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            data[i] = scale * (Float(Int(state >> 40) % 2001 - 1000) / 1000)
        }
        return FloatTensor(shape: shape, data: data)
    }
}

func emit(_ object: [String: Any]) {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) else {
        fail("could not encode JSON")
    }
    FileHandle.standardOutput.write(data)
    FileHandle.standardOutput.write(Data("\n".utf8))
}

func load(_ path: String) -> FloatTensor {
    do { return FloatTensor(try NPY.read(path)) } catch { fail("\(path): \(error)") }
}

/// One of the full-size set's decoder cases (references/<name>/onnx_*.npy), as the official ONNX decoder takes it.
struct DecoderCase {
    /// The full-size set's photo is 1365x2048 (HxW), the official decoder's orig_im_size; the input size is
    /// ResizeLongestSide's.
    static let originalSize = ImageSize(height: 1365, width: 2048)
    static let inputSize = ResizeLongestSide(targetLength: 1024).targetSize(originalSize)

    var points: FloatTensor, labels: FloatTensor
    let padded: Bool
    let maskInput: FloatTensor
    let hasMaskInput: Float

    init(refs: String, name: String) {
        points = load("\(refs)/\(name)/onnx_point_coords.npy")
        labels = load("\(refs)/\(name)/onnx_point_labels.npy")
        // The ONNX inputs include the official (0,0,-1) padding point; the native decoder appends it itself
        // (its point-count range applies to the user's points), as samverify feeds it.
        padded = Sam.removeOfficialPaddingPoint(points: &points, labels: &labels)
        maskInput = load("\(refs)/\(name)/onnx_mask_input.npy")
        hasMaskInput = load("\(refs)/\(name)/onnx_has_mask_input.npy").data[0]
    }

    func decode(_ sam: Sam, imageState: DecoderImageState) throws -> MaskPrediction {
        try sam.decode(imageState: imageState, points: points, labels: labels, appendPaddingPoint: padded,
                       maskInput: maskInput, hasMaskInput: hasMaskInput)
    }
}

// Before anything else: OpenBLAS reads its kernel choice as it loads (Kernels.restartWithStrongerBLASKernelsIfNeeded).
Kernels.restartWithStrongerBLASKernelsIfNeeded()
let args = Array(CommandLine.arguments.dropFirst())
guard let mode = args.first else {
    fail("usage: sambench run MODEL.samw DROP_DIR [--encoder-runs N] [--decoder-runs N] [--threads T] | sambench sgemm [--size N] [--runs N] [--threads T] | sambench load MODEL.samw [--runs N]")
}
let threads = option(args, "--threads", 2)
guard threads >= 1 else { fail("--threads must be at least 1") }
// `sgemm` measures OpenBLAS's own threading (the peak); the model runs use `threads` kernel
// workers (read once by SAMParallel from SAM_NUM_THREADS), each calling a one-thread BLAS, as the
// command-line tools do (`Kernels.tuneProcessForInference`), unless `--untuned` asks for the
// library's behaviour in a process that did not opt in.
BLAS.setThreadCount(threads)
setenv("SAM_NUM_THREADS", String(threads), 1)
if mode != "sgemm" && mode != "fma-peak" && !args.contains("--untuned") {
    Kernels.tuneProcessForInference()
}
// `--bf16`: linear layers in bfloat16 products (Kernels.setLinearPrecision), the opt-in path; for
// `fma-peak`, which runs no linear layer, it picks the bfloat16 chains instead.
if args.contains("--bf16") && mode != "fma-peak" {
    do { try Kernels.setLinearPrecision(.bfloat16) } catch { fail("\(error)") }
}
// `--int8-products`: int8 weights multiplied in int8 products (Kernels.setInt8Products), the opt-in path.
Kernels.setInt8Products(args.contains("--int8-products"))
// `--blas-linear`: float32 linear layers on OpenBLAS sgemm instead of the panel product (A/B runs).
if args.contains("--blas-linear") {
    do { try Kernels.setFloat32LinearKernel(.blas) } catch { fail("\(error)") }
}

switch mode {
case "sgemm":
    let n = option(args, "--size", 2048), runs = option(args, "--runs", 5)
    var a = [Float](repeating: 0, count: n * n), b = a, c = a
    for i in 0..<(n * n) { a[i] = Float(i % 7) * 0.01; b[i] = Float(i % 5) * 0.02 }
    let times = timedRuns(runs) {
        a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in c.withUnsafeMutableBufferPointer { pc in
            BLAS.sgemm(transA: false, transB: false, m: n, n: n, k: n, alpha: 1, a: pa.baseAddress!, lda: n,
                       b: pb.baseAddress!, ldb: n, beta: 0, c: pc.baseAddress!, ldc: n)
        } } }
    }
    let flops = 2.0 * Double(n) * Double(n) * Double(n)
    emit(["mode": "sgemm", "size": n, "runs": times, "median_s": median(times),
          "gflops": flops / median(times) / 1e9, "blas": BLAS.backendDescription, "threads": threads])

case "fma-peak":
    // `--bf16`: vdpbf16ps chains (two products per lane and step) instead of fused multiply-adds.
    let widest = Int(sam_fma_peak_lanes()), lanes = option(args, "--lanes", widest), runs = option(args, "--runs", 5)
    let chains: @Sendable (Int64) -> Float, flopsPerIteration: Double, shape: [String: Any]
    if args.contains("--bf16") {
        guard sam_bf16_dot_peak_available() != 0 else {
            fail("fma-peak --bf16: this CPU has no AVX512_BF16" + (getenv("SAM_CPU_CAP") != nil ? " (or SAM_CPU_CAP holds it below AVX-512)" : ""))
        }
        chains = { sam_bf16_dot_peak_run($0) }
        (flopsPerIteration, shape) = (12 * 64, ["precision": "bfloat16"])
    } else {
        guard widest > 0 else { fail("fma-peak: this CPU has neither AVX-512F nor AVX2 with FMA") }
        guard lanes == 8 || lanes == 16, lanes <= widest else { fail("fma-peak: --lanes must be 8 or 16, at most \(widest) here") }
        chains = { sam_fma_peak_run(Int32(lanes), $0) }
        (flopsPerIteration, shape) = (24 * Double(lanes), ["lanes": lanes])
    }
    guard runs >= 1 else { fail("fma-peak: --runs must be at least 1") }
    let iterations: Int64 = 50_000_000  // ~0.2 s per thread at 3 GHz with sixteen lanes
    let times = timedRuns(runs) {
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            precondition(chains(iterations).isFinite, "fma-peak: chains overflowed")
        }
    }
    // A ceiling: other load on the machine only slows a run, so the fastest run is the figure.
    let flops = Double(threads) * flopsPerIteration * Double(iterations)
    emit(shape.merging(["mode": "fma-peak", "threads": threads, "runs": times, "median_s": median(times),
                        "gflops": flops / times.min()! / 1e9, "median_gflops": flops / median(times) / 1e9]) { first, _ in first })

case "attention":
    let runs = option(args, "--runs", 20)
    var rng = BenchRandom(seed: 0x5eed)
    func random(_ shape: [Int]) -> FloatTensor { rng.tensor(shape) }
    // (name, batch, queries, keys, heads, head dim, value head dim when not the head dim): the
    // decoder's two cross attentions (the prompt's points, a padding point and 5 output tokens against
    // 64x64 image tokens), TinyViT's 7x7 and 14x14 windows, SAM 2.1 tiny's global block and its windows
    // of each stage, and SAM 2's memory attention (its cross-attention's values are the memories' 64
    // channels, projected after the attention).
    let cases: [(String, Int, Int, Int, Int, Int, Int?)] = [("decoder image-to-token, 100 points", 1, 4096, 106, 8, 16, nil),
                 ("decoder token-to-image, 100 points", 1, 106, 4096, 8, 16, nil),
                 ("decoder image-to-token, 16 points", 1, 4096, 22, 8, 16, nil),
                 ("decoder token-to-image, 16 points", 1, 22, 4096, 8, 16, nil),
                 ("decoder token-to-image, 1 point", 1, 7, 4096, 8, 16, nil),
                 ("encoder stage 2, 7x7 windows", 64, 49, 49, 5, 32, nil),
                 ("encoder stage 3, 14x14 windows", 4, 196, 196, 10, 32, nil),
                 ("SAM 2.1 tiny global block, 64x64", 1, 4096, 4096, 4, 96, nil),
                 ("SAM 2.1 tiny 8x8 windows", 1024, 64, 64, 1, 96, nil),
                 ("SAM 2.1 tiny 4x4 windows", 1024, 16, 16, 2, 96, nil),
                 ("SAM 2.1 tiny 14x14 windows", 25, 196, 196, 4, 96, nil),
                 ("SAM 2.1 tiny 7x7 windows", 25, 49, 49, 8, 96, nil),
                 ("SAM 2 memory self-attention", 1, 4096, 4096, 1, 256, nil),
                 ("SAM 2 memory cross-attention, 7 memories", 1, 4096, 28736, 1, 256, nil),
                 ("SAM 2 memory cross-attention, 7 memories, 64-wide values", 1, 4096, 28736, 1, 256, 64)]
    let caseFilter = textOption(args, "--case")
    let kernelFilter = textOption(args, "--kernel")
    // bfloat16: both products in bfloat16 (`precision: .bfloat16`, as SAM 2's memory attention runs under --bf16).
    typealias AttentionChoice = (kernel: Kernels.AttentionKernel, precision: Kernels.LinearPrecision)
    let kernels = ([("blas_ms", "blas", AttentionChoice(.blas, .float32)), ("small_heads_ms", "small-heads", AttentionChoice(.smallHeads, .float32))]
        + (Kernels.panelAttentionAvailable ? [("panels_ms", "panels", AttentionChoice(.panels, .float32))] : [])
        + (Kernels.queryLanesKernelAvailable ? [("query_lanes_ms", "query-lanes", AttentionChoice(.queryLanes, .float32))] : [])
        + (Kernels.bfloat16Available ? [("bfloat16_ms", "bfloat16", AttentionChoice(.automatic, .bfloat16))] : []))
        .filter { kernelFilter == nil || $0.1 == kernelFilter }.map { (label: $0.0, choice: $0.2) }
    var results: [[String: Any]] = []
    for (name, batch, lq, lk, heads, dim, valueDim) in cases where caseFilter.map({ name.contains($0) }) ?? true {
        let q = random([batch, lq, heads * dim]), k = random([batch, lk, heads * dim]), v = random([batch, lk, heads * (valueDim ?? dim)])
        results.append(alternating(name, runs: runs, kernels) { choice in
            _ = Kernels.attention(q: q, k: k, v: v, heads: heads, scale: 0.25, bias: nil, kernel: choice.kernel, precision: choice.precision)
        })
    }
    // Windowed attention on the token grid (Kernels.windowAttention, TinyViT's and Hiera's unpooled
    // windows, padded positions included): (name, grid side, window, heads, head dim, with TinyViT's
    // per-head position bias). MobileSAM's three windowed stages, then Hiera's.
    let windowCases = [("grid: TinyViT 128x128, 7x7 windows", 128, 7, 4, 32, true),
                       ("grid: TinyViT 64x64, 14x14 windows", 64, 14, 5, 32, true),
                       ("grid: TinyViT 64x64, 7x7 windows", 64, 7, 10, 32, true),
                       ("grid: SAM 2.1 tiny 256x256, 8x8 windows", 256, 8, 1, 96, false),
                       ("grid: SAM 2.1 tiny 128x128, 4x4 windows", 128, 4, 2, 96, false),
                       ("grid: SAM 2.1 tiny 64x64, 14x14 windows", 64, 14, 4, 96, false),
                       ("grid: SAM 2.1 tiny 32x32, 7x7 windows", 32, 7, 8, 96, false)]
    for (name, side, window, heads, dim, biased) in windowCases where caseFilter.map({ name.contains($0) }) ?? true {
        let qkv = random([1, side * side, 3 * heads * dim]), padding = random([3 * heads * dim])
        let grid = Kernels.WindowGrid(height: side, width: side, window: window)
        let bias = biased ? random([heads, grid.positions, grid.positions]) : nil
        let times = timedRuns(runs) {
            _ = Kernels.windowAttention(packedQKV: qkv, grid: grid, paddingQKV: padding, heads: heads, keyDim: dim,
                                        valueDim: dim, scale: 0.25, bias: bias)
        }
        results.append(["case": name, "window_grid_ms": median(times) * 1000])
    }
    // SAM ViT's attention with decomposed relative positions (Kernels.relativePositionAttention), each
    // kernel in turn: (name, windows, grid side, heads, head dim). ViT-B's global blocks and its 14x14 windows.
    let relativeCases = [("relative positions: ViT-B global, 64x64", 1, 64, 12, 64),
                         ("relative positions: ViT-B 14x14 windows", 25, 14, 12, 64)]
    let relativeKernels = ([("blas_ms", "blas", Kernels.AttentionKernel.blas)]
        + (Kernels.panelAttentionAvailable ? [("panels_ms", "panels", .panels)] : []))
        .filter { kernelFilter == nil || $0.1 == kernelFilter }.map { (label: $0.0, choice: $0.2) }
    for (name, windows, side, heads, dim) in relativeCases where caseFilter.map({ name.contains($0) }) ?? true {
        let qkv = random([windows, side * side, 3 * heads * dim])
        let positions = Kernels.RelativePositionTables(heights: random([side, side, dim]), widths: random([side, side, dim]))
        results.append(alternating(name, runs: runs, relativeKernels) { kernel in
            _ = Kernels.relativePositionAttention(packedQKV: qkv, heads: heads, scale: 0.125, positions: positions, kernel: kernel)
        })
    }
    emit(["mode": "attention", "runs": runs, "threads": threads, "cases": results])

case "conv":
    // Kernels.conv2d alone on encoders' convolutions (median ms per call): EfficientViT-SAM L0's
    // 5x5 depthwise aggregation and its largest 3x3, TinyViT's (both convolutions) and Hiera's patch embeddings.
    let runs = option(args, "--runs", 10)
    let caseFilter = textOption(args, "--case")
    var rng = BenchRandom(seed: 0x5eed)
    // (name, in channels, out channels, kernel, stride, groups, side)
    let cases = [("depthwise: EfficientViT-SAM L0 aggregation, 1536 channels, 5x5 at 16x16", 1536, 1536, 5, 1, 1536, 16),
                 ("depthwise: TinyViT local convolution, 160 channels, 3x3 at 64x64", 160, 160, 3, 1, 160, 64),
                 ("EfficientViT-SAM L0 neck, 256 -> 256, 3x3 at 64x64", 256, 256, 3, 1, 1, 64),
                 ("pointwise: EfficientViT-SAM L0 stage 4 expansion, 512 -> 3072 at 16x16", 512, 3072, 1, 1, 1, 16),
                 ("pointwise: EfficientViT-SAM L0 stage 4 projection, 3072 -> 512 at 16x16", 3072, 512, 1, 1, 1, 16),
                 ("pointwise: EfficientViT-SAM L0 stage 4 downsample expansion, 256 -> 6144 at 32x32", 256, 6144, 1, 1, 1, 32),
                 ("pointwise: EfficientViT-SAM L0 stage 3 expansion, 256 -> 1024 at 32x32", 256, 1024, 1, 1, 1, 32),
                 ("pointwise: EfficientViT-SAM L0 stage 3 projection, 1024 -> 256 at 32x32", 1024, 256, 1, 1, 1, 32),
                 ("pointwise: EfficientViT-SAM L0 stage 3 downsample expansion, 128 -> 2048 at 64x64", 128, 2048, 1, 1, 1, 64),
                 ("pointwise: EfficientViT-SAM L0 stage 4 attention qkv, 512 -> 1536 at 16x16", 512, 1536, 1, 1, 1, 16),
                 ("pointwise: EfficientViT-SAM L0 stage 2 projection, 512 -> 128 at 64x64", 512, 128, 1, 1, 1, 64),
                 ("pointwise: EfficientViT-SAM L0 stage 1 projection, 256 -> 64 at 128x128", 256, 64, 1, 1, 1, 128),
                 ("pointwise: TinyViT MBConv expansion, 64 -> 256 at 256x256", 64, 256, 1, 1, 1, 256),
                 ("TinyViT patch embedding, 3 -> 32, 3x3 stride 2 at 1024x1024", 3, 32, 3, 2, 1, 1024),
                 ("TinyViT patch embedding, 32 -> 64, 3x3 stride 2 at 512x512", 32, 64, 3, 2, 1, 512),
                 ("Hiera patch embedding, 3 -> 96, 7x7 stride 4 at 1024x1024", 3, 96, 7, 4, 1, 1024)]
    var results: [[String: Any]] = []
    for (name, inChannels, outChannels, size, stride, groups, side) in cases where caseFilter.map({ name.contains($0) }) ?? true {
        let x = rng.tensor([1, inChannels, side, side])
        let weight = rng.tensor([outChannels, inChannels / groups, size, size], scale: 0.05), bias = rng.tensor([outChannels])
        let times = timedRuns(runs) {
            _ = Kernels.conv2d(x, weight: weight, bias: bias, stride: stride, padding: size / 2, groups: groups)
        }
        let outSide = (side + 2 * (size / 2) - size) / stride + 1
        let gflop = 2.0 * Double(outChannels * (inChannels / groups) * size * size * outSide * outSide) / 1e9
        results.append(["case": name, "ms": median(times) * 1000, "gflop": gflop, "gflops": gflop / median(times)])
    }
    emit(["mode": "conv", "runs": runs, "threads": threads, "cases": results])

case "inverted-residual":
    // An inverted-residual block (1x1 expansion, GELU, 3x3 depthwise, GELU, 1x1 projection plus the
    // input) on MobileSAM's and EfficientViT-SAM L0's shapes, three ways alternated in one process
    // (median ms per call): `Kernels.invertedResidual` by rows and by channel blocks (its two
    // schedules; channel blocks expand with the panel product, or OpenBLAS under `--blas-linear` and
    // on CPUs without AVX-512) and the three convolutions one after another (`Kernels.conv2d`, the
    // expanded maps whole).
    let runs = option(args, "--runs", 10)
    let caseFilter = textOption(args, "--case")
    var rng = BenchRandom(seed: 0x5eed)
    // (name, in channels, expanded, out channels, stride, side)
    let cases = [("TinyViT MBConv, 64 -> 256 -> 64 at 256x256", 64, 256, 64, 1, 256),
                 ("TinyViT PatchMerging, 64 -> 128 -> 128, stride 2 at 256x256", 64, 128, 128, 2, 256),
                 ("TinyViT PatchMerging, 128 -> 160 -> 160, stride 2 at 128x128", 128, 160, 160, 2, 128),
                 ("TinyViT PatchMerging, 160 -> 320 -> 320 at 64x64", 160, 320, 320, 1, 64),
                 ("EfficientViT-SAM L0 stage 3 downsample, 128 -> 2048 -> 256, stride 2 at 64x64", 128, 2048, 256, 2, 64),
                 ("EfficientViT-SAM L0 stage 3, 256 -> 1024 -> 256 at 32x32", 256, 1024, 256, 1, 32),
                 ("EfficientViT-SAM L0 stage 4 downsample, 256 -> 6144 -> 512, stride 2 at 32x32", 256, 6144, 512, 2, 32),
                 ("EfficientViT-SAM L0 stage 4, 512 -> 3072 -> 512 at 16x16", 512, 3072, 512, 1, 16),
                 ("EfficientViT-SAM XL0 stage 4 downsample, 256 -> 4096 -> 512, stride 2 at 64x64", 256, 4096, 512, 2, 64)]
    var results: [[String: Any]] = []
    for (name, inChannels, expanded, outChannels, stride, side) in cases where caseFilter.map({ name.contains($0) }) ?? true {
        let x = rng.tensor([1, inChannels, side, side])
        let weights = Kernels.InvertedResidualWeights(
            expandWeight: rng.tensor([expanded, inChannels, 1, 1], scale: 0.05), expandBias: rng.tensor([expanded]),
            depthwiseWeight: rng.tensor([expanded, 1, 3, 3], scale: 0.2), depthwiseBias: rng.tensor([expanded]),
            projectWeight: rng.tensor([outChannels, expanded, 1, 1], scale: 0.05), projectBias: rng.tensor([outChannels]))
        let outSide = (side - 1) / stride + 1
        let residual = stride == 1 && inChannels == outChannels ? x : rng.tensor([1, outChannels, outSide, outSide])
        // nil: the three convolutions apart.
        let ways: [(label: String, choice: Kernels.InvertedResidualSchedule?)] =
            [("rows_ms", .rows), ("channel_blocks_ms", .channelBlocks), ("separate_ms", nil)]
        var result = alternating(name, runs: runs, ways) { schedule in
            if let schedule {
                _ = Kernels.invertedResidual(x, weights: weights, stride: stride, activation: .geluTanh,
                                             epilogue: Kernels.Epilogue(residual: residual), schedule: schedule)
            } else {
                var y = Kernels.conv2d(x, weight: weights.expandWeight, bias: weights.expandBias, epilogue: .geluTanh)
                y = Kernels.conv2d(y, weight: weights.depthwiseWeight, bias: weights.depthwiseBias, stride: stride, padding: 1,
                                   groups: expanded, epilogue: .geluTanh)
                _ = Kernels.conv2d(y, weight: weights.projectWeight, bias: weights.projectBias,
                                   epilogue: Kernels.Epilogue(residual: residual))
            }
        }
        let multiplyAdds = side * side * inChannels * expanded + outSide * outSide * expanded * (9 + outChannels)
        result["gflop"] = 2.0 * Double(multiplyAdds) / 1e9
        results.append(result)
    }
    emit(["mode": "inverted-residual", "runs": runs, "threads": threads, "cases": results])

case "linear":
    // Kernels.linear alone (median ms per call, GFLOP/s) on the decoder's per-prompt products over its
    // 4096 image tokens (q/k/v projections 256 -> 128, out_proj 128 -> 256 plus the residual), the
    // mask head's first transposed convolution as a product, and over its 22 or 106 prompt tokens
    // (the MLP, the projections); SAM ViT-B's qkv and MLP products over its 4096 tokens (the panel
    // product's share of the FMA ceiling on the encoders' largest products).
    let runs = option(args, "--runs", 20)
    let caseFilter = textOption(args, "--case")
    var rng = BenchRandom(seed: 0x5eed)
    // (name, rows, in, out, residual)
    let cases = [("decoder projection, 4096 x 256 -> 128", 4096, 256, 128, false),
                 ("decoder out_proj, 4096 x 128 -> 256 + residual", 4096, 128, 256, true),
                 ("decoder out_proj, 4096 x 128 -> 256", 4096, 128, 256, false),
                 ("mask head first product, 4096 x 256 -> 256", 4096, 256, 256, false),
                 ("decoder MLP lin1, 22 x 256 -> 2048", 22, 256, 2048, false),
                 ("decoder MLP lin1, 106 x 256 -> 2048", 106, 256, 2048, false),
                 ("decoder MLP lin2, 106 x 2048 -> 256 + residual", 106, 2048, 256, true),
                 ("decoder token projection, 22 x 256 -> 128", 22, 256, 128, false),
                 ("decoder token projection, 106 x 256 -> 128", 106, 256, 128, false),
                 ("decoder token out_proj, 106 x 128 -> 256 + residual", 106, 128, 256, true),
                 ("TinyViT stage 1 qkv, 16384 x 128 -> 384", 16384, 128, 384, false),
                 ("TinyViT stage 1 MLP fc2, 16384 x 512 -> 128 + residual", 16384, 512, 128, true),
                 ("TinyViT stage 2 qkv, 4096 x 160 -> 480", 4096, 160, 480, false),
                 ("TinyViT stage 2 MLP fc1, 4096 x 160 -> 640", 4096, 160, 640, false),
                 ("TinyViT stage 3 MLP fc1, 4096 x 320 -> 1280", 4096, 320, 1280, false),
                 ("SAM ViT-B qkv, 4096 x 768 -> 2304", 4096, 768, 2304, false),
                 ("SAM ViT-B MLP lin1, 4096 x 768 -> 3072", 4096, 768, 3072, false),
                 ("SAM ViT-B MLP lin2, 4096 x 3072 -> 768 + residual", 4096, 3072, 768, true)]
    var results: [[String: Any]] = []
    for (name, rows, inFeatures, outFeatures, withResidual) in cases where caseFilter.map({ name.contains($0) }) ?? true {
        let x = rng.tensor([1, rows, inFeatures]), weight = rng.tensor([outFeatures, inFeatures], scale: 0.05)
        let bias = rng.tensor([outFeatures]), residual = withResidual ? rng.tensor([1, rows, outFeatures]) : nil
        let times = timedRuns(runs) {
            _ = Kernels.linear(x, weight: weight, bias: bias, epilogue: Kernels.Epilogue(residual: residual))
        }
        let gflop = 2.0 * Double(rows * inFeatures * outFeatures) / 1e9
        results.append(["case": name, "ms": median(times) * 1000, "gflop": gflop, "gflops": gflop / median(times)])
    }
    emit(["mode": "linear", "runs": runs, "threads": threads, "cases": results])

case "load":
    // Model load alone, repeated in one process (for profiling what a load costs).
    guard args.count >= 2 else { fail("load needs MODEL.samw") }
    let runs = option(args, "--runs", 10)
    let verifying = !args.contains("--skip-checksums")  // the CRC-32 check's share of a load
    var times: [Double] = []
    for _ in 0..<runs {
        let t0 = now()
        let loaded: LoadedModel
        do { loaded = try ModelFile.load(args[1], verifyingChecksums: verifying) } catch { fail("\(args[1]): \(error)") }
        times.append(now() - t0)
        // Released after the clock stops: unmapping the file is not part of a load.
        withExtendedLifetime(loaded) {}
    }
    emit(["mode": "load", "checksums": verifying, "runs": times, "median_s": median(times)])

case "profile-decoder":
    // Where one decoder call's time goes, per module (observed, so kernels run unfused), for
    // the full-size set's point1 / points16 / points100 cases, on the reference embeddings.
    guard args.count >= 3 else { fail("profile-decoder needs MODEL.samw DROP_DIR") }
    let runs = option(args, "--runs", 10), depth = option(args, "--depth", 3)
    let sam: Sam
    do { sam = try ModelFile.load(args[1]).sam } catch { fail("\(args[1]): \(error)") }
    let refs = args[2] + "/references"
    let embeddings = load(refs + "/image_embeddings.npy")
    for name in ["point1", "points16", "points100"] {
        let prompt = DecoderCase(refs: refs, name: name)
        let profile = ModuleProfile(depth: depth)
        for run in 0...runs {  // run 0 is a warm-up, not recorded
            let recorder = run == 0 ? ModuleProfile(depth: depth) : profile
            recorder.start()
            do {
                _ = try sam.decode(imageEmbeddings: embeddings, points: prompt.points, labels: prompt.labels,
                                   appendPaddingPoint: prompt.padded, maskInput: prompt.maskInput,
                                   hasMaskInput: prompt.hasMaskInput, observer: recorder.observer)
            } catch { fail("decode \(name): \(error)") }
            recorder.finish()
        }
        print("\(name): \(runs) runs, times summed\n" + profile.table(top: 25))
    }

case "profile-encoder":
    // Where a warm image-encoder call's time goes, on the full-size set's input image. Unlike
    // `samrun --profile` (one cold call: first-touch page faults included) this times what
    // `run` times: calls after an untimed warm-up. By stage (patch embedding, each stage or block,
    // neck), each on the paths it runs unobserved (`StageObservation`); `--modules`: every module,
    // on the unfused paths an observer of every module's output makes them take, cut to `--depth`.
    guard args.count >= 3 else { fail("profile-encoder needs MODEL.samw DROP_DIR") }
    let modules = args.contains("--modules")
    let runs = option(args, "--runs", 3), depth = option(args, "--depth", modules ? 3 : 8)
    let sam: Sam
    do { sam = try ModelFile.load(args[1]).sam } catch { fail("\(args[1]): \(error)") }
    let image = load(args[2] + "/references/input_image.npy")
    let profile = ModuleProfile(depth: depth)
    for run in 0...runs {  // run 0 is a warm-up, not recorded
        let recorder = run == 0 ? ModuleProfile(depth: depth) : profile
        recorder.start()
        StageObservation.$isOn.withValue(!modules) {
            do { _ = try sam.encodeImage(image, observer: recorder.observer) } catch { fail("encodeImage: \(error)") }
        }
        recorder.finish()
    }
    let scope = modules ? "every module, unfused paths" : "by stage, the paths it runs unobserved"
    print("image encoder (\(scope)): \(runs) runs, times summed\n" + profile.table(top: option(args, "--top", 40)))

case "run":
    guard args.count >= 3 else { fail("run needs MODEL.samw DROP_DIR") }
    let modelPath = args[1], drop = args[2]
    let encoderRuns = option(args, "--encoder-runs", 1), decoderRuns = option(args, "--decoder-runs", 5)
    let refs = drop + "/references"

    let t0 = now()
    let loaded: LoadedModel
    do { loaded = try ModelFile.load(modelPath) } catch { fail("\(modelPath): \(error)") }
    let loadSeconds = now() - t0
    let sam = loaded.sam

    let image = load(refs + "/input_image.npy")
    var embeddings = FloatTensor(zeros: [1])
    var encoderTimes: [Double] = []
    for run in 0...encoderRuns {  // run 0 is a warm-up
        let s = now()
        do { embeddings = try sam.encodeImage(image) } catch { fail("encodeImage: \(error)") }
        if run > 0 { encoderTimes.append(now() - s) }
    }

    // The decoder's prompt-independent work, once per image as SegmentAnything.setImage does it.
    var stateTimes: [Double] = []
    var imageState: DecoderImageState? = nil
    for run in 0...decoderRuns {  // run 0 is a warm-up
        let s = now()
        do { imageState = try sam.decoderImageState(features: ImageFeatures(embedding: embeddings)) } catch { fail("decoder image state: \(error)") }
        if run > 0 { stateTimes.append(now() - s) }
    }
    guard let imageState else { fail("no decoder image state") }

    let post = MaskPostprocessor(imageSize: 1024)
    var decoder: [String: Any] = [:]
    var maskCount = 0
    for (name, n) in [("point1", 1), ("points16", 16), ("points100", 100)] {
        let prompt = DecoderCase(refs: refs, name: name)
        var times: [Double] = [], decodeOnly: [Double] = []
        for run in 0...decoderRuns {  // run 0 is a warm-up
            let s = now()
            let out: MaskPrediction
            do {
                out = try prompt.decode(sam, imageState: imageState)
            } catch { fail("decode \(name): \(error)") }
            let d = now()
            // The full-size set's official decoder (return_single_mask=False) upscales all four masks: so does this.
            do {
                let up = try post.upscale(out.masks, inputSize: DecoderCase.inputSize, originalSize: DecoderCase.originalSize)
                maskCount = up.shape[1]
                precondition(up.shape == [1, 4, 1365, 2048], "upscaled \(up.shape)")
            } catch { fail("upscale \(name): \(error)") }
            if run > 0 { times.append(now() - s); decodeOnly.append(d - s) }
        }
        decoder["\(n)"] = ["runs": times, "median_s": median(times), "decode_only_median_s": median(decodeOnly),
                           "points": n]
    }
    emit(["mode": "native", "load_s": loadSeconds, "encoder_runs": encoderTimes, "encoder_median_s": median(encoderTimes),
          "decoder": decoder, "decoder_image_state_median_s": median(stateTimes), "upscaled_masks": maskCount, "input_size": [DecoderCase.inputSize.height, DecoderCase.inputSize.width],
          "blas": BLAS.backendDescription, "linear_kernel": Kernels.float32LinearKernel.rawValue, "threads": threads,
          "kernel_workers": Kernels.workerCount, "openblas_coretype_env": ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] ?? NSNull(),
          "peak_rss_kib": peakRSSKiB()])

case "decode":
    guard args.count >= 4 else { fail("decode needs MODEL.samw DROP_DIR CASE") }
    let sam: Sam
    do { sam = try ModelFile.load(args[1]).sam } catch { fail("\(args[1]): \(error)") }
    let refs = args[2] + "/references", name = args[3]
    let prompt = DecoderCase(refs: refs, name: name)
    let post = MaskPostprocessor(imageSize: 1024)
    var decodeTimes: [Double] = [], upscaleTimes: [Double] = []
    do {
        let imageState = try sam.decoderImageState(features: ImageFeatures(embedding: load(refs + "/image_embeddings.npy")))
        for run in 0...option(args, "--runs", 50) {  // run 0 is a warm-up
            let s = now()
            let out = try prompt.decode(sam, imageState: imageState)
            let d = now()
            _ = try post.upscale(out.masks, inputSize: DecoderCase.inputSize, originalSize: DecoderCase.originalSize)
            if run > 0 { decodeTimes.append(d - s); upscaleTimes.append(now() - d) }
        }
    } catch { fail("decode \(name): \(error)") }
    emit(["mode": "decode", "case": name, "decode_median_ms": median(decodeTimes) * 1000,
          "upscale_median_ms": median(upscaleTimes) * 1000])

case "encoder":
    // The image encoder alone (every output it hands the decoder), on IMAGE.npy or a set's input image.
    guard args.count >= 3 else { fail("encoder needs MODEL.samw IMAGE.npy|SET_DIR") }
    let runs = option(args, "--runs", 1), warmups = option(args, "--warmups", 1)
    let t0 = now()
    let loaded: LoadedModel
    do { loaded = try ModelFile.load(args[1]) } catch { fail("\(args[1]): \(error)") }
    let loadSeconds = now() - t0
    var isFolder: ObjCBool = false
    _ = FileManager.default.fileExists(atPath: args[2], isDirectory: &isFolder)
    let image = load(isFolder.boolValue ? args[2] + "/references/input_image.npy" : args[2])
    var times: [Double] = []
    for run in 0..<(warmups + runs) {  // the first `warmups` runs are not timed
        let s = now()
        do { _ = try loaded.sam.encodeFeatures(image) } catch { fail("encodeFeatures: \(error)") }
        if run >= warmups { times.append(now() - s) }
    }
    emit(["mode": "encoder", "load_s": loadSeconds, "encoder_runs": times, "encoder_median_s": median(times),
          "family": loaded.metadata.config.imageEncoder.family, "blas": BLAS.backendDescription,
          "linear_kernel": Kernels.float32LinearKernel.rawValue, "threads": threads,
          "weight_dtype": loaded.metadata.weightDType, "int8_products": Kernels.int8Products,
          "kernel_workers": Kernels.workerCount, "peak_rss_kib": peakRSSKiB()])

case "cancel-encode":
    // How soon a cancelled `Segmenter.encode` gives up: an encode of a 1024x768 photo started in a task,
    // cancelled after 10%, 50% and 90% of an uncancelled encode's time, timed from `cancel()` to the
    // task's end (CancellationError).
    guard args.count >= 2 else { fail("cancel-encode needs MODEL.samw") }
    let runs = option(args, "--runs", 5)
    let loaded: LoadedModel
    do { loaded = try ModelFile.load(args[1]) } catch { fail("\(args[1]): \(error)") }
    let segmenter = Segmenter(model: loaded)
    var rng = BenchRandom(seed: 0x5eed)
    let pixels = rng.tensor([1024 * 768 * 3]).data.map { UInt8(truncatingIfNeeded: Int(($0 + 4) * 32)) }
    let photo: RGBImage
    do { photo = try RGBImage(width: 1024, height: 768, pixels: pixels) } catch { fail("photo: \(error)") }
    /// One encode in a task, cancelled `after` seconds from its start (nil: never): its outcome and the
    /// seconds from the cancel to the task's end (from the start when not cancelled).
    func encodeInTask(cancellingAfter after: Double?) -> (cancelled: Bool, seconds: Double) {
        final class Outcome: @unchecked Sendable {  // written by the task before `done` is signalled
            var end = 0.0
            var cancelled = false
        }
        let outcome = Outcome(), done = DispatchSemaphore(value: 0)
        let started = now()
        let task = Task.detached {
            do { _ = try await segmenter.encode(photo) } catch { outcome.cancelled = error is CancellationError }
            outcome.end = now()
            done.signal()
        }
        var cancelledAt = started
        if let after {
            usleep(UInt32(after * 1e6))
            cancelledAt = now()
            task.cancel()
        }
        done.wait()
        return (outcome.cancelled, outcome.end - cancelledAt)
    }
    _ = encodeInTask(cancellingAfter: nil)  // warm-up
    let whole = median((0..<runs).map { _ in encodeInTask(cancellingAfter: nil).seconds })
    var points: [[String: Any]] = []
    for share in [0.1, 0.5, 0.9] {
        let outcomes = (0..<runs).map { _ in encodeInTask(cancellingAfter: share * whole) }
        let latencies = outcomes.filter(\.cancelled).map(\.seconds)
        points.append(["cancelled_after_share": share, "cancelled_runs": latencies.count, "runs": runs,
                       "latency_ms_median": latencies.isEmpty ? NSNull() : median(latencies) * 1000,
                       "latency_ms_max": latencies.max().map { $0 * 1000 } ?? NSNull()])
    }
    emit(["mode": "cancel-encode", "encode_ms_median": whole * 1000, "threads": threads,
          "family": loaded.metadata.config.imageEncoder.family, "points": points])

default:
    fail("unknown mode \(mode)")
}

import ArgumentParser
import Foundation
import SAMCommandLine
import SAMFiles
import SAMFormats
import SAMImage
import SAMImageFiles
import SAMKernels
import SAMModel
import SAMPipeline
import SAMTensor

/// `samrun MODEL.samw IMAGE [--point X,Y[,LABEL]]... [--box X0,Y0,X1,Y1] [--mask-input FILE.npy]
/// [--embeddings FILE.npy] [--out DIR]`: one photo and prompt in, masks out.
@main
struct SamRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samrun",
        abstract: "Segment an image from point and box prompts with a .samw model.",
        discussion: """
        Coordinates are original-image pixels (negative ones may be typed as --point -5,10 or --point=-5,10; \
        points outside the image are refused). LABEL is 1 (foreground, the default) or 0 (background).
        Writes to --out: image_embeddings.npy [1,C,g,g] (SAM 2: image_embed.npy, high_res_feats_0.npy and \
        high_res_feats_1.npy) and image_embeddings.json (image_embed.json; the image size, input size and model \
        they were computed from, and the SHA-256 of every feature map), low_res_masks.npy (all four logits), iou_predictions.npy [1,4], \
        mask_<i>.png for each selected mask at the image's size, overlay.png (the best mask tinted, prompts drawn) \
        and result.json (scores, sizes, seconds per stage). The files are staged and put in place together: the \
        folder never mixes two runs; SIGINT or SIGTERM removes the staged files. A directory, link, device or FIFO at one of those names, or an input there, \
        is refused and left as it is.
        --embeddings reuses image_embeddings.npy (SAM 2: image_embed.npy, with the high_res_feats_*.npy beside \
        it) from an earlier run and skips the encoder; it must have been computed by this model from an image of \
        this size, and every map must be the one its .json record names by digest, unless --force.
        --everything segments everything (upstream's automatic mask generator) on IMAGE, writing masks.json and \
        overlay.png; with --images DIR_OR_LIST instead of IMAGE it writes one <stem>.json per image, skips images \
        whose JSON exists (a stopped run resumes), runs one --shard I/N of the sorted list, and --coco FILE merges \
        every image's JSON into one COCO instances file (docs/everything.md).
        Exit status: 0 success; 2 bad input or usage (every input is checked before anything is written).
        """)

    /// More --point options than this are refused before the argument parser sees them (it takes time
    /// quadratic in their number); no model accepts as many.
    static let maxPointOptions = 1024

    @Argument(help: "The .samw model.") var model: String
    @Argument(help: "The image (PNG or JPEG).") var image: String?
    @Option(name: .customLong("point"), parsing: .unconditionalSingleValue, help: "A point X,Y or X,Y,LABEL (repeatable).")
    var points: [String] = []
    @Option(parsing: .unconditionalSingleValue, help: "A box X0,Y0,X1,Y1 (at most one).") var box: [String] = []
    @Option(name: .customLong("mask-input"), help: "Low-res mask logits [1,1,4g,4g] (.npy) from an earlier run.") var maskInput: String?
    @Option(help: "Cached image embeddings (.npy) of this image, from an earlier run with this model.") var embeddings: String?
    @Flag(help: "Use --embeddings even when their record says another image size or model, or is missing.")
    var force = false
    @Option(help: "Masks to return: multimask (1-3), all (0-3) or single (SAM: the official ONNX rule; SAM 2: mask 0 unless unstable).")
    var masks: String = "multimask"
    @Option(name: .customLong("predictor-option"),
            help: "A switch of the model family's predictor, by upstream's argument name (repeatable; SAM-HQ: hq_token_only).")
    var predictorOptions: [String] = []
    @Flag(name: .customLong("hq-token-only"), help: "SAM-HQ: the HQ token's mask alone (upstream's hq_token_only=True); as --predictor-option hq_token_only.")
    var hqTokenOnly = false
    @Option(name: .customLong("max-pixels"), help: "Largest image (width x height) to decode; larger ones are refused from the header.")
    var maxPixels: Int = ImageLimits.default.maxPixels
    @Option(help: "Output folder.") var out: String = "samrun-out"
    @Flag(name: .customLong("skip-checksums"), help: "Do not verify the model's weight checksums at load (saves about 0.5 ms per MB of weights).")
    var skipChecksums = false
    @Flag(help: "Time the image encoder per module (from the model's module observer); prints a table and adds \"profile\" to result.json.")
    var profile = false
    @Flag(name: .customLong("bf16"), help: "Run the linear layers (and SAM 2's global attention) in bfloat16 products (the opt-in lower-precision path, CPUs with AVX512_BF16); result.json records it.")
    var bfloat16 = false

    @Flag(name: .customLong("int8-products"), help: "With a model converted --dtype int8, multiply its int8 weights in int8 products (inputs rounded to int8 per row: faster, less accurate; docs/quantization.md); result.json records it.")
    var int8Products = false
    @Option(name: .customLong("profile-depth"), help: "Dot-separated path components to aggregate --profile by (5: image_encoder.layers.0.blocks.0).")
    var profileDepth: Int = 5
    @OptionGroup(title: "Segment everything") var everything: EverythingOptions

    /// Exit statuses as every tool's (`mainExitingWithToolStatus`): 2 for bad input or usage.
    static func main() {
        Kernels.restartWithStrongerBLASKernelsIfNeeded()  // before anything else: OpenBLAS reads its kernel choice as it loads
        FaultContainment.install()  // a model truncated while it is mapped exits 2 naming the file, not SIGBUS
        FaultContainment.removeTemporariesOnInterrupt()  // Ctrl-C leaves no staging folder beside --out
        let arguments = Array(CommandLine.arguments.dropFirst())
        let pointOptions = arguments.prefix { $0 != "--" }.filter { $0 == "--point" || $0.hasPrefix("--point=") }.count
        if pointOptions > maxPointOptions {
            FileHandle.standardError.write(Data("samrun: \(pointOptions) --point options; at most \(maxPointOptions) are accepted\n".utf8))
            Foundation.exit(2)
        }
        mainExitingWithToolStatus(arguments)
    }

    mutating func run() throws {
        // This process is the tool's own: BLAS on one thread, freed memory kept for reuse.
        Kernels.tuneProcessForInference()
        do {
            if bfloat16 {
                do { try Kernels.setLinearPrecision(.bfloat16) } catch { throw RunFailure("--bf16: \(error)") }
            }
            Kernels.setInt8Products(int8Products)
            if everything.everything {
                guard points.isEmpty, box.isEmpty, maskInput == nil, embeddings == nil, !profile else {
                    throw RunFailure("--everything makes its own prompts: --point, --box, --mask-input, --embeddings and --profile do not apply")
                }
                guard maxPixels >= 1 else { throw RunFailure("--max-pixels must be at least 1, not \(maxPixels)") }
                // The generator's settings are checked before the model loads (the model's family adds its own check).
                let problems = try everything.problems()
                guard problems.isEmpty else { throw RunFailure("automatic mask settings: " + problems.joined(separator: "; ")) }
                if let images = everything.images {
                    guard image == nil else {
                        throw RunFailure("--images \(images) and IMAGE \(image ?? "") exclude each other: give one photo or a dataset")
                    }
                    guard !everything.maskPNGs else { throw RunFailure("--mask-pngs writes one photo's masks; it does not apply to --images") }
                    guard everything.mode == .cocoRLE else {
                        throw RunFailure("--images writes each image's masks as COCO RLE (its JSONs merge into --coco); --output-mode \(everything.mode.rawValue) does not apply")
                    }
                    try EverythingDatasetRun(model: model, images: images, out: out, options: everything, maxPixels: maxPixels,
                                             skipChecksums: skipChecksums).run()
                } else {
                    if let option = everything.datasetOptionsGiven.first {
                        throw RunFailure("\(option) needs --images (a folder or a list of images); with one IMAGE, leave it out")
                    }
                    guard let image else { throw RunFailure("--everything needs an IMAGE, or --images DIR_OR_LIST") }
                    try EverythingRun(model: model, image: image, out: out, options: everything, maxPixels: maxPixels,
                                      skipChecksums: skipChecksums).run()
                }
            } else {
                let dataset = everything.datasetOptionsGiven
                if !dataset.isEmpty {
                    throw RunFailure(dataset.joined(separator: " and ") + (dataset.count == 1 ? " needs" : " need")
                                     + " --everything (segment everything over a dataset: --everything --images DIR_OR_LIST)")
                }
                guard !everything.anyGiven else { throw RunFailure("the automatic mask generator's options need --everything") }
                try segment()
            }
        } catch {
            // Names from the model, the image or the prompt files may be in the message: printed escaped.
            FileHandle.standardError.write(Data("samrun: \(TerminalText.escaped(String(describing: error), keepingNewlines: true))\n".utf8))
            throw ExitCode(2)
        }
    }

    private func segment() throws(RunFailure) {
        guard let image else { throw RunFailure("give an IMAGE (PNG or JPEG)") }
        // Everything the user gave is parsed and checked before the model runs or anything is written.
        guard let selection = MaskSelection(rawValue: masks) else {
            throw RunFailure("--masks must be one of \(MaskSelection.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard box.count <= 1 else {
            throw RunFailure("--box given \(box.count) times; a prompt has at most one box")
        }
        guard maxPixels >= 1 else { throw RunFailure("--max-pixels must be at least 1, not \(maxPixels)") }
        var prompt = Prompt(points: try points.map(PromptParsing.point), box: try box.first.map(PromptParsing.box))
        if let maskInput { prompt.maskInput = try RunFailure.wrap { FloatTensor(try NPY.read(maskInput)) } }
        guard profileDepth >= 1 else { throw RunFailure("--profile-depth must be at least 1") }
        let started = Date()
        let predictor = try RunFailure.wrap { try SegmentAnything(modelPath: model, verifyingChecksums: !skipChecksums) }
        predictor.predictorOptions = PredictorOptions(flags: Set(predictorOptions + (hqTokenOnly ? [SAMHQMaskDecoder.hqTokenOnly] : [])))
        if let problem = predictor.segmenter.predictorOptionsProblem { throw RunFailure("--predictor-option: \(problem)") }
        let loaded = Date()
        // The cached features: the file given, and the model's other maps beside it (SAM 2's high_res_feats_*).
        let featureFiles = embeddings.map { RunOutputs.featureFiles(given: $0, names: predictor.model.metadata.config.featureNames) }
        let cached = try featureFiles.map { files throws(RunFailure) in
            try RunFailure.wrap { try ImageFeatures(maps: files.map { FloatTensor(try NPY.read($0)) })! }
        }
        let sidecar = embeddings.map(EmbeddingsProvenance.sidecarPath(forEmbeddings:))
        let record = try sidecar.map { path throws(RunFailure) in try RunFailure.wrap { try EmbeddingsProvenance.read(sidecar: path) } } ?? nil

        // The output folder: nothing there may be a directory, link, device or one of this run's inputs.
        let inputs = [model, image] + [maskInput, sidecar].compactMap { $0 } + (featureFiles ?? [])
        let policy = OutputPolicy(existing: .replace, inputs: inputs, option: "--out")
        _ = try RunFailure.wrap { try StagedFolder.check(folder: out, ownedNames: RunOutputs.ownedNames(featureNames: predictor.model.metadata.config.featureNames), policy: policy) }

        let photo = try RunFailure.wrap { try ImageIO.read(image, limits: ImageLimits(maxPixels: maxPixels)) }
        let decodedImage = Date()
        var moduleProfile: ModuleProfile? = nil
        var profiledTimings: StageTimings? = nil
        if let cached {
            do {
                try predictor.setFeatures(cached, originalSize: photo.size, provenance: record, allowMismatch: force)
            } catch {
                if case .embeddingsMismatch(let message) = error {
                    throw RunFailure("--embeddings \(embeddings ?? ""): \(message) (record: \(sidecar ?? "")); "
                                     + "run without --embeddings to compute them, or pass --force to use them anyway")
                }
                throw RunFailure("\(error)")
            }
        } else if profile {
            // The same steps as SegmentAnything.setImage, with the encoder observed.
            let recorder = ModuleProfile(depth: profileDepth)
            let clock = ContinuousClock()
            let prepareStart = clock.now
            let prepared = try RunFailure.wrap(image: image) { try predictor.transform.prepare(photo) }
            let encodeStart = clock.now
            recorder.start()
            let encoded = try RunFailure.wrap { try predictor.model.sam.encodeFeatures(prepared.input, observer: recorder.observer) }
            recorder.finish()
            profiledTimings = StageTimings(preprocessing: encodeStart - prepareStart, imageEncoding: clock.now - encodeStart)
            if !encoded.maps.allSatisfy({ $0.data.allSatisfy(\.isFinite) }) {
                throw RunFailure("\(PipelineError.nonFinite(stage: "image_encoder", "on \(image)"))")
            }
            try RunFailure.wrap {
                let names = predictor.model.metadata.config.featureNames
                try predictor.setFeatures(encoded, originalSize: photo.size,
                                          provenance: predictor.provenance(forOriginalSize: photo.size).binding(encoded, names: names))
            }
            moduleProfile = recorder
        } else {
            try RunFailure.wrap(image: image) { try predictor.setImage(photo) }
        }
        let prediction = try RunFailure.wrap(image: image) { try predictor.predict(prompt, selection: selection) }
        // The image's stages (as profiled, or as setImage timed them; none for reused features), then the prompt's.
        let imageStages = profiledTimings ?? predictor.current?.stageTimings
        var stages = prediction.stageTimings
        stages.preprocessing = imageStages?.preprocessing
        stages.imageEncoding = imageStages?.imageEncoding
        var timings = stages.secondsByStage
        timings["load_model"] = loaded.timeIntervalSince(started)
        timings["read_image"] = decodedImage.timeIntervalSince(loaded)

        try RunOutputs(folder: out, policy: policy, predictor: predictor, photo: photo, prompt: prompt, prediction: prediction,
                       timings: timings, reusedEmbeddings: cached != nil, profile: moduleProfile?.json).write()
        print(Summary.text(prediction, folder: out, timings: timings))
        if let moduleProfile {
            print("image encoder profile (depth \(moduleProfile.depth)):\n" + moduleProfile.table())
        }
    }
}

/// A run that cannot go on; the message names the input at fault.
struct RunFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }

    /// Runs `body`, turning any error into a RunFailure with its own message.
    static func wrap<T>(_ body: () throws -> T) throws(RunFailure) -> T {
        do { return try body() } catch let failure as RunFailure { throw failure } catch { throw RunFailure("\(error)") }
    }

    /// The same for steps on the pixels of the photo read from `image`: their image errors name that file.
    static func wrap<T>(image: String, _ body: () throws -> T) throws(RunFailure) -> T {
        do { return try body() } catch let error as ImageError {
            throw RunFailure("\(error.attributed(to: image))")
        } catch PipelineError.image(let error) {
            throw RunFailure("\(error.attributed(to: image))")
        } catch let failure as RunFailure { throw failure } catch { throw RunFailure("\(error)") }
    }
}

enum Summary {
    static func text(_ prediction: Prediction, folder: String, timings: [String: Double]) -> String {
        let scores = zip(prediction.selected, prediction.scores).map { "mask \($0): \(String(format: "%.4f", $1))" }
        let stages = timings.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.3f", $0.value)) s" }
        return "wrote \(folder): best mask \(prediction.best); " + scores.joined(separator: ", ") + "\n  " + stages.joined(separator: ", ")
    }
}

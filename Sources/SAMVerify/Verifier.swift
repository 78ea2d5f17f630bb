import Foundation
import SAMFormats
import SAMModel
import SAMModelFile
import SAMTensor

/// What to verify and how strictly.
public struct VerifyOptions: Sendable, Equatable {
    /// Case names to run (`image_encoder` or a decoder case); empty runs every case.
    public var cases: [String]
    /// Command-line tolerances: they override the manifest's and the defaults.
    public var atol: Double?
    public var rtol: Double?
    /// The largest tolerances a reference set's manifest may ask for: a check whose manifest tolerance
    /// is looser is bad input, so the set under test cannot lower its own bar.
    public var maxAtol: Double?
    public var maxRtol: Double?
    /// Re-run a failing case's dumped run module by module to name its first diverging module.
    public var locateDivergence: Bool

    public init(cases: [String] = [], atol: Double? = nil, rtol: Double? = nil, maxAtol: Double? = nil, maxRtol: Double? = nil,
                locateDivergence: Bool = true) {
        self.cases = cases
        self.atol = atol
        self.rtol = rtol
        self.maxAtol = maxAtol
        self.maxRtol = maxRtol
        self.locateDivergence = locateDivergence
    }

    func validate() throws(VerifyError) {
        for (name, value) in [("--atol", atol), ("--rtol", rtol), ("--max-atol", maxAtol), ("--max-rtol", maxRtol)] {
            if let value, !(value.isFinite && value >= 0) {
                throw VerifyError(.usage, "\(name) must be a finite number >= 0, not \(value)")
            }
        }
        if let atol, let maxAtol, atol > maxAtol {
            throw VerifyError(.usage, "--atol \(formatFigure(atol)) is more than --max-atol \(formatFigure(maxAtol))")
        }
        if let rtol, let maxRtol, rtol > maxRtol {
            throw VerifyError(.usage, "--rtol \(formatFigure(rtol)) is more than --max-rtol \(formatFigure(maxRtol))")
        }
    }
}

/// Runs the native model on a reference set's inputs and compares every output with PyTorch's.
///
/// The image encoder is a case of its own (`references/input_image.npy` -> `image_embeddings.npy`),
/// run once. Decoder cases take the reference `image_embeddings.npy` as input, so they check the prompt
/// encoder and mask decoder alone: the official path (`onnx_*`: all four low-res masks and IoU scores)
/// and, where the case has `split_*` files, the split path (sparse embeddings, masks, IoU scores).
public enum Verifier {
    public static let version = "0.1.0"

    /// Loads `modelPath` (.samw) and the reference set at `referencesPath`, then verifies.
    /// Throws (exit 2) when the model or the set cannot be used at all; per-case problems are reported.
    public static func verify(modelPath: String, referencesPath: String, options: VerifyOptions = VerifyOptions(),
                              progress: (String) -> Void = { _ in }) throws(VerifyError) -> VerificationReport {
        try options.validate()
        guard FileManager.default.fileExists(atPath: modelPath) else {
            throw VerifyError(.missingModel, "model: \(modelPath) does not exist")
        }
        let references = try ReferenceSet.open(referencesPath)
        let loaded: LoadedModel
        do { loaded = try ModelFile.load(modelPath) } catch {
            throw VerifyError(.badModel, "model: \(error)")
        }
        let summary = ModelSummary(
            path: modelPath, components: loaded.metadata.components, weightDType: loaded.metadata.weightDType,
            maskPath: loaded.sam.promptEncoder?.maskDownscaling != nil,
            densePositionalEncoding: loaded.metadata.densePositionalEncoding != nil ? "stored in the model file" : "computed from prompt_encoder.pe_layer")
        return try verify(sam: loaded.sam, model: summary, references: references, referencesPath: referencesPath,
                          options: options, progress: progress)
    }

    /// Verifies an already built model against an opened reference set.
    public static func verify(sam: Sam, model: ModelSummary, references: ReferenceSet, referencesPath: String? = nil,
                              options: VerifyOptions = VerifyOptions(),
                              progress: (String) -> Void = { _ in }) throws(VerifyError) -> VerificationReport {
        try options.validate()
        guard !references.cases.isEmpty else {
            throw VerifyError(.noCases, "references: \(references.root) holds no case (no references/input_image.npy and "
                              + "no references/<case>/ folder with onnx_*.npy or split_*.npy files)")
        }
        var selected = references.cases
        if !options.cases.isEmpty {
            let unknown = options.cases.filter { !references.caseNames.contains($0) }
            guard unknown.isEmpty else {
                throw VerifyError(.unknownCase, "unknown case\(unknown.count == 1 ? "" : "s") "
                                  + unknown.map { "'\($0)'" }.joined(separator: ", ")
                                  + "; this reference set has: " + references.caseNames.joined(separator: ", "))
            }
            selected = references.cases.filter { options.cases.contains($0.name) }
        }
        let runner = CaseRunner(sam: sam, references: references, options: options)
        var results: [CaseResult] = []
        for referenceCase in selected {
            progress("\(referenceCase.name): running")
            let result = runner.run(referenceCase)
            progress("\(referenceCase.name): \(result.status.rawValue)")
            results.append(result)
        }
        let summary = ReferenceSummary(given: referencesPath ?? references.root, root: references.root,
                                       layout: references.layoutDescription, manifest: references.manifest != nil,
                                       cases: references.caseNames)
        var report = VerificationReport(model: model, references: summary,
                                        commandLine: ToleranceOverride(atol: options.atol, rtol: options.rtol), cases: results,
                                        manifestTolerances: references.manifestTolerances,
                                        limits: ToleranceOverride(atol: options.maxAtol, rtol: options.maxRtol))
        report.decoderInputs = runner.decoderInputsNote
        return report
    }
}

/// Runs one case at a time; the reference image embeddings are read once, for every decoder case.
final class CaseRunner {
    let sam: Sam
    let references: ReferenceSet
    let options: VerifyOptions
    /// The reference image features every decoder case takes (SAM's `image_embeddings.npy`; SAM 2's
    /// `image_embed.npy` and `high_res_feats_*.npy`), read once.
    private(set) lazy var imageFeatures: Result<ImageFeatures, InputProblem> = loadImageFeatures()
    private var imageEmbeddings: Result<FloatTensor, InputProblem> { imageFeatures.map(\.embedding) }

    init(sam: Sam, references: ReferenceSet, options: VerifyOptions) {
        self.sam = sam
        self.references = references
        self.options = options
    }

    struct InputProblem: Error {
        let message: String
    }

    /// The expected outputs of each path: (reported name, reference file base name). The encoder's
    /// are its configuration's feature names (SAM: image_embeddings).
    var encoderOutputs: [(String, String)] { sam.config.imageEncoder.featureNames.map { ($0, $0) } }
    static let officialOutputs = [("low_res_masks", "onnx_low_res_masks"), ("iou_predictions", "onnx_iou_predictions")]
    /// SAM 2's decoder also predicts whether the object is there.
    static let objectScoreOutput = ("object_score_logits", "onnx_object_score_logits")
    static let splitOutputs = [("split_sparse_embeddings", "split_sparse_embeddings"), ("split_masks", "split_masks"),
                               ("split_iou_predictions", "split_iou_predictions")]

    func run(_ referenceCase: ReferenceCase) -> CaseResult {
        let started = ContinuousClock.now
        var result = CaseResult(name: referenceCase.name, kind: referenceCase.kind, status: .pass, inputs: [], outputs: [],
                                seconds: 0)
        if let problem = referenceCase.problem {
            result.outputs = [placeholder(referenceCase, status: .badInput, problem: problem)]
        } else if referenceCase.kind == .imageEncoder {
            runEncoder(referenceCase, into: &result)
        } else {
            runDecoder(referenceCase, into: &result)
        }
        result.status = CaseResult.aggregate(result.outputs)
        if result.outputs.contains(where: { $0.status == .fail }) && options.locateDivergence {
            result.divergence = locateDivergence(referenceCase, failedPaths: Set(result.outputs.filter { $0.status == .fail }.map(\.path)))
        }
        result.seconds = seconds(since: started)
        return result
    }

    // MARK: - The image encoder

    func runEncoder(_ referenceCase: ReferenceCase, into result: inout CaseResult) {
        let inputFile = referenceCase.file("input_image")
        result.inputs = [inputFile]
        let outputs = encoderOutputs
        guard sam.imageEncoder != nil else {
            result.note = "the model has no image_encoder"
            result.outputs = outputs.map { check(referenceCase, $0, "image_encoder", status: .notApplicable, problem: result.note) }
            return
        }
        let image: FloatTensor
        let side = sam.config.imageEncoder.imageSize
        switch loadInput(inputFile).flatMap({ tensor in
            Self.shape(tensor, of: inputFile, is: [1, 3, side, side]).map { tensor }
        }) {
        case .failure(let problem):
            result.outputs = outputs.map { check(referenceCase, $0, "image_encoder", status: .badInput, problem: problem.message) }
            return
        case .success(let tensor): image = tensor
        }
        let started = ContinuousClock.now
        let features: Result<ImageFeatures, RunError>
        do { features = .success(try sam.encodeFeatures(image)) } catch { features = .failure(RunError(error)) }
        let elapsed = seconds(since: started)
        result.outputs = outputs.enumerated().map { index, output in
            compare(features.map { $0.maps[index] }, referenceCase, output, path: "image_encoder", seconds: elapsed)
        }
    }

    // MARK: - Decoder cases

    struct OfficialInputs {
        var points: FloatTensor
        var labels: FloatTensor
        var appendPaddingPoint: Bool
        var maskInput: FloatTensor?
        var hasMaskInput: Float
    }

    func runDecoder(_ referenceCase: ReferenceCase, into result: inout CaseResult) {
        var inputs = featureFiles
        var outputs: [OutputCheck] = []
        let hasOfficial = referenceCase.has("onnx_point_coords")
        let hasSplit = referenceCase.has("split_points")
        if hasOfficial {
            inputs += ["onnx_point_coords", "onnx_point_labels", "onnx_mask_input", "onnx_has_mask_input"]
                .filter(referenceCase.has).map(referenceCase.file)
            outputs += runOfficial(referenceCase)
            if referenceCase.has(Self.multimaskFlag) {
                inputs.append(referenceCase.file(Self.multimaskFlag))
                outputs += runPredictorSelection(referenceCase)
            }
        }
        if hasSplit {
            inputs += ["split_points", "split_labels"].filter(referenceCase.has).map(referenceCase.file)
            outputs += runSplit(referenceCase)
        }
        if !hasOfficial && !hasSplit {
            outputs = [placeholder(referenceCase, status: .badInput,
                                   problem: "\(referenceCase.folder)/ has neither onnx_point_coords.npy nor split_points.npy")]
        }
        if outputs.allSatisfy({ $0.status == .notApplicable }) { result.note = outputs.first?.problem }
        result.inputs = inputs
        result.outputs = outputs
    }

    /// The official decoder inputs of a case, or why they cannot be used (bad input) or run (not applicable).
    func officialInputs(_ referenceCase: ReferenceCase) -> Result<OfficialInputs, OfficialProblem> {
        guard sam.promptEncoder != nil, sam.maskDecoder != nil else {
            return .failure(.notApplicable("the model has no prompt_encoder and mask_decoder"))
        }
        do throws(InputProblem) {
            var points = try loadInput(referenceCase.file("onnx_point_coords")).get()
            var labels = try require(referenceCase, "onnx_point_labels")
            try Self.checkPrompt(points: points, pointsFile: referenceCase.file("onnx_point_coords"),
                                 labels: labels, labelsFile: referenceCase.file("onnx_point_labels"))
            var hasMaskInput: Float = 0
            if referenceCase.has("onnx_has_mask_input") {
                let flag = try loadInput(referenceCase.file("onnx_has_mask_input")).get()
                guard flag.count == 1 else {
                    throw InputProblem(message: "input \(referenceCase.file("onnx_has_mask_input")) has shape \(Shape.text(flag.shape)), expected [1]")
                }
                guard flag.data[0] == 0 || flag.data[0] == 1 else {
                    throw InputProblem(message: "input \(referenceCase.file("onnx_has_mask_input")) is \(flag.data[0]), expected 0 or 1")
                }
                hasMaskInput = flag.data[0]
            }
            var maskInput: FloatTensor?
            if referenceCase.has("onnx_mask_input") {
                let side = 4 * sam.config.promptEncoder.imageEmbeddingSize
                let file = referenceCase.file("onnx_mask_input")
                maskInput = try loadInput(file).flatMap { tensor in Self.shape(tensor, of: file, is: [1, 1, side, side]).map { tensor } }.get()
            } else if hasMaskInput != 0 {
                throw InputProblem(message: "onnx_has_mask_input is \(hasMaskInput) but \(referenceCase.file("onnx_mask_input")) is missing")
            }
            if hasMaskInput != 0, sam.promptEncoder?.maskDownscaling == nil {
                return .failure(.notApplicable("the model has no mask path (no prompt_encoder.mask_downscaling weights) and this case "
                                               + "feeds a mask input (onnx_has_mask_input = \(formatFigure(Double(hasMaskInput))))"))
            }
            let padded = Sam.removeOfficialPaddingPoint(points: &points, labels: &labels)
            return .success(OfficialInputs(points: points, labels: labels, appendPaddingPoint: padded, maskInput: maskInput,
                                           hasMaskInput: hasMaskInput))
        } catch {
            return .failure(.badInput(error.message))
        }
    }

    enum OfficialProblem: Error {
        case badInput(String)
        case notApplicable(String)
    }

    func runOfficialModel(_ inputs: OfficialInputs, features: ImageFeatures,
                          observer: ModuleObserver? = nil) throws(SamError) -> MaskPrediction {
        try sam.decode(features: features, points: inputs.points, labels: inputs.labels,
                       appendPaddingPoint: inputs.appendPaddingPoint, maskInput: inputs.maskInput,
                       hasMaskInput: inputs.hasMaskInput, observer: observer)
    }

    func runOfficial(_ referenceCase: ReferenceCase) -> [OutputCheck] {
        // Every output of the path is expected; one without its reference file is reported (compare).
        let outputs = Self.officialOutputs + (decodesObjectScores ? [Self.objectScoreOutput] : [])
        let inputs: OfficialInputs, features: ImageFeatures
        switch officialInputs(referenceCase) {
        case .failure(.notApplicable(let reason)):
            return outputs.map { check(referenceCase, $0, "official", status: .notApplicable, problem: reason) }
        case .failure(.badInput(let problem)):
            return outputs.map { check(referenceCase, $0, "official", status: .badInput, problem: problem) }
        case .success(let value): inputs = value
        }
        switch imageFeatures {
        case .failure(let problem):
            return outputs.map { check(referenceCase, $0, "official", status: .badInput, problem: problem.message) }
        case .success(let value): features = value
        }
        let started = ContinuousClock.now
        let run: Result<MaskPrediction, RunError>
        do { run = .success(try runOfficialModel(inputs, features: features)) } catch { run = .failure(RunError(error)) }
        let elapsed = seconds(since: started)
        return outputs.map { output in
            compare(run.map { prediction in
                switch output.0 {
                case "low_res_masks": prediction.masks
                case "iou_predictions": prediction.iou
                default: prediction.objectScoreLogits ?? FloatTensor(zeros: [0])
                }
            }, referenceCase, output, path: "official", seconds: elapsed)
        }
    }

    func runSplit(_ referenceCase: ReferenceCase) -> [OutputCheck] {
        let outputs = Self.splitOutputs
        guard let promptEncoder = sam.promptEncoder, let maskDecoder = sam.maskDecoder else {
            return outputs.map { check(referenceCase, $0, "split", status: .notApplicable,
                                       problem: "the model has no prompt_encoder and mask_decoder") }
        }
        let points: FloatTensor, labels: FloatTensor, embeddings: FloatTensor
        do throws(InputProblem) {
            points = try loadInput(referenceCase.file("split_points")).get()
            labels = try require(referenceCase, "split_labels")
            try Self.checkPrompt(points: points, pointsFile: referenceCase.file("split_points"),
                                 labels: labels, labelsFile: referenceCase.file("split_labels"))
            embeddings = try imageEmbeddings.get()
        } catch {
            return outputs.map { check(referenceCase, $0, "split", status: .badInput, problem: error.message) }
        }
        let started = ContinuousClock.now
        let run: Result<[String: FloatTensor], RunError>
        do {
            let sparse = try promptEncoder.embedPoints(coords: points, labels: labels)
            let dense = try promptEncoder.denseEmbedding(maskInput: nil, hasMaskInput: 0)
            let prediction = try maskDecoder.predictMasks(features: ImageFeatures(embedding: embeddings),
                                                          imagePE: promptEncoder.denseImagePositionalEncoding(),
                                                          sparse: sparse, dense: dense, observer: nil)
            let (masks, iou) = (prediction.masks, prediction.iou)
            run = .success(["split_sparse_embeddings": sparse, "split_masks": masks, "split_iou_predictions": iou])
        } catch {
            run = .failure(RunError(error))
        }
        let elapsed = seconds(since: started)
        return outputs.map { output in
            compare(run.map { $0[output.0]! }, referenceCase, output, path: "split", seconds: elapsed)
        }
    }

    // MARK: - Divergence

    func locateDivergence(_ referenceCase: ReferenceCase, failedPaths: Set<String>) -> Divergence {
        let run = referenceCase.kind == .imageEncoder
            ? "image encoder on \(referenceCase.file("input_image"))"
            : "official decoder path of case \(referenceCase.name) (on the reference image embeddings)"
        if referenceCase.kind == .decoder, !failedPaths.contains("official") {
            return .unavailable(run: run, note: "only the split path failed; the module dumps are of the official path, "
                                + "which passed, so they cannot localise it")
        }
        guard let dumps = referenceCase.dumps else {
            let dumped = references.cases.filter { $0.dumps != nil }.map(\.name)
            return .unavailable(run: run, note: dumped.isEmpty
                ? "this reference set has no per-module dumps, so no module can be named"
                : "this reference set has no per-module dumps for case \(referenceCase.name) (it has them for "
                    + dumped.joined(separator: ", ") + ")")
        }
        let walk = ModuleWalk(dumps: dumps, references: references, tolerance: tolerance(referenceCase, output: nil).tolerance)
        if referenceCase.kind == .imageEncoder {
            guard case .success(let image) = loadInput(referenceCase.file("input_image")) else {
                return .unavailable(run: run, note: "the input image could not be read")
            }
            _ = try? sam.encodeImage(image, observer: walk.observer)
        } else {
            guard referenceCase.has("onnx_point_coords"), case .success(let inputs) = officialInputs(referenceCase),
                  case .success(let features) = imageFeatures else {
                return .unavailable(run: run, note: "the module dumps are of the official decoder path, which this case "
                                    + "cannot run; no module can be named")
            }
            _ = try? runOfficialModel(inputs, features: features, observer: walk.observer)
        }
        return walk.divergence(run: run)
    }

    // MARK: - Comparison

    struct RunError: Error, CustomStringConvertible {
        let description: String
        init(_ error: Error) { description = "\(error)" }
    }

    /// Output `output` (reported name, reference base name) of a run against its reference file:
    /// the reference must be readable and finite (else bad input), then shape, dtype, values.
    func compare(_ run: Result<FloatTensor, some Error>, _ referenceCase: ReferenceCase, _ output: (String, String),
                 path: String, seconds: Double) -> OutputCheck {
        var result = check(referenceCase, output, path, status: .pass, problem: nil)
        result.seconds = seconds
        let referenceFile = referenceCase.file(output.1)
        guard referenceCase.has(output.1) else {
            result.status = .notApplicable
            result.missingReference = true
            result.problem = "reference \(referenceFile) is missing, so \(output.0) was not compared"
            return result
        }
        if let problem = toleranceOverLimit(result.tolerance) {
            result.status = .badInput
            result.problem = problem
            return result
        }
        let reference: Tensor
        do { reference = try NPY.read(try references.resolve(referenceFile).get()) } catch {
            result.status = .badInput
            result.problem = "reference \(referenceFile) unreadable: \(error)"
            return result
        }
        result.referenceShape = reference.shape
        result.referenceDType = reference.dtype.rawValue
        let referenceValues = reference.floats()
        if let nonFinite = NonFiniteSummary(referenceValues, shape: reference.shape) {
            result.status = .badInput
            result.problem = "reference \(referenceFile) holds \(nonFinite): a non-finite reference never passes"
            return result
        }
        let actual: FloatTensor
        switch run {
        case .failure(let error):
            result.status = .fail
            result.problem = "the model could not run this case's inputs: \(error)"
            return result
        case .success(let value): actual = value
        }
        result.shape = actual.shape
        result.dtype = DType.float32.rawValue
        guard actual.shape == reference.shape else {
            result.status = .fail
            result.problem = "shape mismatch: native \(Shape.text(actual.shape)), reference \(Shape.text(reference.shape))"
            return result
        }
        guard reference.dtype == .float32 else {
            result.status = .fail
            result.problem = "dtype mismatch: native float32, reference \(reference.dtype.rawValue)"
            return result
        }
        let figures = ErrorFigures(output: actual.data, reference: referenceValues, shape: actual.shape,
                                   tolerance: result.tolerance.tolerance)
        result.figures = figures
        result.status = figures.passes ? .pass : .fail
        if figures.nonFinite > 0 { result.problem = "the native output holds NaN or infinite values (\(figures.nonFinite) elements)" }
        return result
    }

    /// A check with no figures yet.
    func check(_ referenceCase: ReferenceCase, _ output: (String, String), _ path: String, status: CheckStatus,
               problem: String?) -> OutputCheck {
        OutputCheck(output: output.0, path: path, reference: referenceCase.file(output.1), status: status, problem: problem,
                    tolerance: tolerance(referenceCase, output: output), seconds: 0)
    }

    /// A check standing for a whole case or path that has nothing to compare.
    func placeholder(_ referenceCase: ReferenceCase, output: String = "(case)", path: String = "(case)",
                     status: CheckStatus, problem: String) -> OutputCheck {
        OutputCheck(output: output, path: path, reference: referenceCase.folder, status: status, problem: problem,
                    tolerance: tolerance(referenceCase, output: nil), seconds: 0)
    }

    /// Why a check's tolerance may not be used: a manifest asks for more than --max-atol/--max-rtol allow.
    func toleranceOverLimit(_ resolved: ResolvedTolerance) -> String? {
        var problems: [String] = []
        if let limit = options.maxAtol, resolved.atol > limit {
            problems.append("atol \(formatFigure(resolved.atol)) (\(resolved.atolSource)) is more than --max-atol \(formatFigure(limit))")
        }
        if let limit = options.maxRtol, resolved.rtol > limit {
            problems.append("rtol \(formatFigure(resolved.rtol)) (\(resolved.rtolSource)) is more than --max-rtol \(formatFigure(limit))")
        }
        return problems.isEmpty ? nil : "the reference set asks for a looser bar than allowed: " + problems.joined(separator: "; ")
    }

    /// defaults < manifest `tolerances` < the case's < the output's < the command line.
    func tolerance(_ referenceCase: ReferenceCase, output: (String, String)?) -> ResolvedTolerance {
        var resolved = ResolvedTolerance.defaults
            .applying(references.setTolerance, source: "manifest")
            .applying(referenceCase.tolerance, source: "manifest case \(referenceCase.name)")
        if let output {
            for name in [output.1, output.0] {
                if let override = referenceCase.outputTolerances[name] {
                    resolved = resolved.applying(override, source: "manifest case \(referenceCase.name) output \(name)")
                    break
                }
            }
        }
        return resolved.applying(ToleranceOverride(atol: options.atol, rtol: options.rtol), source: "command line")
    }

    // MARK: - Inputs

    /// An input file as float32 values; missing, unreadable or non-finite is a problem (bad input).
    func loadInput(_ relative: String) -> Result<FloatTensor, InputProblem> {
        let tensor: Tensor
        do { tensor = try NPY.read(try references.resolve(relative).get()) } catch {
            return .failure(InputProblem(message: "input \(relative) unreadable: \(error)"))
        }
        let values = tensor.floats()
        if let nonFinite = NonFiniteSummary(values, shape: tensor.shape) {
            return .failure(InputProblem(message: "input \(relative) holds \(nonFinite)"))
        }
        return .success(FloatTensor(shape: tensor.shape, data: values))
    }

    /// `tensor` (read from `file`) has shape `expected`, or the problem naming both.
    static func shape(_ tensor: FloatTensor, of file: String, is expected: [Int]) -> Result<Void, InputProblem> {
        tensor.shape == expected ? .success(())
            : .failure(InputProblem(message: "input \(file) has shape \(Shape.text(tensor.shape)), expected \(Shape.text(expected))"))
    }

    /// Prompt inputs as SamOnnxModel takes them: coordinates [1, N, 2], labels [1, N] of -1, 0, 1, 2 or 3.
    static func checkPrompt(points: FloatTensor, pointsFile: String, labels: FloatTensor, labelsFile: String) throws(InputProblem) {
        guard points.shape.count == 3, points.shape[0] == 1, points.shape[1] >= 1, points.shape[2] == 2 else {
            throw InputProblem(message: "input \(pointsFile) has shape \(Shape.text(points.shape)), expected [1,N,2]")
        }
        guard labels.shape == [1, points.shape[1]] else {
            throw InputProblem(message: "input \(labelsFile) has shape \(Shape.text(labels.shape)), expected [1,\(points.shape[1])] "
                               + "(one label per point of \(pointsFile))")
        }
        if let bad = labels.data.firstIndex(where: { ![-1, 0, 1, 2, 3].contains($0) }) {
            throw InputProblem(message: "input \(labelsFile) holds label \(labels.data[bad]) at [0,\(bad)]; labels are -1, 0, 1, 2 or 3")
        }
    }

    func require(_ referenceCase: ReferenceCase, _ name: String) throws(InputProblem) -> FloatTensor {
        guard referenceCase.has(name) else { throw InputProblem(message: "input \(referenceCase.file(name)) is missing") }
        return try loadInput(referenceCase.file(name)).get()
    }

    func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}

import SAMModel
import SAMTensor

extension ReferenceSet {
    /// The reference file of image feature `name` ("references/image_embed.npy"), relative to the root.
    public func featureFile(_ name: String) -> String { referencesPrefix + "/" + name + ".npy" }
}

extension CaseRunner {
    /// The files of the image features the model's decoder takes, in `featureNames` order
    /// (SAM: image_embeddings; SAM 2: image_embed, high_res_feats_0, high_res_feats_1).
    var featureFiles: [String] { sam.config.featureNames.map(references.featureFile) }

    /// Every feature file, each of the shape the configuration gives it.
    func loadImageFeatures() -> Result<ImageFeatures, InputProblem> {
        let shapes = sam.config.featureShapes
        var maps: [FloatTensor] = []
        for (file, shape) in zip(featureFiles, shapes) {
            switch loadInput(file).flatMap({ tensor in Self.shape(tensor, of: file, is: shape).map { tensor } }) {
            case .failure(let problem): return .failure(problem)
            case .success(let tensor): maps.append(tensor)
            }
        }
        guard let features = ImageFeatures(maps: maps) else {
            return .failure(InputProblem(message: "the model's configuration names no image features"))
        }
        return .success(features)
    }

    /// What the decoder cases take, for the reports.
    var decoderInputsNote: String {
        let files = featureFiles.joined(separator: ", ")
        return "decoder cases take the reference \(files) (PyTorch's) as input, "
            + "so they check the prompt encoder and mask decoder alone; case image_encoder checks the encoder"
    }

    /// Whether the model's decoder gives object-score logits, compared as an official output.
    var decodesObjectScores: Bool { sam.maskDecoder?.predictsObjectScores ?? false }

    /// `<case>/multimask_output.npy` ([1], 1 or 0): the case also holds the predictor's selected outputs.
    static let multimaskFlag = "multimask_output"
    /// The predictor's outputs: the official run's masks and scores as its predictor selects them
    /// (multimask 1...3, or the family's single-mask rule) and clamps them.
    static let predictorOutputs = [("predictor_low_res_masks", "low_res_masks"), ("predictor_iou_predictions", "iou_predictions")]

    /// The official path's run, selected as the model family's predictor selects (SAM 2's single
    /// mask: mask 0 unless unstable, then the best multimask output) and clamped as it clamps.
    func runPredictorSelection(_ referenceCase: ReferenceCase) -> [OutputCheck] {
        let outputs = Self.predictorOutputs
        guard let maskDecoder = sam.maskDecoder else {
            return outputs.map { check(referenceCase, $0, "predictor", status: .notApplicable, problem: "the model has no mask_decoder") }
        }
        let inputs: OfficialInputs, features: ImageFeatures, multimask: Bool
        switch officialInputs(referenceCase) {
        case .failure(.notApplicable(let reason)):
            return outputs.map { check(referenceCase, $0, "predictor", status: .notApplicable, problem: reason) }
        case .failure(.badInput(let problem)):
            return outputs.map { check(referenceCase, $0, "predictor", status: .badInput, problem: problem) }
        case .success(let value): inputs = value
        }
        let flagFile = referenceCase.file(Self.multimaskFlag)
        switch imageFeatures.flatMap({ features in loadInput(flagFile).map { (features, $0) } }) {
        case .failure(let problem):
            return outputs.map { check(referenceCase, $0, "predictor", status: .badInput, problem: problem.message) }
        case .success(let (loaded, flag)):
            guard flag.count == 1, flag.data[0] == 0 || flag.data[0] == 1 else {
                let problem = "input \(flagFile) is \(flag.data) of shape \(Shape.text(flag.shape)), expected [1] holding 0 or 1"
                return outputs.map { check(referenceCase, $0, "predictor", status: .badInput, problem: problem) }
            }
            features = loaded
            multimask = flag.data[0] == 1
        }
        // The family's own predictor switches (SAM-HQ's hq_token_only), each `<case>/<name>.npy` like
        // multimask_output.npy; a switch without its file is off, as upstream's defaults are.
        var options = PredictorOptions()
        for name in maskDecoder.predictorFlags.keys.sorted() where referenceCase.has(name) {
            let file = referenceCase.file(name)
            switch loadInput(file) {
            case .failure(let problem):
                return outputs.map { check(referenceCase, $0, "predictor", status: .badInput, problem: problem.message) }
            case .success(let flag):
                guard flag.count == 1, flag.data[0] == 0 || flag.data[0] == 1 else {
                    let problem = "input \(file) is \(flag.data) of shape \(Shape.text(flag.shape)), expected [1] holding 0 or 1"
                    return outputs.map { check(referenceCase, $0, "predictor", status: .badInput, problem: problem) }
                }
                if flag.data[0] == 1 { options.flags.insert(name) }
            }
        }
        let started = ContinuousClock.now
        let run: Result<MaskPrediction, RunError>
        do {
            let prediction = maskDecoder.predictorMasks(try runOfficialModel(inputs, features: features), options: options)
            let tokens = inputs.points.shape[1] + (inputs.appendPaddingPoint ? 1 : 0)
            let selected = maskDecoder.predictorSelection(prediction, multimask: multimask, tokenCount: tokens)
            run = .success(prediction.selecting(selected, clampedTo: maskDecoder.lowResolutionClamp))
        } catch {
            run = .failure(RunError(error))
        }
        let elapsed = seconds(since: started)
        return outputs.map { output in
            compare(run.map { output.1 == "low_res_masks" ? $0.masks : $0.iou }, referenceCase, output, path: "predictor",
                    seconds: elapsed)
        }
    }
}

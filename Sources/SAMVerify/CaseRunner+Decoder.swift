import SAMModel
import SAMTensor

/// Decoder cases: the official path (`onnx_*`, all four masks) and the split path (`split_*`), each on
/// the reference image embeddings.
extension CaseRunner {
    struct OfficialInputs {
        var points: FloatTensor
        var labels: FloatTensor
        var appendPaddingPoint: Bool
        var maskInput: FloatTensor?
        var hasMaskInput: Float

        /// Sparse tokens the decoder sees (points, box corners, padding): the single-mask rule counts these.
        var tokenCount: Int { points.shape[1] + (appendPaddingPoint ? 1 : 0) }
    }

    func runDecoder(_ referenceCase: ReferenceCase, into result: inout CaseResult) {
        var inputs = featureFiles
        var outputs: [OutputCheck] = []
        let hasOfficial = referenceCase.has("onnx_point_coords")
        let hasSplit = referenceCase.has("split_points")
        if hasOfficial {
            inputs += ["onnx_point_coords", "onnx_point_labels", "onnx_mask_input", "onnx_has_mask_input"]
                .filter(referenceCase.has).map(referenceCase.file)
            let official = runOfficial(referenceCase)
            outputs += official.checks
            result.task = officialTask(referenceCase, checks: official.checks, native: official.native,
                                       tokenCount: official.tokenCount)
            if referenceCase.has(Self.multimaskFlag) {
                inputs.append(referenceCase.file(Self.multimaskFlag))
                let flags = (sam.maskDecoder?.predictorFlags.keys).map { Array($0).sorted() } ?? []
                inputs += flags.filter(referenceCase.has).map(referenceCase.file)
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

    /// The official path's checks, and its native outputs when the model ran.
    func runOfficial(_ referenceCase: ReferenceCase) -> (checks: [OutputCheck], native: TaskComparison.DecoderOutputs?, tokenCount: Int) {
        // Every output of the path is expected; one without its reference file is reported (compare).
        let outputs = Self.officialOutputs + (decodesObjectScores ? [Self.objectScoreOutput] : [])
        let inputs: OfficialInputs, features: ImageFeatures
        switch officialInputs(referenceCase) {
        case .failure(.notApplicable(let reason)):
            return (outputs.map { check(referenceCase, $0, "official", status: .notApplicable, problem: reason) }, nil, 0)
        case .failure(.badInput(let problem)):
            return (outputs.map { check(referenceCase, $0, "official", status: .badInput, problem: problem) }, nil, 0)
        case .success(let value): inputs = value
        }
        switch imageFeatures {
        case .failure(let problem):
            return (outputs.map { check(referenceCase, $0, "official", status: .badInput, problem: problem.message) }, nil, 0)
        case .success(let value): features = value
        }
        let started = ContinuousClock.now
        let run: Result<MaskPrediction, RunError>
        do { run = .success(try runOfficialModel(inputs, features: features)) } catch { run = .failure(RunError(error)) }
        let elapsed = seconds(since: started)
        let checks = outputs.map { output in
            compare(run.map { prediction in
                switch output.0 {
                case "low_res_masks": prediction.masks
                case "iou_predictions": prediction.iou
                default: prediction.objectScoreLogits ?? FloatTensor(zeros: [0])
                }
            }, referenceCase, output, path: "official", seconds: elapsed)
        }
        return (checks, try? run.map { TaskComparison.DecoderOutputs(masks: $0.masks, iou: $0.iou) }.get(), inputs.tokenCount)
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
}

import SAMModel
import SAMTensor

/// Runs one case at a time; the reference image embeddings are read once, for every decoder case.
final class CaseRunner {
    let sam: Sam
    let references: ReferenceSet
    let options: VerifyOptions
    let observer: ArtifactObserver?
    /// The reference image features every decoder case takes (SAM's `image_embeddings.npy`; SAM 2's
    /// `image_embed.npy` and `high_res_feats_*.npy`), read once.
    lazy var imageFeatures: Result<ImageFeatures, InputProblem> = loadImageFeatures()
    var imageEmbeddings: Result<FloatTensor, InputProblem> { imageFeatures.map(\.embedding) }
    /// The frame every task-level check brings the masks to: the prompt frame, which postprocess_masks
    /// upscales to (the encoder input's for every family but EfficientViT-SAM's L*).
    lazy var frame: Result<MaskFrame, InputProblem> = MaskFrame.of(references, imageSize: sam.config.imageEncoder.promptFrameSize)
    /// What the case being run produced, for the observer; reset for every case.
    var artifacts: CaseArtifacts?
    /// The reference outputs the case being run compared, by reported name; reset for every case.
    var comparedReferences: [String: FloatTensor] = [:]

    init(sam: Sam, references: ReferenceSet, options: VerifyOptions, observer: ArtifactObserver? = nil) {
        self.sam = sam
        self.references = references
        self.options = options
        self.observer = observer
    }

    struct InputProblem: Error {
        let message: String
    }

    /// The expected outputs of each path: (reported name, reference file base name). The encoder's
    /// are its configuration's feature names (SAM: image_embeddings).
    var encoderOutputs: [(String, String)] { sam.config.featureNames.map { ($0, $0) } }
    static let officialOutputs = [("low_res_masks", "onnx_low_res_masks"), ("iou_predictions", "onnx_iou_predictions")]
    /// SAM 2's decoder also predicts whether the object is there.
    static let objectScoreOutput = ("object_score_logits", "onnx_object_score_logits")
    static let splitOutputs = [("split_sparse_embeddings", "split_sparse_embeddings"), ("split_masks", "split_masks"),
                               ("split_iou_predictions", "split_iou_predictions")]

    func run(_ referenceCase: ReferenceCase) -> CaseResult {
        let started = ContinuousClock.now
        var result = CaseResult(name: referenceCase.name, kind: referenceCase.kind, status: .pass, inputs: [], outputs: [],
                                seconds: 0)
        artifacts = observer == nil ? nil : CaseArtifacts(name: referenceCase.name, kind: referenceCase.kind, result: result)
        comparedReferences = [:]
        if let problem = referenceCase.problem {
            result.outputs = [placeholder(referenceCase, status: .badInput, problem: problem)]
        } else {
            switch referenceCase.kind {
            case .imageEncoder: runEncoder(referenceCase, into: &result)
            case .decoder: runDecoder(referenceCase, into: &result)
            case .preprocess: runPreprocess(referenceCase, into: &result)
            }
        }
        result.status = CaseResult.aggregate(result.outputs, task: result.task)
        if result.outputs.contains(where: { $0.status == .fail }) && options.locateDivergence {
            result.divergence = locateDivergence(referenceCase, failedPaths: Set(result.outputs.filter { $0.status == .fail }.map(\.path)))
        }
        if options.measureModules, referenceCase.dumps != nil {
            result.modules = measureModules(referenceCase)
        }
        result.seconds = seconds(since: started)
        if var artifacts {
            artifacts.result = result
            observer?(artifacts)
            self.artifacts = nil
        }
        return result
    }

    /// Records a native output and the reference it was compared with, when someone observes.
    func keep(_ output: String, native: FloatTensor?, reference: FloatTensor?) {
        guard artifacts != nil else { return }
        if let native { artifacts?.native[output] = native }
        if let reference { artifacts?.reference[output] = reference }
    }
}

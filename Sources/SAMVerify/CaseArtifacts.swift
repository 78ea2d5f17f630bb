import SAMImage
import SAMTensor

/// What one case's run produced, handed to an observer as soon as the case is done (nothing is kept
/// after it): the picture report draws from it, a determinism run writes the native outputs.
public struct CaseArtifacts {
    public var name: String
    public var kind: ReferenceCase.Kind
    /// Native outputs by reported name ("image_embeddings", "low_res_masks", "split_masks", "input_image"...).
    public var native: [String: FloatTensor] = [:]
    /// The reference outputs that were read and compared, by the same names.
    public var reference: [String: FloatTensor] = [:]
    /// The frame the official masks were brought to, and the full-size thresholded masks (all four) of
    /// the official path, when the task-level check ran.
    public var frame: MaskFrame?
    public var nativeMasks: BinaryMasks?
    public var referenceMasks: BinaryMasks?
    /// The case's result, as reported.
    public var result: CaseResult

    init(name: String, kind: ReferenceCase.Kind, result: CaseResult) {
        self.name = name
        self.kind = kind
        self.result = result
    }
}

/// Receives each case's artifacts in order.
public typealias ArtifactObserver = (CaseArtifacts) -> Void

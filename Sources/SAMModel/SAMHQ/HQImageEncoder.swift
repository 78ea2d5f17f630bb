import SAMKernels
import SAMTensor

/// A SAM or MobileSAM encoder that also hands the decoder its early features, as SAM-HQ's encoders
/// return them (`interm_embeddings[0]`), in the layout the HQ decoder reads them: [1, C, g, g].
/// ref: segment_anything_hq/modeling/mask_decoder_hq.py MaskDecoderHQ.forward —
/// vit_features = interm_embeddings[0].permute(0, 3, 1, 2)
struct HQImageEncoder: ImageEncoder {
    /// The second feature map's name, as reference sets and `samrun` name its file.
    static let earlyFeatureName = "vit_features"

    let base: any ImageEncoder
    let early: EarlyFeatures

    var inputShapeDescription: String { base.inputShapeDescription }

    func features(_ image: FloatTensor, observer: ModuleObserver?) throws(ImageEncoderError) -> ImageFeatures {
        let (features, tapped) = try base.features(image, observer: observer, tapping: [early.path])
        guard let tokens = tapped[early.path] else {
            throw .untappable(path: early.path, tappable: "the encoder returned no output for it")
        }
        // Tokens [B, N, C] as [B, N, C] rows of the side x side grid, to NCHW.
        let side = Int(Double(tokens.shape.count == 3 ? tokens.shape[1] : 0).squareRoot().rounded())
        guard tokens.shape.count == 3, side * side == tokens.shape[1], tokens.shape[2] == early.channels else {
            throw .imageShape(expected: "early features [B, \(early.side * early.side), \(early.channels)] at \(early.path)",
                              actual: tokens.shape)
        }
        let map = Kernels.tokensToNCHW(tokens, height: side, width: side)
        return ImageFeatures(embedding: features.embedding, highResolution: [map])
    }
}

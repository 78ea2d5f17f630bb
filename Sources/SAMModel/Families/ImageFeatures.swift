import SAMTensor

/// What an image encoder hands the mask decoder, computed once per image: the image embedding
/// the decoder attends to and, for multi-scale families, the higher-resolution maps it adds
/// while upscaling the masks (SAM 2's `high_res_feats`, finest first). SAM's and MobileSAM's
/// encoders give the embedding alone.
public struct ImageFeatures: Sendable, Equatable {
    /// The image embedding the decoder attends to, [1, C, g, g].
    public var embedding: FloatTensor
    /// The higher-resolution maps, finest first (SAM 2: [1, C/8, 4g, 4g], then [1, C/4, 2g, 2g]); empty for single-map encoders.
    public var highResolution: [FloatTensor]

    /// Features from an embedding and, for multi-scale families, its higher-resolution maps (finest first).
    public init(embedding: FloatTensor, highResolution: [FloatTensor] = []) {
        self.embedding = embedding
        self.highResolution = highResolution
    }

    /// The maps in the order `ImageEncoderConfiguration.featureNames` names them: embedding first.
    public var maps: [FloatTensor] { [embedding] + highResolution }

    /// Features from maps in `featureNames` order (embedding first); nil when there are none.
    public init?(maps: [FloatTensor]) {
        guard let first = maps.first else { return nil }
        self.init(embedding: first, highResolution: Array(maps.dropFirst()))
    }
}

import SAMImage
import SAMTensor

/// One family of image encoders the runtime ports (MobileSAM's TinyViT, SAM's ViT-B/L/H ...): its
/// configuration type, how to build the encoder from weights, and how to recognise and size it
/// from a state dict's shapes. `ImageEncoderFamilies.all` lists them; a `.samw` names its family.
/// Which model families run an encoder family is theirs to say (`ModelFamily.imageEncoderFamilies`).
package protocol ImageEncoderFamily: SendableMetatype {
    associatedtype Configuration: ImageEncoderConfiguration
    /// The name a `.samw` and a config.json carry ("tiny_vit", "vit").
    static var name: String { get }
    /// The encoder built strictly from the weights under `prefix` (shapes checked against `config`).
    static func makeEncoder(weights: WeightStore, prefix: String, config: Configuration) throws(WeightError) -> any ImageEncoder
    /// This family's configuration read from a state dict's canonical shapes, or nil when the
    /// weights hold no encoder of this family. `facts` are what export graphs state beside weights.
    static func inferConfiguration(fromShapes shapes: [String: [Int]], facts: EncoderFacts,
                                   base: Configuration?) -> Configuration?
    /// Canonical names outside `image_encoder.` that this family's encoder takes (SAM 2 applies the
    /// decoder's high-resolution projections and `no_mem_embed` once per image): they do not make
    /// another component present. Prefixes end with "."; other entries are whole names.
    static var keysOutsideEncoder: [String] { get }
}

extension ImageEncoderFamily {
    package static var keysOutsideEncoder: [String] { [] }

    /// Whether `key` is one of `keysOutsideEncoder`.
    package static func takesOutsideEncoder(_ key: String) -> Bool {
        keysOutsideEncoder.contains { $0.hasSuffix(".") ? key.hasPrefix($0) : key == $0 }
    }
}

/// What an image encoder's configuration tells the rest of the model and the pipeline.
package protocol ImageEncoderConfiguration: Codable, Sendable, Equatable {
    /// Side of the square model input.
    var imageSize: Int { get set }
    /// Side of the frame prompts and masks are in (the prompt encoder's input size): the input's,
    /// except for a model whose predictor has two frames (EfficientViT-SAM L*: 512 in, 1024 prompts).
    var promptFrameSize: Int { get }
    /// Channels of the image embedding (the neck's output).
    var embeddingDim: Int { get }
    /// Side of the image embedding grid.
    var embeddingGridSize: Int { get }
    /// How a photo becomes the model input.
    var preprocessing: ImagePreprocessing { get set }
    /// The predictor's geometry: photo to input, prompts to the prompt frame, masks back. By default
    /// the one `preprocessing` describes; a family whose predictor differs returns its own.
    var inputTransform: InputTransform { get }
    /// One line for listings ("TinyViT 1024x1024, dims [64, 128, 160, 320] ...").
    var summary: String { get }
    /// The names of the encoder's outputs, embedding first (`ImageFeatures.maps` order), as
    /// reference sets and `samrun` name their files: SAM's `image_embeddings`; SAM 2's
    /// `image_embed`, `high_res_feats_0`, `high_res_feats_1` (SAM2ImagePredictor's names).
    var featureNames: [String] { get }
    /// The shape of each output, in `featureNames` order.
    var featureShapes: [[Int]] { get }
    /// Adds a line for every size out of the family's bounds (`SAMConfig.problems` checks the shared ones).
    func checkBounds(_ check: inout ConfigProblems)
    /// The eps of the BatchNorms the family keeps in its state dicts for the runtime to fold at load
    /// (EfficientViT's ConvLayer), nil for a family that folds none. Conversion folds them at this eps
    /// to check them against an export that folded them itself (`FoldedBatchNormMerge`).
    var runtimeBatchNormEps: Double? { get }
}

extension ImageEncoderConfiguration {
    /// A family without bounds of its own is held to the shared ones only.
    package func checkBounds(_ check: inout ConfigProblems) {}
}

extension ImageEncoderConfiguration {
    package var runtimeBatchNormEps: Double? { nil }
    package var promptFrameSize: Int { imageSize }
    package var inputTransform: InputTransform { preprocessing.inputTransform(side: imageSize) }
    package var featureNames: [String] { ["image_embeddings"] }
    package var featureShapes: [[Int]] { [[1, embeddingDim, embeddingGridSize, embeddingGridSize]] }
}

/// A runnable image encoder: normalised images [1, 3, S, S] in, the decoder's image features out.
package protocol ImageEncoder: Sendable {
    var inputShapeDescription: String { get }
    /// `observer` sees every module's output in PyTorch's order, with its state-dict path.
    func features(_ image: FloatTensor, observer: ModuleObserver?) throws(ImageEncoderError) -> ImageFeatures
    /// `features`, and the outputs of the modules `taps` names by state-dict path (`image_encoder.blocks.2`)
    /// as the encoder holds them, tokens [B, H * W, C]: what a model family that hands the decoder an
    /// intermediate map takes (SAM-HQ's early ViT features). A path it cannot tap is an error.
    func features(_ image: FloatTensor, observer: ModuleObserver?, tapping taps: Set<String>) throws(ImageEncoderError)
        -> (features: ImageFeatures, tapped: [String: FloatTensor])
}

extension ImageEncoder {
    /// An encoder that taps nothing.
    package func features(_ image: FloatTensor, observer: ModuleObserver?, tapping taps: Set<String>) throws(ImageEncoderError)
        -> (features: ImageFeatures, tapped: [String: FloatTensor]) {
        if let path = taps.sorted().first { throw .untappable(path: path, tappable: "none") }
        return (try features(image, observer: observer), [:])
    }
}

/// An encoder whose one output is the image embedding [B, C, g, g] (SAM's ViT, MobileSAM's TinyViT),
/// and which taps the token outputs of its stages or blocks.
package protocol SingleMapImageEncoder: ImageEncoder {
    func callAsFunction(_ image: FloatTensor, observer: ModuleObserver?) throws(ImageEncoderError) -> FloatTensor
    /// The embedding and the tapped modules' token outputs.
    func callAsFunction(_ image: FloatTensor, observer: ModuleObserver?, tapping taps: Set<String>) throws(ImageEncoderError)
        -> (embedding: FloatTensor, tapped: [String: FloatTensor])
}

extension SingleMapImageEncoder {
    package func features(_ image: FloatTensor, observer: ModuleObserver?) throws(ImageEncoderError) -> ImageFeatures {
        ImageFeatures(embedding: try self(image, observer: observer))
    }

    package func features(_ image: FloatTensor, observer: ModuleObserver?, tapping taps: Set<String>) throws(ImageEncoderError)
        -> (features: ImageFeatures, tapped: [String: FloatTensor]) {
        let (embedding, tapped) = try self(image, observer: observer, tapping: taps)
        return (ImageFeatures(embedding: embedding), tapped)
    }
}

/// Checks that every tap names one of `tappable` (state-dict paths of modules an encoder can hand out).
func requireTappable(_ taps: Set<String>, among tappable: [String]) throws(ImageEncoderError) {
    if let path = taps.sorted().first(where: { !tappable.contains($0) }) {
        let listed = tappable.count > 3 ? "\(tappable[0]) ... \(tappable[tappable.count - 1])" : tappable.joined(separator: ", ")
        throw .untappable(path: path, tappable: listed)
    }
}

/// What export graphs state about an encoder that no weight shows.
package struct EncoderFacts: Sendable, Equatable {
    /// S of an image-encoder graph input [1,3,S,S].
    package var imageSize: Int?
    /// Strides of TinyViT's PatchMerging convs, by stage.
    package var mergeStrides: [Int]?

    package init(imageSize: Int? = nil, mergeStrides: [Int]? = nil) {
        self.imageSize = imageSize
        self.mergeStrides = mergeStrides
    }
}

/// How a photo becomes the model input: SAM and MobileSAM resize the longest side to the input
/// size and pad (ResizeLongestSide), then normalise with ImageNet's statistics in 0-255 units;
/// SAM 2 stretches the photo to the square input and normalises in 0-1 units.
package struct ImagePreprocessing: Codable, Sendable, Equatable {
    package enum Resize: String, Codable, Sendable {
        /// Longest side to the input size, aspect kept, zero padding right and bottom (Pillow's
        /// bilinear on the uint8 image); prompt coordinates scale by the same factor. Mean and
        /// std are in 0-255 units. ref: segment_anything/utils/transforms.py ResizeLongestSide
        case longestSide
        /// Both sides to the input size, aspect not kept, as torchvision does it on float tensors:
        /// ToTensor (÷255), Resize((S, S)) antialiased bilinear, Normalize. Mean and std are in
        /// 0-1 units; prompt coordinates are divided by the original size and times S.
        /// ref: sam2/utils/transforms.py SAM2Transforms
        case square
    }

    package var resize: Resize
    package var pixelMean: [Double]
    package var pixelStd: [Double]

    package init(resize: Resize, pixelMean: [Double], pixelStd: [Double]) {
        self.resize = resize
        self.pixelMean = pixelMean
        self.pixelStd = pixelStd
    }

    private enum CodingKeys: String, CodingKey { case resize, pixelMean, pixelStd }

    /// Refuses statistics that would not give a finite input (three finite means, three positive stds).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        resize = try container.decode(Resize.self, forKey: .resize)
        pixelMean = try container.decode([Double].self, forKey: .pixelMean)
        pixelStd = try container.decode([Double].self, forKey: .pixelStd)
        guard pixelMean.count == 3, pixelStd.count == 3, pixelMean.allSatisfy(\.isFinite),
              pixelStd.allSatisfy({ $0.isFinite && $0 > 0 }) else {
            throw DecodingError.dataCorruptedError(forKey: .pixelStd, in: container, debugDescription:
                "pixelMean and pixelStd need 3 finite values each, std positive")
        }
    }

    /// ref: segment_anything/modeling/sam.py Sam pixel_mean / pixel_std defaults
    package static let sam = ImagePreprocessing(resize: .longestSide, pixelMean: [123.675, 116.28, 103.53],
                                               pixelStd: [58.395, 57.12, 57.375])

    /// ref: sam2/utils/transforms.py SAM2Transforms.__init__ (mean, std)
    package static let sam2 = ImagePreprocessing(resize: .square, pixelMean: [0.485, 0.456, 0.406], pixelStd: [0.229, 0.224, 0.225])
}

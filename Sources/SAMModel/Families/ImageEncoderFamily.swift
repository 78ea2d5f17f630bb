import SAMTensor

/// One family of image encoders the runtime ports (MobileSAM's TinyViT, SAM's ViT-B/L/H ...): its
/// configuration type, how to build the encoder from weights, and how to recognise and size it
/// from a state dict's shapes. `ImageEncoderFamilies.all` lists them; a `.samw` names its family.
public protocol ImageEncoderFamily {
    associatedtype Configuration: ImageEncoderConfiguration
    /// The name a `.samw` and a config.json carry ("tiny_vit", "vit").
    static var name: String { get }
    /// The model family the encoder belongs to, for a `.samw`'s metadata ("mobile_sam", "sam").
    static var modelFamily: String { get }
    /// The encoder built strictly from the weights under `prefix` (shapes checked against `config`).
    static func makeEncoder(weights: WeightStore, prefix: String, config: Configuration) throws(WeightError) -> any ImageEncoder
    /// This family's configuration read from a state dict's canonical shapes, or nil when the
    /// weights hold no encoder of this family. `facts` are what export graphs state beside weights.
    static func inferConfiguration(fromShapes shapes: [String: [Int]], facts: EncoderFacts,
                                   base: Configuration?) -> Configuration?
}

/// What an image encoder's configuration tells the rest of the model and the pipeline.
public protocol ImageEncoderConfiguration: Codable, Sendable, Equatable {
    /// Side of the square model input.
    var imageSize: Int { get set }
    /// Channels of the image embedding (the neck's output).
    var embeddingDim: Int { get }
    /// Side of the image embedding grid.
    var embeddingGridSize: Int { get }
    /// How a photo becomes the model input.
    var preprocessing: ImagePreprocessing { get set }
    /// One line for listings ("TinyViT 1024x1024, dims [64, 128, 160, 320] ...").
    var summary: String { get }
    /// Adds a line for every size out of the family's bounds (`SAMConfig.problems` checks the shared ones).
    func checkBounds(_ check: inout ConfigProblems)
}

extension ImageEncoderConfiguration {
    /// A family without bounds of its own is held to the shared ones only.
    public func checkBounds(_ check: inout ConfigProblems) {}
}

/// A runnable image encoder: normalised, padded images [B, 3, S, S] in, embeddings [B, C, g, g] out.
public protocol ImageEncoder: Sendable {
    var inputShapeDescription: String { get }
    /// `observer` sees every module's output in PyTorch's order, with its state-dict path.
    func callAsFunction(_ image: FloatTensor, observer: ModuleObserver?) throws(ImageEncoderError) -> FloatTensor
}

/// What export graphs state about an encoder that no weight shows.
public struct EncoderFacts: Sendable, Equatable {
    /// S of an image-encoder graph input [1,3,S,S].
    public var imageSize: Int?
    /// Strides of TinyViT's PatchMerging convs, by stage.
    public var mergeStrides: [Int]?

    public init(imageSize: Int? = nil, mergeStrides: [Int]? = nil) {
        self.imageSize = imageSize
        self.mergeStrides = mergeStrides
    }
}

/// How a photo becomes the model input: SAM and MobileSAM resize the longest side to the input
/// size and pad (ResizeLongestSide), then normalise with ImageNet's statistics in 0-255 units.
public struct ImagePreprocessing: Codable, Sendable, Equatable {
    public enum Resize: String, Codable, Sendable {
        /// Longest side to the input size, aspect kept, zero padding right and bottom.
        case longestSide
    }

    public var resize: Resize
    public var pixelMean: [Double]
    public var pixelStd: [Double]

    public init(resize: Resize, pixelMean: [Double], pixelStd: [Double]) {
        self.resize = resize
        self.pixelMean = pixelMean
        self.pixelStd = pixelStd
    }

    private enum CodingKeys: String, CodingKey { case resize, pixelMean, pixelStd }

    /// Refuses statistics that would not give a finite input (three finite means, three positive stds).
    public init(from decoder: any Decoder) throws {
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
    public static let sam = ImagePreprocessing(resize: .longestSide, pixelMean: [123.675, 116.28, 103.53],
                                               pixelStd: [58.395, 57.12, 57.375])
}

/// An 8-bit RGB image, rows top to bottom, pixels interleaved (HWC): the layout of
/// `np.array(Image.open(path).convert("RGB"))`, which is what `SamPredictor.set_image` takes.
public struct RGBImage: Sendable, Equatable {
    /// The widest or tallest image the toolkit resizes, decodes or writes (32768 pixels a side).
    public static let maxDimension = 32768

    /// Columns, in pixels.
    public let width: Int
    /// Rows, in pixels.
    public let height: Int
    /// `height * width * 3` bytes: R, G, B of pixel (y, x) at `(y * width + x) * 3`.
    public var pixels: [UInt8]

    /// `pixels` must hold `height * width * 3` bytes; anything else is an `ImageError`.
    public init(width: Int, height: Int, pixels: [UInt8]) throws(ImageError) {
        guard width >= 0, height >= 0, pixels.count == width * height * 3 else {
            throw ImageError(.invalidArgument, file: "<memory>",
                             "\(pixels.count) bytes for a \(width)x\(height) RGB image (needs \(max(0, width * height * 3)))")
        }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Internal: callers that built `pixels` themselves with the right count.
    package init(checkedWidth width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 3, "internal: RGB buffer size")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A uniform image.
    public init(width: Int, height: Int, fill: (UInt8, UInt8, UInt8) = (0, 0, 0)) {
        precondition(width >= 0 && height >= 0, "negative image size")
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for index in stride(from: 0, to: pixels.count, by: 3) {
            pixels[index] = fill.0; pixels[index + 1] = fill.1; pixels[index + 2] = fill.2
        }
        self.init(checkedWidth: width, height: height, pixels: pixels)
    }

    /// (H, W), the order upstream's `original_size` and `input_size` use.
    public var size: ImageSize { ImageSize(height: height, width: width) }

    /// Channel `channel` (0 R, 1 G, 2 B) of pixel (x, y).
    @inlinable
    public subscript(x: Int, y: Int, channel: Int) -> UInt8 {
        get { pixels[(y * width + x) * 3 + channel] }
        set { pixels[(y * width + x) * 3 + channel] = newValue }
    }
}

/// A size in upstream's (H, W) order.
public struct ImageSize: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Rows, in pixels.
    public var height: Int
    /// Columns, in pixels.
    public var width: Int

    /// A size of `height` rows and `width` columns.
    public init(height: Int, width: Int) {
        self.height = height
        self.width = width
    }

    /// `"<height>x<width> (HxW)"`: height first, as upstream orders sizes.
    public var description: String { "\(height)x\(width) (HxW)" }
}

/// `{"width": w, "height": h}`.
extension ImageSize: Codable {
    enum CodingKeys: String, CodingKey { case width, height }

    /// Reads `{"width": w, "height": h}`.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(height: try container.decode(Int.self, forKey: .height), width: try container.decode(Int.self, forKey: .width))
    }

    /// Writes `{"width": w, "height": h}`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
    }
}

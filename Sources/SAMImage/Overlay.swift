/// Draws a mask and its prompts over the photo, for people to look at (not a numeric output).
public enum Overlay {
    /// An 8-bit RGB colour.
    public struct Color: Sendable, Equatable {
        /// Red, 0-255.
        public var red: UInt8
        /// Green, 0-255.
        public var green: UInt8
        /// Blue, 0-255.
        public var blue: UInt8
        /// The colour (`red`, `green`, `blue`).
        public init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }
        /// SAM's notebooks' mask blue (30, 144, 255).
        public static let maskBlue = Color(30, 144, 255)
        /// Green (0, 255, 0): foreground points.
        public static let foreground = Color(0, 255, 0)
        /// Red (255, 0, 0): background points.
        public static let background = Color(255, 0, 0)
        /// Gold (255, 215, 0): box outlines.
        public static let box = Color(255, 215, 0)
        /// White (255, 255, 255): the rim around points.
        public static let white = Color(255, 255, 255)
    }

    /// A prompt point in original image pixels; label 1 foreground (green), 0 background (red).
    /// Other labels (-1 padding, 2/3 box corners) are not drawn.
    public struct Point: Sendable, Equatable {
        /// Column in original image pixels (0 is the left edge).
        public var x: Double
        /// Row in original image pixels (0 is the top edge).
        public var y: Double
        /// 1 foreground, 0 background; other labels are not drawn.
        public var label: Int
        /// A point at (`x`, `y`) with `label`.
        public init(x: Double, y: Double, label: Int) {
            self.x = x
            self.y = y
            self.label = label
        }
    }

    /// A box prompt in original image pixels, x0, y0 (top left) to x1, y1 (bottom right).
    public struct Box: Sendable, Equatable {
        /// Left edge, in original image pixels.
        public var x0: Double
        /// Top edge, in original image pixels.
        public var y0: Double
        /// Right edge, in original image pixels.
        public var x1: Double
        /// Bottom edge, in original image pixels.
        public var y1: Double
        /// The box from (`x0`, `y0`) to (`x1`, `y1`).
        public init(x0: Double, y0: Double, x1: Double, y1: Double) {
            self.x0 = x0
            self.y0 = y0
            self.x1 = x1
            self.y1 = y1
        }
    }

    /// The photo with `mask` (height * width values, nonzero inside) tinted: inside pixels become
    /// `round(pixel * (1 - opacity) + color * opacity)` per channel. Then the box outline
    /// (`lineWidth` pixels, growing inwards from the box edges), then each point as a filled disc
    /// of `pointRadius` with a 1.5-pixel white rim. Radius and line width default to sizes that
    /// read at the image's scale.
    public static func render(_ image: RGBImage, mask: ArraySlice<UInt8>? = nil, color: Color = .maskBlue,
                              opacity: Double = 0.5, points: [Point] = [], box: Box? = nil, boxColor: Color = .box,
                              pointRadius: Int? = nil, lineWidth: Int? = nil) throws(ImageError) -> RGBImage {
        let width = image.width, height = image.height
        guard opacity >= 0, opacity <= 1 else {
            throw ImageError(.invalidArgument, file: "<memory>", "overlay opacity \(opacity) is outside 0...1")
        }
        var output = image
        if let mask {
            guard mask.count == width * height else {
                throw ImageError(.invalidArgument, file: "<memory>",
                                 "mask of \(mask.count) values for a \(width)x\(height) image (needs \(width * height))")
            }
            let tint = [Double(color.red), Double(color.green), Double(color.blue)].map { $0 * opacity }
            var table = [[UInt8]](repeating: [UInt8](repeating: 0, count: 256), count: 3)
            for channel in 0..<3 {
                for level in 0..<256 {
                    table[channel][level] = UInt8((Double(level) * (1 - opacity) + tint[channel]).rounded())
                }
            }
            let start = mask.startIndex
            for pixel in 0..<(width * height) where mask[start + pixel] != 0 {
                for channel in 0..<3 {
                    output.pixels[pixel * 3 + channel] = table[channel][Int(output.pixels[pixel * 3 + channel])]
                }
            }
        }
        let shortSide = min(width, height)
        if let box {
            let thickness = max(1, lineWidth ?? max(2, shortSide / 400))
            let left = Int(box.x0.rounded()), right = Int(box.x1.rounded())
            let top = Int(box.y0.rounded()), bottom = Int(box.y1.rounded())
            for inset in 0..<thickness {
                let x0 = left + inset, x1 = right - inset, y0 = top + inset, y1 = bottom - inset
                guard x0 <= x1, y0 <= y1 else { break }
                for x in x0...x1 {
                    fill(&output, x: x, y: y0, with: boxColor)
                    fill(&output, x: x, y: y1, with: boxColor)
                }
                for y in y0...y1 {
                    fill(&output, x: x0, y: y, with: boxColor)
                    fill(&output, x: x1, y: y, with: boxColor)
                }
            }
        }
        let radius = max(1, pointRadius ?? max(3, shortSide / 128))
        for point in points {
            let fillColor: Color
            switch point.label {
            case 1: fillColor = .foreground
            case 0: fillColor = .background
            default: continue
            }
            let cx = Int(point.x.rounded()), cy = Int(point.y.rounded())
            let inner = Double(radius * radius), outer = (Double(radius) + 1.5) * (Double(radius) + 1.5)
            let reach = radius + 2
            for dy in -reach...reach {
                for dx in -reach...reach {
                    let distance = Double(dx * dx + dy * dy)
                    if distance <= inner {
                        fill(&output, x: cx + dx, y: cy + dy, with: fillColor)
                    } else if distance <= outer {
                        fill(&output, x: cx + dx, y: cy + dy, with: .white)
                    }
                }
            }
        }
        return output
    }

    /// Sets pixel (x, y) when it lies inside the image.
    @inline(__always)
    static func fill(_ image: inout RGBImage, x: Int, y: Int, with color: Color) {
        guard x >= 0, y >= 0, x < image.width, y < image.height else { return }
        let offset = (y * image.width + x) * 3
        image.pixels[offset] = color.red
        image.pixels[offset + 1] = color.green
        image.pixels[offset + 2] = color.blue
    }
}

import SAMImage

/// The pictures of a report, drawn at one display size: big enough to see a 128-pixel test image,
/// small enough that a full-size photo's report stays light. Everything (photo, masks, error maps)
/// is sampled to it by nearest neighbour, so a pixel of the picture is a pixel of the data.
struct PictureCanvas {
    let width: Int
    let height: Int
    /// The original image's size the masks have.
    let original: ImageSize

    /// A canvas for masks of `original`: the long side brought to at most `longest` (and up to at least
    /// `shortest` by a whole factor for small images).
    init(original: ImageSize, longest: Int = 512, shortest: Int = 384) {
        self.original = original
        let long = max(original.width, original.height)
        let scale: Double = long > longest ? Double(longest) / Double(long)
            : Double(max(1, shortest / max(long, 1)))
        width = max(1, Int((Double(original.width) * scale).rounded()))
        height = max(1, Int((Double(original.height) * scale).rounded()))
    }

    /// Display pixel (x, y) -> the pixel of a `sourceWidth` x `sourceHeight` image it shows.
    @inline(__always)
    func source(_ x: Int, _ y: Int, width sourceWidth: Int, height sourceHeight: Int) -> Int {
        let sx = min(sourceWidth - 1, x * sourceWidth / width), sy = min(sourceHeight - 1, y * sourceHeight / height)
        return sy * sourceWidth + sx
    }

    /// `image` (any size: the photo, or the resized image) sampled to the canvas.
    func photo(_ image: RGBImage) -> RGBImage {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let from = source(x, y, width: image.width, height: image.height) * 3, to = (y * width + x) * 3
                pixels[to] = image.pixels[from]
                pixels[to + 1] = image.pixels[from + 1]
                pixels[to + 2] = image.pixels[from + 2]
            }
        }
        return (try? RGBImage(width: width, height: height, pixels: pixels)) ?? RGBImage(width: width, height: height)
    }

    /// Mask `index` of `masks` (original size) sampled to the canvas, one byte a pixel.
    func mask(_ masks: BinaryMasks, _ index: Int) -> [UInt8] {
        let plane = masks.mask(index), start = plane.startIndex
        var out = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width { out[y * width + x] = plane[start + source(x, y, width: masks.width, height: masks.height)] }
        }
        return out
    }

    /// A point or box of the original image on the canvas.
    func scaled(_ point: Overlay.Point) -> Overlay.Point {
        Overlay.Point(x: point.x * Double(width) / Double(original.width), y: point.y * Double(height) / Double(original.height),
                      label: point.label)
    }

    func scaled(_ box: Overlay.Box) -> Overlay.Box {
        let sx = Double(width) / Double(original.width), sy = Double(height) / Double(original.height)
        return Overlay.Box(x0: box.x0 * sx, y0: box.y0 * sy, x1: box.x1 * sx, y1: box.y1 * sy)
    }

    /// Where two masks on the canvas agree and differ: both set white, reference only red, native only
    /// green, neither black.
    func difference(reference: [UInt8], native: [UInt8]) -> (image: RGBImage, differing: Int) {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        var differing = 0
        for index in 0..<(width * height) {
            let colour: (UInt8, UInt8, UInt8)
            switch (reference[index] != 0, native[index] != 0) {
            case (true, true): colour = (255, 255, 255)
            case (true, false): colour = (255, 40, 40); differing += 1
            case (false, true): colour = (40, 255, 40); differing += 1
            case (false, false): colour = (0, 0, 0)
            }
            pixels[index * 3] = colour.0
            pixels[index * 3 + 1] = colour.1
            pixels[index * 3 + 2] = colour.2
        }
        return ((try? RGBImage(width: width, height: height, pixels: pixels)) ?? RGBImage(width: width, height: height), differing)
    }

    /// Images of one height side by side, `gap` grey pixels apart.
    static func sideBySide(_ images: [RGBImage], gap: Int = 8) -> RGBImage {
        let height = images.map(\.height).max() ?? 1
        let width = images.map(\.width).reduce(0, +) + gap * max(0, images.count - 1)
        var out = RGBImage(width: max(1, width), height: height, fill: (96, 96, 96))
        var left = 0
        for image in images {
            for y in 0..<image.height {
                let from = y * image.width * 3, to = (y * out.width + left) * 3
                out.pixels.replaceSubrange(to..<(to + image.width * 3), with: image.pixels[from..<(from + image.width * 3)])
            }
            left += image.width + gap
        }
        return out
    }

    /// `values` (a `valuesWidth` x `valuesHeight` map of absolute errors) on the canvas as a heat map,
    /// black at 0 through red and yellow to white at `scale` (the map's maximum when nil).
    func heatMap(_ values: [Float], width valuesWidth: Int, height valuesHeight: Int, scale: Double? = nil) -> (image: RGBImage, scale: Double) {
        let top = scale ?? Double(values.max() ?? 0)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let value = Double(values[source(x, y, width: valuesWidth, height: valuesHeight)])
                let t = top > 0 ? min(1, max(0, value / top)) : 0
                // A "hot" colour map: red rises over the first third, green the second, blue the last.
                let to = (y * width + x) * 3
                pixels[to] = UInt8((min(1, t * 3) * 255).rounded())
                pixels[to + 1] = UInt8((min(1, max(0, t * 3 - 1)) * 255).rounded())
                pixels[to + 2] = UInt8((min(1, max(0, t * 3 - 2)) * 255).rounded())
            }
        }
        return ((try? RGBImage(width: width, height: height, pixels: pixels)) ?? RGBImage(width: width, height: height), top)
    }
}

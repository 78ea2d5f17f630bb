import SAMImage

/// The photo with every mask tinted in its own colour, largest first so smaller masks stay visible
/// on top (as upstream's notebooks show the generator's annotations, sorted by area).
public enum EverythingOverlay {
    /// `opacity` of each mask's colour over the pixels beneath it.
    public static func render(_ photo: RGBImage, _ annotations: [MaskAnnotation], opacity: Double = 0.45) -> RGBImage {
        var image = photo
        let order = annotations.indices.sorted { annotations[$0].area > annotations[$1].area }
        for (rank, index) in order.enumerated() {
            let colour = Self.colour(rank)
            annotations[index].segmentation.forEachSetPixel { x, y in
                guard x < image.width, y < image.height else { return }
                for channel in 0..<3 {
                    let old = Double(image[x, y, channel])
                    image[x, y, channel] = UInt8((old * (1 - opacity) + colour[channel] * opacity).rounded())
                }
            }
        }
        return image
    }

    /// Well-separated colours: hues a golden-ratio turn apart, full saturation.
    static func colour(_ index: Int) -> [Double] {
        let hue = (Double(index) * 0.618_033_988_75).truncatingRemainder(dividingBy: 1) * 6
        let x = 1 - abs(hue.truncatingRemainder(dividingBy: 2) - 1)
        let (r, g, b): (Double, Double, Double) = switch Int(hue) {
        case 0: (1, x, 0)
        case 1: (x, 1, 0)
        case 2: (0, 1, x)
        case 3: (0, x, 1)
        case 4: (x, 0, 1)
        default: (1, 0, x)
        }
        return [r * 255, g * 255, b * 255]
    }
}

extension UncompressedRLE {
    /// Calls `body(x, y)` for every set pixel (the counts run down the columns, zeros first).
    package func forEachSetPixel(_ body: (Int, Int) -> Void) {
        guard height > 0 else { return }
        var position = 0
        for (index, count) in counts.enumerated() {
            if index % 2 == 1 {
                for pixel in position..<(position + count) { body(pixel / height, pixel % height) }
            }
            position += count
        }
    }

    /// The mask as 8-bit gray rows (255 set, 0 not), ready for `ImageIO.writeGrayPNG`.
    public func grayPixels() -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height)
        forEachSetPixel { x, y in pixels[y * width + x] = 255 }
        return pixels
    }
}

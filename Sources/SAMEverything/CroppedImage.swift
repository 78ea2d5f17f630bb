import SAMImage

extension RGBImage {
    /// The pixels inside `box` (XYXY, end exclusive), as upstream crops `image[y0:y1, x0:x1, :]`.
    func cropped(to box: PixelBox) throws(ImageError) -> RGBImage {
        guard box.x0 >= 0, box.y0 >= 0, box.x1 <= width, box.y1 <= height, box.x1 > box.x0, box.y1 > box.y0 else {
            throw ImageError(.invalidArgument, file: ImageError.inMemory,
                             "crop (\(box.x0), \(box.y0), \(box.x1), \(box.y1)) is not inside the \(width)x\(height) image")
        }
        if box.x0 == 0, box.y0 == 0, box.x1 == width, box.y1 == height { return self }
        let cropWidth = box.x1 - box.x0
        var pixels = [UInt8]()
        pixels.reserveCapacity(cropWidth * (box.y1 - box.y0) * 3)
        for y in box.y0..<box.y1 {
            let start = (y * width + box.x0) * 3
            pixels += self.pixels[start..<(start + cropWidth * 3)]
        }
        return try RGBImage(width: cropWidth, height: box.y1 - box.y0, pixels: pixels)
    }
}

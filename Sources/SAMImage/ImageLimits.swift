/// What an image may cost to decode, checked from the header before any pixel memory is allocated:
/// the pixel count; for progressive JPEGs the number of scans (each is a pass over the whole image);
/// the file's size; libjpeg's own memory. The defaults take any photo a camera makes.
public struct ImageLimits: Sendable, Equatable {
    /// Largest width * height accepted. Default 100 megapixels (decoded RGB: 300 MB).
    public var maxPixels: Int
    /// Largest number of scans in a progressive JPEG. Encoders write about 10; default 100.
    public var maxScans: Int

    /// Limits of `maxPixels` pixels and `maxScans` progressive-JPEG scans.
    public init(maxPixels: Int = 100_000_000, maxScans: Int = 100) {
        self.maxPixels = maxPixels
        self.maxScans = maxScans
    }

    /// 100 megapixels and 100 scans: any photo a camera makes (`samrun --max-pixels` changes the first).
    public static let `default` = ImageLimits()

    /// A compressed image holds at most about 8 bytes a pixel (16-bit RGBA) plus its chunks.
    package var maxFileBytes: Int {
        let (bytes, overflow) = max(maxPixels, 0).multipliedReportingOverflow(by: 8)
        return overflow || bytes > Int.max - (64 << 20) ? Int.max : bytes + (64 << 20)
    }

    /// libjpeg's allocations: coefficient buffers (2 bytes a sample, at most 4 samples a pixel) and working space.
    package var decoderMemory: Int { maxFileBytes == Int.max ? 0 : maxFileBytes }

    package func checkPixels(width: Int, height: Int, name: String, format: String) throws(ImageError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > maxPixels { throw overBudget(width: width, height: height, name: name, format: format) }
    }

    package func overBudget(width: Int, height: Int, name: String, format: String) -> ImageError {
        ImageError(.overLimit, file: name, "\(format) declares \(width)x\(height) (\(width * height) pixels); "
                   + "the limit is \(maxPixels) pixels (ImageLimits.maxPixels; samrun --max-pixels)")
    }
}

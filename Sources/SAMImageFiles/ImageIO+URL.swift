import Foundation
import SAMFiles
import SAMImage

/// `ImageIO` with file URLs, as an app holds its files: the same reads and writes
/// as the path forms. A URL that is not a file URL (https://...) is refused with an `ImageError`
/// naming it; nothing is fetched.
extension ImageIO {
    /// Reads the PNG or JPEG file at `url`, as `read(_:limits:)` reads a path. A URL that is not a
    /// file URL throws `ImageError` (`.unreadable`) naming it.
    public static func read(contentsOf url: URL, limits: ImageLimits = .default) throws(ImageError) -> RGBImage {
        try read(try localPath(of: url, code: .unreadable, because: "an image is read from a local file only"), limits: limits)
    }

    /// Writes an 8-bit RGB PNG at `url` atomically, as `writePNG(_:to:policy:)` writes to a path. A
    /// URL that is not a file URL throws `ImageError` (`.invalidArgument`) naming it; nothing is written.
    public static func writePNG(_ image: RGBImage, to url: URL, policy: OutputPolicy = .replace) throws(ImageError) {
        try writePNG(image, to: try localPath(of: url, code: .invalidArgument, because: "a PNG is written to a local file only"), policy: policy)
    }

    /// Writes an 8-bit gray PNG at `url` atomically, as `writeGrayPNG(pixels:width:height:to:policy:)`
    /// writes to a path. A URL that is not a file URL throws `ImageError` (`.invalidArgument`) naming
    /// it; nothing is written.
    public static func writeGrayPNG(pixels: [UInt8], width: Int, height: Int, to url: URL,
                                    policy: OutputPolicy = .replace) throws(ImageError) {
        try writeGrayPNG(pixels: pixels, width: width, height: height,
                         to: try localPath(of: url, code: .invalidArgument, because: "a PNG is written to a local file only"), policy: policy)
    }

    /// The format and size the image at `url` declares, as `header(_:)` reads a path. A URL that is
    /// not a file URL throws `ImageError` (`.unreadable`) naming it.
    public static func header(contentsOf url: URL) throws(ImageError) -> ImageHeader {
        try header(try localPath(of: url, code: .unreadable, because: "an image is read from a local file only"))
    }

    /// `url`'s path when it is a file URL; otherwise an `ImageError` of `code` naming the URL.
    static func localPath(of url: URL, code: ImageError.Code, because rule: String) throws(ImageError) -> String {
        guard url.isFileURL else {
            throw ImageError(code, file: url.absoluteString, "not a file URL: \(rule)")
        }
        return url.path
    }
}

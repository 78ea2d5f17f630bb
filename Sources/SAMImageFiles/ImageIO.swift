#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CJPEG
import CPNG
import SAMFiles
import SAMImage

/// Reading photos (PNG, JPEG) to RGB the way `np.array(Image.open(path).convert("RGB"))` does
/// with the Pillow SamPredictor users have, and writing 8-bit PNGs for masks and overlays.
///
/// What "the way Pillow does" means, per input (each pinned by a test against Pillow):
/// - alpha is ignored, not composited: an RGBA pixel (10, 20, 30, 0) reads as (10, 20, 30);
/// - 16-bit RGB, RGBA and gray+alpha PNGs keep each sample's high byte (v >> 8);
/// - 16-bit gray PNGs are clipped, min(v, 255): Pillow opens them as "I;16" and its
///   I;16 -> RGB conversion clamps, so most 16-bit gray photos read as nearly white;
/// - 1/2/4-bit gray is scaled to 0...255, palettes are looked up (transparency ignored);
/// - no gamma, ICC or EXIF-orientation handling (`Image.open` applies none of them);
/// - JPEG: libjpeg defaults (islow IDCT, fancy upsampling); CMYK files are taken as Adobe's
///   inverted CMYK and converted with Pillow's integer formula.
public enum ImageIO {
    /// Wider or taller images are refused before any pixel memory is allocated.
    public static let maxDimension = RGBImage.maxDimension

    /// The image formats read and, for PNG, written; told apart by the file's signature.
    public enum Format: String, Sendable {
        /// PNG (libpng).
        case png
        /// JPEG, baseline or progressive (libjpeg).
        case jpeg
    }

    /// Reads `path` (PNG or JPEG, told apart by signature, not by extension). Only a regular file is
    /// read; an image over `limits` is refused from its header, before it is decoded.
    public static func read(_ path: String, limits: ImageLimits = .default) throws(ImageError) -> RGBImage {
        let bytes = try readFile(path, limits: limits)
        return try decode(bytes, name: path, limits: limits)
    }

    /// Decodes a whole PNG or JPEG file held in memory; `name` is used in errors.
    public static func decode(_ bytes: [UInt8], name: String = "<memory>", limits: ImageLimits = .default) throws(ImageError) -> RGBImage {
        guard !bytes.isEmpty else { throw ImageError(.corrupt, file: name, "empty file") }
        switch sniff(bytes) {
        case .png: return try decodePNG(bytes, name: name, limits: limits)
        case .jpeg: return try decodeJPEG(bytes, name: name, limits: limits)
        case nil:
            let head = bytes.prefix(8).map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ")
            throw ImageError(.unsupported, file: name, "not a PNG or JPEG image (starts with \(head)); supported: PNG, JPEG")
        }
    }

    /// The format announced by the file's signature, if it is one this reader handles.
    public static func sniff(_ bytes: [UInt8]) -> Format? {
        let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        if bytes.count >= 8, Array(bytes[0..<8]) == pngSignature { return .png }
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
        return nil
    }

    // MARK: - PNG

    static func decodePNG(_ bytes: [UInt8], name: String, limits: ImageLimits) throws(ImageError) -> RGBImage {
        // The IHDR chunk always comes first (bytes 8...32): refuse a zero or absurd size before libpng does.
        if bytes.count >= 24, Array(bytes[12..<16]) == Array("IHDR".utf8) {
            let width = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
            if width == 0 || height == 0 {
                throw ImageError(.badDimensions, file: name, "PNG declares a zero size (\(width)x\(height))")
            }
            if width > maxDimension || height > maxDimension { throw tooLarge(width: width, height: height, name: name) }
            try limits.checkPixels(width: width, height: height, name: name, format: "PNG")
        }
        var result = cpng_result()
        let code = bytes.withUnsafeBufferPointer { buffer in
            cpng_decode_rgb8(buffer.baseAddress, buffer.count, UInt32(maxDimension), UInt64(limits.maxPixels), &result)
        }
        let message = String(cString: cpng_result_message(&result))
        let width = Int(result.width), height = Int(result.height)
        switch Int(code) {
        case Int(CPNG_OK): break
        case Int(CPNG_TRUNCATED): throw ImageError(.truncated, file: name, "PNG is truncated: \(message)")
        case Int(CPNG_TOO_LARGE): throw tooLarge(width: width, height: height, name: name)
        case Int(CPNG_OVER_BUDGET): throw limits.overBudget(width: width, height: height, name: name, format: "PNG")
        case Int(CPNG_OUT_OF_MEMORY): throw ImageError(.corrupt, file: name, "PNG of \(width)x\(height): \(message)")
        default:
            throw ImageError(.corrupt, file: name, "corrupt PNG: \(message)")
        }
        defer { free(result.pixels) }
        return RGBImage(checkedWidth: width, height: height,
                        pixels: Array(UnsafeBufferPointer(start: result.pixels, count: width * height * 3)))
    }

    // MARK: - JPEG

    static func decodeJPEG(_ bytes: [UInt8], name: String, limits: ImageLimits) throws(ImageError) -> RGBImage {
        // Scans counted from the markers first: a repeated scan is refused before one is decoded.
        // The frame's size is checked before that, so a file over both limits names its size.
        let markers = JPEGMarkers(bytes, stoppingAfter: limits.maxScans)
        if let width = markers.width, let height = markers.height, width > 0, height > 0 {
            if width > maxDimension || height > maxDimension { throw tooLarge(width: width, height: height, name: name) }
            try limits.checkPixels(width: width, height: height, name: name, format: "JPEG")
        }
        if markers.scans > limits.maxScans {
            let size = markers.width.flatMap { width in markers.height.map { "\(width)x\($0)" } } ?? "unknown size"
            throw tooManyScans(size: size, name: name, limits: limits)
        }
        var result = cjpeg_result()
        let code = bytes.withUnsafeBufferPointer { buffer in
            cjpeg_decode(buffer.baseAddress, buffer.count, UInt32(maxDimension), UInt64(limits.maxPixels),
                         Int32(clamping: limits.maxScans), limits.decoderMemory, &result)
        }
        let message = String(cString: cjpeg_result_message(&result))
        let width = Int(result.width), height = Int(result.height)
        switch Int(code) {
        case Int(CJPEG_OK): break
        case Int(CJPEG_TRUNCATED): throw ImageError(.truncated, file: name, "JPEG is truncated: \(message)")
        case Int(CJPEG_TOO_LARGE): throw tooLarge(width: width, height: height, name: name)
        case Int(CJPEG_OVER_BUDGET): throw limits.overBudget(width: width, height: height, name: name, format: "JPEG")
        case Int(CJPEG_TOO_MANY_SCANS): throw tooManyScans(size: "\(width)x\(height)", name: name, limits: limits)
        case Int(CJPEG_UNSUPPORTED): throw ImageError(.unsupported, file: name, "unsupported JPEG: \(message); supported: gray, YCbCr/RGB, CMYK/YCCK")
        case Int(CJPEG_OUT_OF_MEMORY): throw ImageError(.corrupt, file: name, "JPEG of \(width)x\(height): \(message)")
        default:
            if message.lowercased().contains("empty jpeg image") {
                throw ImageError(.badDimensions, file: name, "JPEG has a zero size: \(message)")
            }
            throw ImageError(.corrupt, file: name, "corrupt JPEG: \(message)")
        }
        defer { free(result.pixels) }
        let count = width * height
        let source = UnsafeBufferPointer(start: result.pixels, count: count * Int(result.channels))
        var pixels = [UInt8](repeating: 0, count: count * 3)
        switch result.channels {
        case 3:
            pixels.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: source.baseAddress!, count: count * 3) }
        case 1:
            for index in 0..<count {
                let value = source[index]
                pixels[3 * index] = value; pixels[3 * index + 1] = value; pixels[3 * index + 2] = value
            }
        case 4:
            // ref: PIL JpegImagePlugin (rawmode "CMYK;I", "assume adobe conventions": the stored
            // samples are inverted CMYK) then libImaging/Convert.c cmyk2rgb.
            for index in 0..<count {
                let inverseBlack = Int(source[4 * index + 3])  // 255 - k, with k = 255 - stored
                for channel in 0..<3 {
                    let cyan = 255 - Int(source[4 * index + channel])
                    pixels[3 * index + channel] = UInt8(clamping: PILMath.cmykComponent(cyan, inverseBlack: inverseBlack))
                }
            }
        default:
            throw ImageError(.unsupported, file: name, "JPEG decoded to \(result.channels) channels")
        }
        return RGBImage(checkedWidth: width, height: height, pixels: pixels)
    }

    static func tooManyScans(size: String, name: String, limits: ImageLimits) -> ImageError {
        ImageError(.overLimit, file: name, "progressive JPEG of \(size) has more than \(limits.maxScans) scans "
                   + "(ImageLimits.maxScans); encoders write about 10, so it is not decoded")
    }

    static func tooLarge(width: Int, height: Int, name: String) -> ImageError {
        ImageError(.badDimensions, file: name, "image is \(width)x\(height); the limit is \(maxDimension) pixels a side")
    }

    // MARK: - Writing

    /// Writes an 8-bit RGB PNG atomically (temporary sibling, then rename).
    public static func writePNG(_ image: RGBImage, to path: String, policy: OutputPolicy = .replace) throws(ImageError) {
        try writePNG(pixels: image.pixels, width: image.width, height: image.height, channels: 3, to: path, policy: policy)
    }

    /// Writes an 8-bit gray PNG (`pixels` is `height * width` bytes, row-major) atomically.
    public static func writeGrayPNG(pixels: [UInt8], width: Int, height: Int, to path: String,
                                    policy: OutputPolicy = .replace) throws(ImageError) {
        try writePNG(pixels: pixels, width: width, height: height, channels: 1, to: path, policy: policy)
    }

    static func writePNG(pixels: [UInt8], width: Int, height: Int, channels: Int, to path: String,
                         policy: OutputPolicy) throws(ImageError) {
        guard width > 0, height > 0, width <= maxDimension, height <= maxDimension else {
            throw ImageError(.invalidArgument, file: path, "cannot write a \(width)x\(height) PNG (1...\(maxDimension) a side)")
        }
        guard pixels.count == width * height * channels else {
            throw ImageError(.invalidArgument, file: path, "\(pixels.count) bytes for a \(width)x\(height) image of \(channels) channel(s)")
        }
        var message = [CChar](repeating: 0, count: 256)
        var encoded: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        let status = pixels.withUnsafeBufferPointer { buffer in
            message.withUnsafeMutableBufferPointer { text in
                cpng_encode_8bit(buffer.baseAddress, UInt32(width), UInt32(height), Int32(channels), &encoded, &size,
                                 text.baseAddress, text.count)
            }
        }
        defer { free(encoded) }
        guard status == 0, let encoded else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImageError(.writeFailed, file: path, "cannot encode PNG: \(reason)")
        }
        // Through the package's one output writer (temporary, fsync, rename); what may stand at `path` is OutputRule's.
        do { try AtomicFile.write(UnsafeRawBufferPointer(start: encoded, count: size), to: path, policy: policy) } catch {
            throw ImageError(error.code == .outputRefused ? .outputRefused : .writeFailed, file: path, error.message)
        }
    }

    // MARK: - Files

    static func readFile(_ path: String, limits: ImageLimits = .default) throws(ImageError) -> [UInt8] {
        let (descriptor, status) = try openRegularFile(path)
        defer { close(descriptor) }
        guard Int(status.st_size) <= limits.maxFileBytes else {
            throw ImageError(.overLimit, file: path, "the file has \(status.st_size) bytes; an image within the pixel budget "
                             + "(\(limits.maxPixels) pixels) has at most \(limits.maxFileBytes)")
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(Int(status.st_size))
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ImageError(.unreadable, file: path, "read failed: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= limits.maxFileBytes else {
                throw ImageError(.overLimit, file: path, "the file grew past \(limits.maxFileBytes) bytes while it was read")
            }
        }
        return bytes
    }
}

@inline(__always)
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// Pillow's integer helpers, where a decode or conversion must match it bit for bit.
enum PILMath {
    /// ref: libImaging/Convert.c cmyk2rgb: `CLIP8(nk - MULDIV255(c, nk))`, with `nk = 255 - k`
    /// and MULDIV255(a, b) = ((a*b + 128) >> 8 + (a*b + 128)) >> 8.
    @inline(__always)
    static func cmykComponent(_ c: Int, inverseBlack nk: Int) -> Int {
        let product = c * nk + 128
        return nk - (((product >> 8) + product) >> 8)
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}

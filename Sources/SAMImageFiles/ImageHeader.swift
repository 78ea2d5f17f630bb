#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SAMFiles
import SAMImage

/// What a PNG or JPEG file declares about itself before its pixels: the format (from the signature)
/// and the width and height (PNG's IHDR, JPEG's start-of-frame segment). Read without decoding, from
/// as few bytes as hold it; a JPEG is read up to its frame header, which precedes the first scan.
public struct ImageHeader: Sendable, Equatable {
    /// The format the file's signature announces.
    public var format: ImageIO.Format
    /// Columns, in pixels, as the header declares them.
    public var width: Int
    /// Rows, in pixels, as the header declares them.
    public var height: Int

    /// A header of `format` declaring `width` x `height` pixels.
    public init(format: ImageIO.Format, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }
}

extension ImageIO {
    /// The header of the image at `path`: only a regular file is opened (never waited on), and it
    /// must start with a PNG or JPEG signature and declare a non-zero size. The same width and height
    /// as `read(path)` returns for an image it decodes.
    public static func header(_ path: String) throws(ImageError) -> ImageHeader {
        let (descriptor, _) = try openRegularFile(path)
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var ended = false
        /// Reads the next chunk; false at the end of the file.
        func readMore() throws(ImageError) -> Bool {
            while true {
                let count = chunk.withUnsafeMutableBytes { headerRead(descriptor, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ImageError(.unreadable, file: path, "read failed: \(String(cString: strerror(errno)))")
                }
                if count == 0 { ended = true; return false }
                bytes.append(contentsOf: chunk[0..<count])
                return true
            }
        }
        _ = try readMore()
        while bytes.count < 8, !ended { _ = try readMore() }
        guard let format = sniff(bytes) else {
            if bytes.isEmpty { throw ImageError(.unsupported, file: path, "empty file; supported: PNG, JPEG") }
            let head = bytes.prefix(8).map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ")
            throw ImageError(.unsupported, file: path, "not a PNG or JPEG image (starts with \(head)); supported: PNG, JPEG")
        }
        switch format {
        case .png:
            while bytes.count < 24, !ended { _ = try readMore() }
            guard bytes.count >= 24, Array(bytes[12..<16]) == Array("IHDR".utf8) else {
                throw ImageError(.corrupt, file: path, "PNG has no IHDR chunk after its signature")
            }
            let width = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }
            let height = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
            guard width > 0, height > 0 else {
                throw ImageError(.badDimensions, file: path, "PNG declares a zero size (\(width)x\(height))")
            }
            return ImageHeader(format: .png, width: width, height: height)
        case .jpeg:
            // The frame header comes before the first scan; stop the walk there and read on only while
            // neither has been met (large EXIF or ICC segments can push it past the first chunk).
            while true {
                let markers = JPEGMarkers(bytes, stoppingAfter: 0)
                if let width = markers.width, let height = markers.height {
                    guard width > 0, height > 0 else {
                        throw ImageError(.badDimensions, file: path, "JPEG declares a zero size (\(width)x\(height))")
                    }
                    return ImageHeader(format: .jpeg, width: width, height: height)
                }
                let readOn = markers.scans == 0 && !ended ? try readMore() : false
                if !readOn {
                    throw ImageError(.corrupt, file: path, "JPEG has no frame header (SOF) before its first scan")
                }
            }
        }
    }

    /// nil for a regular file, else what stands there.
    /// `path` opened for reading, with its status: only a regular file (O_NONBLOCK: opening a FIFO
    /// must not wait for a writer; fstat refuses it). The caller closes the descriptor.
    static func openRegularFile(_ path: String) throws(ImageError) -> (descriptor: Int32, status: stat) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ImageError(.unreadable, file: path, "cannot open: \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ImageError(.unreadable, file: path, "cannot stat: \(reason)")
        }
        if let kind = OutputRule.kind(status.st_mode) {
            close(descriptor)
            throw ImageError(.unreadable, file: path, "not a regular file (\(kind))")
        }
        return (descriptor, status)
    }
}

@inline(__always)
private func headerRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

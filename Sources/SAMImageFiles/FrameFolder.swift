#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SAMImage

/// A video as a folder of numbered frames: what SAM 2's `init_state(video_path=folder)` reads
/// (sam2/utils/misc.py load_video_frames_from_jpg_images), PNG allowed too.
///
/// The frames are the folder's files named `<number>.<jpg|jpeg|png>` (extension in any case),
/// ordered by the number's integer value (`00012.jpg` is 12, after `9.jpg`), as upstream's
/// `sort(key=lambda p: int(os.path.splitext(p)[0]))`. A frame's position in that order, from 0, is
/// upstream's `frame_idx`; the number itself only orders and names (`00005.jpg`, `00010.jpg` are
/// positions 0 and 1). Names starting with `.` are skipped. Where upstream silently skips what is
/// not a JPEG, everything else is refused, naming the file: another extension, a name that is not
/// digits only (no sign, spaces or underscores, which Python's `int` would take), two files of the
/// same number, a subfolder, a special file, a dangling link. Links to frames are followed; the
/// listing reads this folder only, never a subfolder.
///
/// Listing reads no pixels and no headers. `frame(at:)` decodes one frame through `ImageIO.read`;
/// `checkSizes` reads only headers, so a tool can refuse a folder before it writes anything.
public struct FrameFolder: Sendable, Equatable {
    /// One frame file.
    public struct Frame: Sendable, Equatable {
        /// The file name (`00012.jpg`).
        public var name: String
        /// The file name without its extension (`00012`), for naming what is made from the frame.
        public var stem: String
        /// The stem's integer value (12), which orders the frames.
        public var number: Int
        /// The path read.
        public var path: String
    }

    /// Extensions of frame files (compared lowercased).
    public static let frameExtensions: Set<String> = ["jpg", "jpeg", "png"]
    /// Longest frame number read: 18 digits always fit an Int.
    static let maximumDigits = 18

    /// The folder, as given.
    public let folder: String
    /// The frames in upstream's order: by number.
    public let frames: [Frame]

    /// The number of frames.
    public var count: Int { frames.count }
    /// The frames' stems in order, for output names.
    public var stems: [String] { frames.map(\.stem) }

    /// Lists `folder` (a directory, or a link to one).
    public init(_ folder: String) throws(FrameFolderError) {
        var status = stat()
        guard stat(folder, &status) == 0 else {
            throw FrameFolderError(.notAFolder, file: folder, "cannot open the frame folder: \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw FrameFolderError(.notAFolder, file: folder, "not a folder; video frames are read from a folder of numbered JPEG or PNG files")
        }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder) } catch {
            throw FrameFolderError(.notAFolder, file: folder, "cannot list the frame folder: \(error.localizedDescription)")
        }
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        // UTF-8 byte order, so the first problem reported does not depend on the listing's order.
        let visible = names.filter { !$0.hasPrefix(".") }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var frames: [Frame] = []
        frames.reserveCapacity(visible.count)
        var byNumber: [Int: String] = [:]
        for name in visible {
            let path = base + name
            let frame = try Self.frame(named: name, path: path)
            if let other = byNumber.updateValue(name, forKey: frame.number) {
                throw FrameFolderError(.duplicateFrame, file: path, "frame number \(frame.number) is also \(other); each number may name one frame")
            }
            frames.append(frame)
        }
        guard !frames.isEmpty else {
            throw FrameFolderError(.empty, file: folder, "no frames; a frame is a file named by its number, as 00000.jpg (.jpg, .jpeg or .png)")
        }
        frames.sort { $0.number < $1.number }
        self.folder = folder
        self.frames = frames
    }

    /// `name` as a frame, or the error saying why it is not one.
    static func frame(named name: String, path: String) throws(FrameFolderError) -> Frame {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw FrameFolderError(.unexpectedEntry, file: path, "cannot be read as a frame: \(String(cString: strerror(errno)))")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw FrameFolderError(.unexpectedEntry, file: path, "a subfolder; frames are the folder's own files, read without recursion")
        default: throw FrameFolderError(.unexpectedEntry, file: path, "not a regular file; frames are JPEG or PNG files")
        }
        guard let dot = name.lastIndex(of: "."), Self.frameExtensions.contains(name[name.index(after: dot)...].lowercased()) else {
            throw FrameFolderError(.unexpectedEntry, file: path, "not a frame (.jpg, .jpeg or .png); a frame folder holds only its frames")
        }
        let stem = String(name[..<dot])
        guard !stem.isEmpty, stem.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw FrameFolderError(.badFrameName, file: path, "'\(stem)' is not a frame number; frames are named by their number, digits only, as 00012.jpg")
        }
        let digits = stem.drop { $0 == "0" }
        guard digits.count <= maximumDigits, let number = digits.isEmpty ? 0 : Int(digits) else {
            throw FrameFolderError(.badFrameName, file: path, "frame number \(stem) has more than \(maximumDigits) significant digits")
        }
        return Frame(name: name, stem: stem, number: number, path: path)
    }

    /// Decodes the frame at `position` (0..<count), as `Image.open(path).convert("RGB")`. A frame
    /// of another size than the first frame's is an error naming both sizes; the first frame's is
    /// taken from its header, a read of a few bytes.
    public func frame(at position: Int, limits: ImageLimits = .default) throws(FrameFolderError) -> RGBImage {
        guard frames.indices.contains(position) else {
            throw FrameFolderError(.invalidArgument, file: folder, "frame position \(position) is outside 0..<\(count)")
        }
        let path = frames[position].path
        let image: RGBImage
        do { image = try ImageIO.read(path, limits: limits) } catch { throw FrameFolderError(reading: error, frame: path) }
        if position > 0 {
            let first = try header(of: 0)
            if first.width != image.width || first.height != image.height {
                throw sizeMismatch(position: position, width: image.width, height: image.height, first: first)
            }
        }
        return image
    }

    /// Every frame's header, read without decoding: the frames' common size, or the first frame
    /// that is unreadable, over `limits`, or of another size than the first.
    public func checkSizes(limits: ImageLimits = .default) throws(FrameFolderError) -> ImageSize {
        let first = try header(of: 0, limits: limits)
        for position in frames.indices.dropFirst() {
            let header = try header(of: position, limits: limits)
            if header.width != first.width || header.height != first.height {
                throw sizeMismatch(position: position, width: header.width, height: header.height, first: first)
            }
        }
        return ImageSize(height: first.height, width: first.width)
    }

    /// The header of the frame at `position`, held to `limits` when given (as `ImageIO.read` would).
    private func header(of position: Int, limits: ImageLimits? = nil) throws(FrameFolderError) -> ImageHeader {
        let path = frames[position].path
        let header: ImageHeader
        do { header = try ImageIO.header(path) } catch { throw FrameFolderError(reading: error, frame: path) }
        if let limits {
            do throws(ImageError) {
                if header.width > ImageIO.maxDimension || header.height > ImageIO.maxDimension {
                    throw ImageIO.tooLarge(width: header.width, height: header.height, name: path)
                }
                try limits.checkPixels(width: header.width, height: header.height, name: path, format: header.format.rawValue.uppercased())
            } catch { throw FrameFolderError(reading: error, frame: path) }
        }
        return header
    }

    private func sizeMismatch(position: Int, width: Int, height: Int, first: ImageHeader) -> FrameFolderError {
        FrameFolderError(.sizeMismatch, file: frames[position].path,
                         "frame \(position) is \(width)x\(height) (WxH) but the first frame (\(frames[0].name)) is "
                         + "\(first.width)x\(first.height); every frame of a video must have the same size")
    }
}

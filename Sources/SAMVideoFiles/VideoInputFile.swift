#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The video file, opened once: a regular file's descriptor and size. Every demuxer reads through
/// this descriptor only, so a path replaced after opening is never read.
final class VideoInputFile: @unchecked Sendable {
    let path: String
    let descriptor: Int32
    let size: Int64

    init(_ path: String) throws(VideoFileError) {
        // A FIFO would block an open without O_NONBLOCK and a read with it: refuse anything not
        // regular from stat, before opening, and again from the opened descriptor.
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw VideoFileError(.unreadable, file: path, "cannot open the video: \(String(cString: strerror(errno)))")
        }
        try Self.checkRegular(status, path: path)
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw VideoFileError(.unreadable, file: path, "cannot open the video: \(String(cString: strerror(errno)))")
        }
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw VideoFileError(.unreadable, file: path, "cannot read the video: \(reason)")
        }
        do { try Self.checkRegular(status, path: path) } catch {
            close(descriptor)
            throw error
        }
        guard status.st_size > 0 else {
            close(descriptor)
            throw VideoFileError(.notAVideo, file: path, "an empty file, not a video")
        }
        self.path = path
        self.descriptor = descriptor
        size = Int64(status.st_size)
    }

    private static func checkRegular(_ status: stat, path: String) throws(VideoFileError) {
        switch status.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: throw VideoFileError(.notAFile, file: path, "a folder, not a video file")
        default: throw VideoFileError(.notAFile, file: path, "not a regular file (a FIFO, device or socket); only video files are read")
        }
    }

    deinit { close(descriptor) }
}

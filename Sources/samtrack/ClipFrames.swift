#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SAMImage
import SAMImageFiles
import SAMPipeline
import SAMVideoFiles

/// samtrack's FRAMES: a folder of numbered frames or a video file, told apart by what the path is
/// (stat follows links), with the stems outputs are named by.
struct ClipFrames {
    let source: any VideoFrameSource
    /// Per frame, the name its outputs take: a folder's file stems, a video's zero-padded positions.
    let stems: [String]

    init(_ path: String, limits: ImageLimits) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw TrackFailure("\(path): cannot open the frames: \(String(cString: strerror(errno)))")
        }
        switch status.st_mode & S_IFMT {
        case S_IFDIR:
            let folder = try FolderFrames(path, limits: limits)
            source = folder
            stems = folder.folder.stems
        case S_IFREG:
            let video = try VideoFile(path, limits: limits)
            source = video
            stems = video.stems
        default:
            throw TrackFailure("\(path): not a folder of frames or a video file (a FIFO, device or socket)")
        }
    }
}

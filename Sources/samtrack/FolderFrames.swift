import SAMImage
import SAMImageFiles
import SAMPipeline

/// A folder of numbered frames as the tracker reads it: one frame at a time, every frame's size
/// checked from its header before tracking starts.
struct FolderFrames: VideoFrameSource {
    let folder: FrameFolder
    let frameSize: ImageSize
    let limits: ImageLimits

    init(_ path: String, limits: ImageLimits) throws(FrameFolderError) {
        folder = try FrameFolder(path)
        self.limits = limits
        frameSize = try folder.checkSizes(limits: limits)
    }

    var frameCount: Int { folder.count }

    /// `FrameFolder` refuses a frame of another size than the first, naming both.
    func frame(at index: Int) throws -> RGBImage { try folder.frame(at: index, limits: limits) }
}

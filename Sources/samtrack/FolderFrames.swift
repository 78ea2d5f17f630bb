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

    func frame(at index: Int) throws -> RGBImage {
        let image = try folder.frame(at: index, limits: limits)
        guard image.size == frameSize else {
            throw FrameFolderError(.sizeMismatch, file: folder.frames[index].path,
                                   "is \(image.size), the first frame is \(frameSize): every frame of a clip has one size")
        }
        return image
    }
}

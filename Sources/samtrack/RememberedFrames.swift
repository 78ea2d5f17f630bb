import SAMImage
import SAMPipeline
import Synchronization

/// A clip that keeps the last frame it decoded: the tracker reads a frame for its features, then
/// samtrack reads it again for the overlay, which a folder's JPEG or PNG would decode twice.
final class RememberedFrames: VideoFrameSource {
    let source: any VideoFrameSource
    private let last = Mutex<(index: Int, image: RGBImage)?>(nil)

    init(_ source: any VideoFrameSource) { self.source = source }

    var frameCount: Int { source.frameCount }
    var frameSize: ImageSize { source.frameSize }

    func frame(at index: Int) throws -> RGBImage {
        if let last = last.withLock({ $0 }), last.index == index { return last.image }
        let image = try source.frame(at: index)
        last.withLock { $0 = (index, image) }
        return image
    }
}

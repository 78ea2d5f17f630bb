import SAMImage

/// The frames of a clip, read one at a time (a folder of JPEG/PNG files, a decoder, frames in
/// memory). Every frame has `frameSize`; the tracker keeps none of them.
public protocol VideoFrameSource: Sendable {
    /// How many frames the clip has (more than 0 for tracking).
    var frameCount: Int { get }
    /// The size every frame has, in pixels.
    var frameSize: ImageSize { get }
    /// The frame at `index` (0 ..< frameCount); an error names the frame.
    func frame(at index: Int) throws -> RGBImage
}

/// Frames held in memory (tests, an app's camera buffer).
public struct InMemoryFrames: VideoFrameSource, Sendable {
    /// The frames, in clip order.
    public let frames: [RGBImage]

    /// Frames of one size, in clip order; throws `TrackingError.frames` for none or mixed sizes.
    public init(_ frames: [RGBImage]) throws(TrackingError) {
        guard let first = frames.first else { throw .frames("no frames") }
        guard let other = frames.firstIndex(where: { $0.size != first.size }) else {
            self.frames = frames
            return
        }
        throw .frames("frame \(other) is \(frames[other].size), frame 0 is \(first.size): every frame of a clip has one size")
    }

    /// How many frames there are.
    public var frameCount: Int { frames.count }
    /// The first frame's size, which every frame has.
    public var frameSize: ImageSize { frames[0].size }
    /// The frame at `index` (0 ..< frameCount).
    public func frame(at index: Int) throws -> RGBImage { frames[index] }
}

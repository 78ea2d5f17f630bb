import CFFmpeg
import Foundation
import SAMFiles
import SAMImage
import SAMPipeline

/// A video file as the tracker reads it: MP4, MOV, MKV, WebM, AVI and whatever else Debian's
/// libavformat opens, its best video stream decoded by libavcodec and converted to RGB as
/// `ffmpeg -i VIDEO -pix_fmt rgb24` converts it (`RGBConverter`). Frames are as stored: no
/// rotation from the container's display matrix, no aspect-ratio correction.
///
/// Opening decodes every frame once: the frame count is what decodes (a container's declared count
/// can be wrong), each frame is held to `limits` and to the first frame's size, and a damaged or
/// cut-off file is refused before anything is tracked. Only each frame's timestamp, keyframe flag
/// and pixel checksum are kept (`FrameIndex`), and the last few frames decoded (`RecentFrames`),
/// so memory stays bounded by the frame size, not the clip's length.
///
/// `frame(at:)` decodes forward from where the decoder stands; a frame behind it, or far ahead,
/// is reached by seeking to the last keyframe at or before it and decoding forward, the frames
/// recognised by timestamp and checked against their checksums; when the container cannot seek,
/// or a check fails, the file is decoded again from its first frame. Only the given file is read:
/// the demuxer reads through its opened descriptor and may open nothing else (playlists, external
/// references). Calls are serialized; one decoder serves them.
public final class VideoFile: VideoFrameSource, @unchecked Sendable {
    /// The file, as given.
    public let path: String
    public let frameCount: Int
    public let frameSize: ImageSize
    /// The budget every frame is held to.
    public let limits: ImageLimits
    /// libavcodec's name of the decoder (`h264`, `vp9`).
    public let codecName: String

    private let input: VideoInputFile
    private let index: FrameIndex
    private let lock = NSLock()
    private var decoder: VideoDecoder?
    /// The position of the frame `decoder` hands out next.
    private var nextPosition = 0
    private let converter = RGBConverter()
    private var recent: RecentFrames
    /// How requests were served, for tests: decoders opened at the first frame, seeks that held.
    private(set) var rewinds = 0
    private(set) var seeks = 0

    /// Opens `path` and decodes it once (see the type's notes). `cacheBytes` bounds the recently
    /// decoded frames kept (at least one is).
    public init(_ path: String, limits: ImageLimits = .default, cacheBytes: Int = 64 << 20) throws(VideoFileError) {
        self.path = path
        self.limits = limits
        input = try VideoInputFile(path)
        let decoder = try VideoDecoder(input, limits: limits)
        codecName = decoder.codecName
        if let end = decoder.indexEntryPastEnd(fileSize: input.size) {
            throw VideoFileError(.truncated, file: path, "the container places frame data up to byte \(end), past the file's end at "
                                 + "\(input.size) (truncated)")
        }
        var records: [FrameIndex.Record] = []
        var size: ImageSize?
        do throws(VideoFileError) {
            while try decoder.next() {
                let image = try Self.image(from: decoder, position: records.count, firstSize: size, converter: converter, limits: limits)
                size = size ?? image.size
                records.append(FrameIndex.Record(timestamp: decoder.frameTimestamp, isKeyframe: decoder.frameIsKeyframe,
                                                 checksum: Self.checksum(image)))
            }
        } catch { throw error.at(frame: records.count) }
        guard let size else { throw VideoFileError(.undecodable, file: path, "no frame decodes from the video stream") }
        index = FrameIndex(records)
        frameCount = records.count
        frameSize = size
        recent = RecentFrames(byteBudget: cacheBytes, frameBytes: size.width * size.height * 3)
    }

    /// Output names for the frames: their positions zero-padded to at least 5 digits (`00012`).
    public var stems: [String] { (0..<frameCount).map { Self.stem(position: $0, frameCount: frameCount) } }

    /// The stem of frame `position` in a clip of `frameCount` frames: as wide as the count's digits, at least 5.
    public static func stem(position: Int, frameCount: Int) -> String {
        let digits = String(position)
        let width = max(5, String(frameCount).count)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The frame at `position` (0..<frameCount), the pixels the first decode gave.
    public func frame(at position: Int) throws(VideoFileError) -> RGBImage {
        guard (0..<frameCount).contains(position) else {
            throw VideoFileError(.invalidArgument, file: path, "frame position \(position) is outside 0..<\(frameCount)")
        }
        lock.lock()
        defer { lock.unlock() }
        if let image = recent.image(at: position) { return image }
        let keyframe = index.keyframe(atOrBefore: position)
        if decoder != nil, nextPosition <= position, (keyframe ?? 0) <= nextPosition {
            return try decodeForward(to: position)
        }
        if let keyframe, keyframe > 0, let image = seekAndDecode(from: keyframe, to: position) { return image }
        return try rewindAndDecode(to: position)
    }

    /// Decodes on from `nextPosition` to `target`, converting the frames the cache will keep.
    private func decodeForward(to target: Int) throws(VideoFileError) -> RGBImage {
        guard let decoder else { return try rewindAndDecode(to: target) }
        do throws(VideoFileError) {
            while nextPosition <= target {
                let position = nextPosition
                guard try decoder.next() else {
                    throw VideoFileError(.changed, file: path, "the video ends before this frame; it had \(frameCount) frames when opened")
                }
                nextPosition += 1
                if position > target - recent.capacity {
                    let image = try Self.image(from: decoder, position: position, firstSize: frameSize, converter: converter, limits: limits)
                    guard Self.checksum(image) == index.records[position].checksum else {
                        throw VideoFileError(.changed, file: path, "the frame decodes to other pixels than when the file was opened")
                    }
                    recent.insert(image, at: position)
                }
            }
        } catch {
            self.decoder = nil
            throw error.at(frame: nextPosition)
        }
        return recent.image(at: target)!
    }

    /// Seeks to `keyframe` and decodes on to `target`; nil when the seek does not land where the
    /// index says or any frame differs (the caller then decodes from the first frame).
    private func seekAndDecode(from keyframe: Int, to target: Int) -> RGBImage? {
        guard let timestamp = index.records[keyframe].timestamp else { return nil }
        let decoder: VideoDecoder
        do { decoder = try self.decoder ?? VideoDecoder(input, limits: limits) } catch { return nil }
        self.decoder = nil
        guard decoder.seek(toKeyframeAtOrBefore: timestamp) else { return nil }
        var previous: Int?
        do {
            while try decoder.next() {
                guard let position = index.position(of: decoder.frameTimestamp), position <= target || previous != nil else { return nil }
                if let previous {
                    guard position == previous + 1 else { return nil }
                } else if !(decoder.frameIsKeyframe && index.records[position].isKeyframe) {
                    continue  // frames before the decoder's first keyframe may reference what was skipped
                }
                previous = position
                if position > target - recent.capacity {
                    let image = try Self.image(from: decoder, position: position, firstSize: frameSize, converter: converter, limits: limits)
                    guard Self.checksum(image) == index.records[position].checksum else { return nil }
                    recent.insert(image, at: position)
                }
                if position == target {
                    self.decoder = decoder
                    nextPosition = target + 1
                    seeks += 1
                    return recent.image(at: target)
                }
            }
        } catch { return nil }
        return nil
    }

    /// Opens a new decoder at the first frame and decodes on to `target`.
    private func rewindAndDecode(to target: Int) throws(VideoFileError) -> RGBImage {
        decoder = try VideoDecoder(input, limits: limits)
        nextPosition = 0
        rewinds += 1
        return try decodeForward(to: target)
    }

    /// The decoder's current frame as RGB, held to `limits` and the first frame's size.
    private static func image(from decoder: VideoDecoder, position: Int, firstSize: ImageSize?, converter: RGBConverter,
                              limits: ImageLimits) throws(VideoFileError) -> RGBImage {
        let width = Int(decoder.frame.pointee.width), height = Int(decoder.frame.pointee.height)
        try VideoDecoder.check(width: width, height: height, limits: limits, path: decoder.path, what: "the decoder gives")
        if let firstSize, firstSize != ImageSize(height: height, width: width) {
            throw VideoFileError(.sizeMismatch, file: decoder.path, frame: position,
                                 "the frame is \(width)x\(height) (WxH) but the first frame is \(firstSize.width)x\(firstSize.height); "
                                 + "every frame of a video must have the same size")
        }
        guard let image = converter.convert(decoder.frame) else {
            let format = av_get_pix_fmt_name(AVPixelFormat(rawValue: decoder.frame.pointee.format)).map { String(cString: $0) } ?? "unknown"
            throw VideoFileError(.undecodable, file: decoder.path, frame: position, "libswscale cannot convert its pixel format \(format) to RGB")
        }
        return image
    }

    private static func checksum(_ image: RGBImage) -> UInt32 {
        image.pixels.withUnsafeBytes { CRC32.checksum($0) }
    }
}

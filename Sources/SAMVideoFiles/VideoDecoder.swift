import CFFmpeg
import SAMImage

/// One demuxer and decoder over a video file's best video stream, handing out its frames in
/// display order. Not thread-safe: `VideoFile` serializes its use. Freed with everything it holds.
final class VideoDecoder {
    let path: String
    /// The decoded frame `next()` filled, valid until the next call.
    let frame: UnsafeMutablePointer<AVFrame>
    /// The decoder's codec name (`h264`).
    private(set) var codecName = ""
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var streamIndex: Int32 = -1
    /// The demuxer has no packet left and the decoder is draining.
    private var draining = false

    /// Opens `input`'s best video stream for decoding. Frames the stream declares over `limits`
    /// are refused here, before any is decoded, and the decoder itself refuses larger pictures.
    init(_ input: VideoInputFile, limits: ImageLimits) throws(VideoFileError) {
        path = input.path
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            throw VideoFileError(.unreadable, file: input.path, "out of memory opening the decoder")
        }
        self.frame = frame
        self.packet = packet
        var format: UnsafeMutablePointer<AVFormatContext>?
        let opened = cffmpeg_open_input(input.descriptor, input.size, input.path, &format)
        guard opened >= 0, let format else {
            throw VideoFileError(.notAVideo, file: path, "libavformat does not open it as a video: \(ffmpegErrorText(opened))")
        }
        self.format = format
        let info = avformat_find_stream_info(format, nil)
        guard info >= 0 else {
            throw VideoFileError(.notAVideo, file: path, "libavformat cannot read its streams: \(ffmpegErrorText(info))")
        }
        var decoder: UnsafePointer<AVCodec>?
        let best = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0)
        if best == cffmpeg_error_stream_not_found() {
            throw VideoFileError(.noVideoStream, file: path, "no video stream in the file")
        }
        if best == cffmpeg_error_decoder_not_found() {
            let id = Self.firstVideoCodec(format)
            throw VideoFileError(.unsupportedCodec, file: path, "no decoder for its video codec \(String(cString: avcodec_get_name(id)))")
        }
        guard best >= 0, let decoder else {
            throw VideoFileError(.noVideoStream, file: path, "no video stream to decode: \(ffmpegErrorText(best))")
        }
        streamIndex = best
        codecName = String(cString: decoder.pointee.name)
        for index in 0..<Int(format.pointee.nb_streams) where index != Int(best) {
            format.pointee.streams[index]!.pointee.discard = AVDISCARD_ALL
        }
        let stream = format.pointee.streams[Int(best)]!
        let parameters = stream.pointee.codecpar!
        try Self.check(width: Int(parameters.pointee.width), height: Int(parameters.pointee.height), limits: limits, path: path,
                       what: "the video stream declares")
        guard let codec = avcodec_alloc_context3(decoder) else {
            throw VideoFileError(.unreadable, file: path, "out of memory opening the decoder")
        }
        self.codec = codec
        let copied = avcodec_parameters_to_context(codec, parameters)
        guard copied >= 0 else {
            throw VideoFileError(.undecodable, file: path, "the video stream's parameters are refused: \(ffmpegErrorText(copied))")
        }
        codec.pointee.pkt_timebase = stream.pointee.time_base
        codec.pointee.max_pixels = Int64(clamping: limits.maxPixels)
        codec.pointee.thread_count = 1
        let started = avcodec_open2(codec, decoder, nil)
        guard started >= 0 else {
            throw VideoFileError(.unsupportedCodec, file: path, "the \(codecName) decoder does not start: \(ffmpegErrorText(started))")
        }
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&codec)
        cffmpeg_close_input(&format)
    }

    /// `width` x `height` within `limits` and `RGBImage.maxDimension` (0 is "not declared").
    static func check(width: Int, height: Int, limits: ImageLimits, path: String, what: String) throws(VideoFileError) {
        guard width > 0, height > 0 else { return }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if width > RGBImage.maxDimension || height > RGBImage.maxDimension || overflow || pixels > limits.maxPixels {
            throw VideoFileError(.overLimit, file: path, "\(what) \(width)x\(height) (WxH) frames; the limit is \(limits.maxPixels) pixels "
                                 + "(ImageLimits.maxPixels; samtrack --max-pixels) and \(RGBImage.maxDimension) a side")
        }
    }

    /// The codec of the first video stream, for naming one that has no decoder.
    private static func firstVideoCodec(_ format: UnsafeMutablePointer<AVFormatContext>) -> AVCodecID {
        for index in 0..<Int(format.pointee.nb_streams) {
            let parameters = format.pointee.streams[index]!.pointee.codecpar!
            if parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO { return parameters.pointee.codec_id }
        }
        return AV_CODEC_ID_NONE
    }

    /// The first byte offset the container's index places past the file's end, if any: the file
    /// was cut after its index was written (an MP4 with its index first, an AVI's header).
    func indexEntryPastEnd(fileSize: Int64) -> Int64? {
        guard let format else { return nil }
        let stream = format.pointee.streams[Int(streamIndex)]!
        for entry in 0..<avformat_index_get_entries_count(stream) {
            guard let found = avformat_index_get_entry(stream, entry)?.pointee else { continue }
            let end = found.pos + Int64(found.size)
            if found.pos >= 0, end > fileSize { return end }
        }
        return nil
    }

    /// Decodes the next frame into `frame`; false at the end of the stream. An error names the
    /// file; the caller knows which frame it was.
    func next() throws(VideoFileError) -> Bool {
        guard let codec, let format, let packet else { return false }
        while true {
            let received = avcodec_receive_frame(codec, frame)
            if received == 0 {
                if cffmpeg_frame_is_corrupt(frame) != 0 {
                    throw failure(.undecodable, "the decoder reports the frame's data damaged")
                }
                return true
            }
            if received == cffmpeg_error_eof() { return false }
            guard received == cffmpeg_error_again() else {
                throw failure(.undecodable, "the \(codecName) decoder cannot decode it: \(ffmpegErrorText(received))")
            }
            if draining { return false }
            let read = av_read_frame(format, packet)
            if read == cffmpeg_error_eof() {
                draining = true
                _ = avcodec_send_packet(codec, nil)
                continue
            }
            guard read >= 0 else { throw failure(.undecodable, "libavformat cannot read the video's data: \(ffmpegErrorText(read))") }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            if cffmpeg_packet_is_corrupt(packet) != 0 { throw failure(.undecodable, "the demuxer reports the frame's data damaged") }
            let sent = avcodec_send_packet(codec, packet)
            guard sent >= 0 else { throw failure(.undecodable, "the \(codecName) decoder refuses the frame's data: \(ffmpegErrorText(sent))") }
        }
    }

    /// An error at the current read; a damaged read that reached the file's end is a cut-off file.
    private func failure(_ code: VideoFileError.Code, _ message: String) -> VideoFileError {
        if cffmpeg_input_reached_end(format) != 0 {
            return VideoFileError(.truncated, file: path, "the file ends inside the frame's data (truncated): \(message)")
        }
        return VideoFileError(code, file: path, message)
    }

    /// Whether the frame in `frame` is one decoding can start from.
    var frameIsKeyframe: Bool { frame.pointee.key_frame != 0 }

    /// The frame's presentation time (libavcodec's best effort), or nil when the stream has none.
    var frameTimestamp: Int64? {
        let value = frame.pointee.best_effort_timestamp
        return value == cffmpeg_no_pts() ? nil : value
    }

    /// Moves the demuxer to the keyframe at or before `timestamp` (stream time base) and empties
    /// the decoder; false when the demuxer cannot seek (the decoder is then unusable).
    func seek(toKeyframeAtOrBefore timestamp: Int64) -> Bool {
        guard let format, let codec else { return false }
        guard av_seek_frame(format, streamIndex, timestamp, AVSEEK_FLAG_BACKWARD) >= 0 else { return false }
        avcodec_flush_buffers(codec)
        draining = false
        return true
    }
}

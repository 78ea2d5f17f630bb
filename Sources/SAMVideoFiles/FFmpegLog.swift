import CFFmpeg

/// FFmpeg's own messages (to stderr at its default level). Process-wide, so the library leaves it
/// alone; a tool that reports every problem as a `VideoFileError` silences it.
public enum FFmpegLog {
    /// Stops libav*'s messages for the rest of the process.
    public static func silence() { av_log_set_level(AV_LOG_QUIET) }
}

/// FFmpeg's description of an AVERROR code.
func ffmpegErrorText(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    if av_strerror(code, &buffer, buffer.count) < 0 { return "error \(code)" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

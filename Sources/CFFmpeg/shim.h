// FFmpeg's demuxing, decoding and pixel conversion (Debian's libavformat, libavcodec, libswscale,
// libavutil, linked dynamically; their licence is in NOTICE). Its error codes and sentinels are macros Swift cannot
// import, and the input must be read only through one already opened file: these static-inline
// shims give Swift both.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

static inline int cffmpeg_error_again(void) { return AVERROR(EAGAIN); }
static inline int cffmpeg_error_eof(void) { return AVERROR_EOF; }
static inline int cffmpeg_error_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int cffmpeg_error_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int64_t cffmpeg_no_pts(void) { return AV_NOPTS_VALUE; }
static inline int cffmpeg_frame_is_corrupt(const AVFrame *frame) {
    return (frame->flags & AV_FRAME_FLAG_CORRUPT) != 0 || frame->decode_error_flags != 0;
}
static inline int cffmpeg_packet_is_corrupt(const AVPacket *packet) { return (packet->flags & AV_PKT_FLAG_CORRUPT) != 0; }

/// The one file a demuxer may read: a descriptor read with pread at our own offset (so several
/// demuxers can share it), its size fixed at open, and whether a read reached its end.
typedef struct {
    int descriptor;
    int64_t size;
    int64_t position;
    int reached_end;
} cffmpeg_file;

static int cffmpeg_file_read(void *opaque, uint8_t *buffer, int count) {
    cffmpeg_file *file = (cffmpeg_file *)opaque;
    if (file->position >= file->size) { file->reached_end = 1; return AVERROR_EOF; }
    int64_t left = file->size - file->position;
    if (count > left) { count = (int)left; }
    ssize_t got;
    do { got = pread(file->descriptor, buffer, (size_t)count, (off_t)file->position); } while (got < 0 && errno == EINTR);
    if (got < 0) { return AVERROR(errno); }
    if (got == 0) { file->reached_end = 1; return AVERROR_EOF; }
    file->position += got;
    return (int)got;
}

static int64_t cffmpeg_file_seek(void *opaque, int64_t offset, int whence) {
    cffmpeg_file *file = (cffmpeg_file *)opaque;
    int64_t target;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return file->size;
    case SEEK_SET: target = offset; break;
    case SEEK_CUR: target = file->position + offset; break;
    case SEEK_END: target = file->size + offset; break;
    default: return AVERROR(EINVAL);
    }
    if (target < 0) { return AVERROR(EINVAL); }
    file->position = target;
    return target;
}

/// Demuxers that would open another file or URL (playlists, references) are refused.
static int cffmpeg_refuse_io_open(struct AVFormatContext *context, AVIOContext **pb, const char *url, int flags,
                                  AVDictionary **options) {
    (void)context; (void)pb; (void)url; (void)flags; (void)options;
    return AVERROR(EPERM);
}

/// Opens a demuxer on `descriptor` (a regular file of `size` bytes, left open: the caller owns it)
/// that reads nothing else; `name` only names the input and hints its format by extension. On
/// success *context holds the demuxer, freed by cffmpeg_close_input; on failure an AVERROR.
static inline int cffmpeg_open_input(int descriptor, int64_t size, const char *name, AVFormatContext **context) {
    *context = NULL;
    cffmpeg_file *file = (cffmpeg_file *)calloc(1, sizeof(cffmpeg_file));
    const int buffer_size = 1 << 16;
    uint8_t *buffer = (uint8_t *)av_malloc(buffer_size);
    AVFormatContext *format = avformat_alloc_context();
    AVIOContext *io = NULL;
    if (file && buffer && format) {
        file->descriptor = descriptor;
        file->size = size;
        io = avio_alloc_context(buffer, buffer_size, 0, file, cffmpeg_file_read, NULL, cffmpeg_file_seek);
    }
    if (!io) {
        av_free(buffer); free(file); avformat_free_context(format);
        return AVERROR(ENOMEM);
    }
    format->pb = io;
    format->io_open = cffmpeg_refuse_io_open;
    // Demuxers that open nested inputs without io_open (concat) inherit this list: no protocol at
    // all, so they open nothing. Our own input is custom I/O and needs none.
    AVDictionary *options = NULL;
    av_dict_set(&options, "protocol_whitelist", "none", 0);
    int result = avformat_open_input(&format, name, NULL, &options);  // frees format on failure
    av_dict_free(&options);
    if (result < 0) {
        av_freep(&io->buffer);
        avio_context_free(&io);
        free(file);
        return result;
    }
    *context = format;
    return 0;
}

/// Whether a read of the input reached the end of its file (a cut-off file shows so).
static inline int cffmpeg_input_reached_end(const AVFormatContext *context) {
    return context && context->pb && ((cffmpeg_file *)context->pb->opaque)->reached_end;
}

/// Closes a demuxer from cffmpeg_open_input (the descriptor stays open).
static inline void cffmpeg_close_input(AVFormatContext **context) {
    if (!*context) { return; }
    AVIOContext *io = (*context)->pb;
    avformat_close_input(context);
    if (io) {
        free(io->opaque);
        av_freep(&io->buffer);
        avio_context_free(&io);
    }
}

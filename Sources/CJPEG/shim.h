// libjpeg reports fatal errors through error_exit, which must not return: the usual answer is
// longjmp, which Swift cannot survive. This shim keeps setjmp/longjmp inside C: one call
// decodes a whole JPEG held in memory and returns a status code and a message.
//
// Settings match Pillow's JPEG decoder for `Image.open(path)`: libjpeg's defaults (islow
// IDCT, fancy upsampling, no block smoothing change), colour space chosen by libjpeg from the
// markers, output RGB for YCbCr/RGB files, gray for gray files and CMYK for CMYK/YCCK files
// (converted to RGB by the caller as Pillow's "CMYK;I" + convert("RGB") does). EXIF
// orientation is not applied, as `Image.open` does not apply it. A file that ends early is an
// error (Pillow raises "image file is truncated"), not gray-filled rows, and decoding stops at
// the first read past the end rather than decoding the rest of the image as gray.
//
// Limits, so a small hostile file cannot take unbounded time or memory: the declared
// width * height is checked against a pixel budget right after the header (before any pixel or
// coefficient memory exists); a progressive file may have at most `max_scans` scans (counted by
// a progress monitor while libjpeg reads them: a file whose last scan repeats thousands of times
// would otherwise be decoded scan after scan); libjpeg's own allocations are capped at
// `max_memory` bytes (its coefficient buffers are the large ones: 2 bytes per sample).
#include <stdio.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

enum {
    CJPEG_OK = 0,
    CJPEG_CORRUPT = 1,
    CJPEG_TRUNCATED = 2,
    CJPEG_TOO_LARGE = 3,
    CJPEG_OUT_OF_MEMORY = 4,
    CJPEG_UNSUPPORTED = 5,
    /// width * height exceeds the caller's pixel budget (checked from the header).
    CJPEG_OVER_BUDGET = 6,
    /// A progressive file with more scans than the caller allows.
    CJPEG_TOO_MANY_SCANS = 7,
};

typedef struct {
    int code;
    char message[JMSG_LENGTH_MAX + 64];
    unsigned width;
    unsigned height;
    /// 1 (gray), 3 (RGB) or 4 (CMYK, as stored by Adobe applications: inverted).
    int channels;
    /// width * height * channels bytes from malloc, owned by the caller once CJPEG_OK is returned.
    unsigned char *pixels;
    /// Scans read when decoding stopped (progressive files).
    int scans;
} cjpeg_result;

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int truncated;
    int too_many_scans;
} cjpeg_error_manager;

typedef struct {
    struct jpeg_progress_mgr base;
    int max_scans;
} cjpeg_progress_manager;

static void cjpeg_error_exit(j_common_ptr info) {
    cjpeg_error_manager *manager = (cjpeg_error_manager *)info->err;
    longjmp(manager->jump, 1);
}

static void cjpeg_emit_message(j_common_ptr info, int level) {
    cjpeg_error_manager *manager = (cjpeg_error_manager *)info->err;
    if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) {
        // Reading past the end: stop now instead of decoding the rest of the image as gray.
        manager->truncated = 1;
        longjmp(manager->jump, 1);
    }
}

/// Called by libjpeg while it reads a multi-scan file, at least once per row of MCUs.
static void cjpeg_progress(j_common_ptr common) {
    j_decompress_ptr info = (j_decompress_ptr)common;
    cjpeg_progress_manager *progress = (cjpeg_progress_manager *)info->progress;
    if (info->input_scan_number > progress->max_scans) {
        cjpeg_error_manager *manager = (cjpeg_error_manager *)info->err;
        manager->too_many_scans = 1;
        longjmp(manager->jump, 1);
    }
}

static int cjpeg_decode(const unsigned char *data, size_t size, unsigned max_dimension, unsigned long long max_pixels,
                        int max_scans, long max_memory, cjpeg_result *result) {
    struct jpeg_decompress_struct info;
    cjpeg_error_manager manager;
    cjpeg_progress_manager progress;
    memset(result, 0, sizeof(*result));
    memset(&info, 0, sizeof(info));
    memset(&manager, 0, sizeof(manager));
    memset(&progress, 0, sizeof(progress));
    info.err = jpeg_std_error(&manager.base);
    manager.base.error_exit = cjpeg_error_exit;
    manager.base.emit_message = cjpeg_emit_message;
    progress.base.progress_monitor = cjpeg_progress;
    progress.max_scans = max_scans;
    // Written after setjmp and read after a longjmp back to it, so volatile.
    unsigned char *volatile pixels = NULL;

    if (setjmp(manager.jump)) {
        result->scans = info.input_scan_number;
        if (manager.too_many_scans) {
            snprintf(result->message, sizeof(result->message), "more than %d scans", max_scans);
            result->code = CJPEG_TOO_MANY_SCANS;
        } else if (manager.truncated) {
            strcpy(result->message, "the file ends before the image data does");
            result->code = CJPEG_TRUNCATED;
        } else {
            manager.base.format_message((j_common_ptr)&info, result->message);
            result->code = CJPEG_CORRUPT;
        }
        free(pixels);
        jpeg_destroy_decompress(&info);
        result->pixels = NULL;
        return result->code;
    }
    jpeg_create_decompress(&info);
    if (max_memory > 0) {
        info.mem->max_memory_to_use = max_memory;
    }
    info.progress = &progress.base;
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    result->width = info.image_width;
    result->height = info.image_height;
    if (info.image_width > max_dimension || info.image_height > max_dimension) {
        jpeg_destroy_decompress(&info);
        result->code = CJPEG_TOO_LARGE;
        strcpy(result->message, "image dimensions exceed the limit");
        return result->code;
    }
    if ((unsigned long long)info.image_width * (unsigned long long)info.image_height > max_pixels) {
        jpeg_destroy_decompress(&info);
        result->code = CJPEG_OVER_BUDGET;
        strcpy(result->message, "image exceeds the pixel budget");
        return result->code;
    }
    switch (info.jpeg_color_space) {
    case JCS_GRAYSCALE:
        info.out_color_space = JCS_GRAYSCALE;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        info.out_color_space = JCS_RGB;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        info.out_color_space = JCS_CMYK;
        break;
    default:
        jpeg_destroy_decompress(&info);
        result->code = CJPEG_UNSUPPORTED;
        snprintf(result->message, sizeof(result->message), "JPEG colour space %d with %d components",
                 (int)info.jpeg_color_space, info.num_components);
        return result->code;
    }
    jpeg_start_decompress(&info);
    int channels = info.output_components;
    size_t rowBytes = (size_t)info.output_width * (size_t)channels;
    pixels = (unsigned char *)malloc(rowBytes * info.output_height + 1);
    if (!pixels) {
        jpeg_destroy_decompress(&info);
        result->code = CJPEG_OUT_OF_MEMORY;
        strcpy(result->message, "cannot allocate the decoded image");
        return result->code;
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + (size_t)info.output_scanline * rowBytes;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    result->scans = info.input_scan_number;
    result->width = info.output_width;
    result->height = info.output_height;
    result->channels = channels;
    result->pixels = pixels;
    jpeg_destroy_decompress(&info);
    result->code = CJPEG_OK;
    return CJPEG_OK;
}

static inline const char *cjpeg_result_message(const cjpeg_result *result) { return result->message; }

// libjpeg reports fatal errors through error_exit, which must not return: the usual answer is
// longjmp, which Swift cannot survive. This shim keeps setjmp/longjmp inside C: one call
// decodes a whole JPEG held in memory and returns a status code and a message.
//
// Settings match Pillow's JPEG decoder for `Image.open(path)`: libjpeg's defaults (islow
// IDCT, fancy upsampling, no block smoothing change), colour space chosen by libjpeg from the
// markers, output RGB for YCbCr/RGB files, gray for gray files and CMYK for CMYK/YCCK files
// (converted to RGB by the caller as Pillow's "CMYK;I" + convert("RGB") does). EXIF
// orientation is not applied, as `Image.open` does not apply it. A file that ends early is an
// error (Pillow raises "image file is truncated"), not gray-filled rows.
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
} cjpeg_result;

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int truncated;
} cjpeg_error_manager;

static void cjpeg_error_exit(j_common_ptr info) {
    cjpeg_error_manager *manager = (cjpeg_error_manager *)info->err;
    longjmp(manager->jump, 1);
}

static void cjpeg_emit_message(j_common_ptr info, int level) {
    cjpeg_error_manager *manager = (cjpeg_error_manager *)info->err;
    if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) {
        manager->truncated = 1;
    }
}

static int cjpeg_decode(const unsigned char *data, size_t size, unsigned max_dimension, cjpeg_result *result) {
    struct jpeg_decompress_struct info;
    cjpeg_error_manager manager;
    memset(result, 0, sizeof(*result));
    memset(&info, 0, sizeof(info));
    memset(&manager, 0, sizeof(manager));
    info.err = jpeg_std_error(&manager.base);
    manager.base.error_exit = cjpeg_error_exit;
    manager.base.emit_message = cjpeg_emit_message;
    // Written after setjmp and read after a longjmp back to it, so volatile.
    unsigned char *volatile pixels = NULL;

    if (setjmp(manager.jump)) {
        manager.base.format_message((j_common_ptr)&info, result->message);
        free(pixels);
        jpeg_destroy_decompress(&info);
        result->code = manager.truncated ? CJPEG_TRUNCATED : CJPEG_CORRUPT;
        result->pixels = NULL;
        return result->code;
    }
    jpeg_create_decompress(&info);
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
    if (manager.truncated) {
        free(pixels);
        jpeg_destroy_decompress(&info);
        result->code = CJPEG_TRUNCATED;
        strcpy(result->message, "the file ends before the image data does");
        return result->code;
    }
    jpeg_finish_decompress(&info);
    result->width = info.output_width;
    result->height = info.output_height;
    result->channels = channels;
    result->pixels = pixels;
    jpeg_destroy_decompress(&info);
    result->code = CJPEG_OK;
    return CJPEG_OK;
}

static inline const char *cjpeg_result_message(const cjpeg_result *result) { return result->message; }

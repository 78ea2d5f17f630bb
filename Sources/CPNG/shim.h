// libpng reports errors by longjmp-ing out of its error callback, which Swift cannot survive.
// This shim keeps setjmp/longjmp inside C: one call decodes a whole PNG held in memory to
// 8-bit RGB and returns a status code and a message instead of jumping.
//
// The decode reproduces what Pillow gives for `Image.open(path).convert("RGB")` (what
// SamPredictor users feed the model), not what a colour-managed viewer shows:
//   - alpha (RGBA, gray+alpha, palette tRNS, gray/RGB tRNS) is dropped, never composited;
//   - 16-bit RGB, RGBA and gray+alpha keep the high byte of each sample (Pillow's "RGB;16B",
//     "RGBA;16B", "LA;16B" unpackers), while 16-bit gray is clipped to 255 (Pillow opens it as
//     "I;16" and its I;16 -> RGB conversion clamps: 256..65535 all become 255);
//   - gray of 1, 2, 4 bits is scaled to 0..255 (x255, x85, x17), palettes are looked up;
//   - gAMA, cHRM, sRGB and iCCP chunks are ignored (no gamma or colour conversion).
// The simplified API (png_image_*) cannot do this: it converts 16-bit data as linear light
// (or rounds instead of truncating) and composites alpha, so decoding uses the classic API.
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    CPNG_OK = 0,
    CPNG_CORRUPT = 1,
    CPNG_TRUNCATED = 2,
    CPNG_TOO_LARGE = 3,
    CPNG_OUT_OF_MEMORY = 4,
    /// width * height exceeds the caller's pixel budget (checked from the header, before any pixel memory).
    CPNG_OVER_BUDGET = 5,
};

typedef struct {
    int code;
    char message[256];
    unsigned width;
    unsigned height;
    int bitDepth;
    int colorType;
    /// width * height * 3 bytes from malloc, owned by the caller once CPNG_OK is returned.
    unsigned char *pixels;
} cpng_result;

typedef struct {
    const unsigned char *data;
    size_t size;
    size_t offset;
    int truncated;
    jmp_buf jump;
    char message[256];
    /// libpng's first warning; it often says why the error that follows happened.
    char warning[128];
} cpng_context;

static void cpng_error_callback(png_structp png, png_const_charp message) {
    cpng_context *context = (cpng_context *)png_get_error_ptr(png);
    strncpy(context->message, message ? message : "libpng error", sizeof(context->message) - 1);
    context->message[sizeof(context->message) - 1] = 0;
    longjmp(context->jump, 1);
}

static void cpng_warning_callback(png_structp png, png_const_charp message) {
    cpng_context *context = (cpng_context *)png_get_error_ptr(png);
    if (context->warning[0] == 0 && message) {
        strncpy(context->warning, message, sizeof(context->warning) - 1);
    }
}

static void cpng_read_callback(png_structp png, png_bytep out, png_size_t count) {
    cpng_context *context = (cpng_context *)png_get_io_ptr(png);
    if (context->size - context->offset < count) {
        context->truncated = 1;
        png_error(png, "the file ends before the image data does");
    }
    memcpy(out, context->data + context->offset, count);
    context->offset += count;
}

/// Decodes `size` bytes at `data` (a whole PNG file) into `result`. Images wider or taller
/// than `max_dimension` are refused with CPNG_TOO_LARGE, and images of more than `max_pixels`
/// pixels with CPNG_OVER_BUDGET, from the header, before any pixel memory is allocated.
static int cpng_decode_rgb8(const unsigned char *data, size_t size, unsigned max_dimension,
                            unsigned long long max_pixels, cpng_result *result) {
    cpng_context context;
    memset(&context, 0, sizeof(context));
    memset(result, 0, sizeof(*result));
    context.data = data;
    context.size = size;

    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, cpng_error_callback, cpng_warning_callback);
    if (!png) {
        result->code = CPNG_OUT_OF_MEMORY;
        strcpy(result->message, "cannot create a libpng read struct");
        return result->code;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        result->code = CPNG_OUT_OF_MEMORY;
        strcpy(result->message, "cannot create a libpng info struct");
        return result->code;
    }
    // Written after setjmp and read after a longjmp back to it, so volatile.
    unsigned char *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    volatile int sixteenBitGray = 0;

    if (setjmp(context.jump)) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        result->code = context.truncated ? CPNG_TRUNCATED : CPNG_CORRUPT;
        if (context.warning[0]) {
            snprintf(result->message, sizeof(result->message), "%s (%s)", context.message, context.warning);
        } else {
            memcpy(result->message, context.message, sizeof(result->message));
        }
        result->pixels = NULL;
        return result->code;
    }

    png_set_read_fn(png, &context, cpng_read_callback);
    // A bad CRC on any chunk is an error, as Pillow raises for it, not only on critical chunks.
    png_set_crc_action(png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
    // Our own size check below gives the clearer message, so lift libpng's default 1e6 limit.
    png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_read_info(png, info);

    png_uint_32 width = 0, height = 0;
    int bitDepth = 0, colorType = 0, interlace = 0;
    png_get_IHDR(png, info, &width, &height, &bitDepth, &colorType, &interlace, NULL, NULL);
    result->width = width;
    result->height = height;
    result->bitDepth = bitDepth;
    result->colorType = colorType;
    if (width > max_dimension || height > max_dimension) {
        png_destroy_read_struct(&png, &info, NULL);
        result->code = CPNG_TOO_LARGE;
        strcpy(result->message, "image dimensions exceed the limit");
        return result->code;
    }
    if ((unsigned long long)width * (unsigned long long)height > max_pixels) {
        png_destroy_read_struct(&png, &info, NULL);
        result->code = CPNG_OVER_BUDGET;
        strcpy(result->message, "image exceeds the pixel budget");
        return result->code;
    }

    switch (colorType) {
    case PNG_COLOR_TYPE_PALETTE:
        png_set_palette_to_rgb(png);  // also expands tRNS to alpha, stripped below
        break;
    case PNG_COLOR_TYPE_GRAY:
        if (bitDepth < 8) {
            png_set_expand_gray_1_2_4_to_8(png);
        }
        if (bitDepth == 16) {
            sixteenBitGray = 1;  // kept 16-bit big-endian, clipped to 255 below as Pillow does
        } else {
            png_set_gray_to_rgb(png);
        }
        break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
        png_set_gray_to_rgb(png);
        break;
    default:
        break;
    }
    if (bitDepth == 16 && !sixteenBitGray) {
        png_set_strip_16(png);  // high byte, as Pillow's ";16B" unpackers
    }
    // Real alpha channels and tRNS expanded by palette_to_rgb alike.
    png_set_strip_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);

    size_t rowBytes = png_get_rowbytes(png, info);
    size_t expected = sixteenBitGray ? (size_t)width * 2 : (size_t)width * 3;
    if (rowBytes != expected) {
        png_error(png, "unexpected row size after transformations");
    }
    pixels = (unsigned char *)malloc(rowBytes * height + 1);
    rows = (png_bytep *)malloc(sizeof(png_bytep) * height + 1);
    if (!pixels || !rows) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        result->code = CPNG_OUT_OF_MEMORY;
        strcpy(result->message, "cannot allocate the decoded image");
        return result->code;
    }
    for (png_uint_32 y = 0; y < height; y++) {
        rows[y] = pixels + (size_t)y * rowBytes;
    }
    png_read_image(png, rows);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    rows = NULL;

    if (sixteenBitGray) {
        unsigned char *rgb = (unsigned char *)malloc((size_t)width * height * 3 + 1);
        if (!rgb) {
            free(pixels);
            result->code = CPNG_OUT_OF_MEMORY;
            strcpy(result->message, "cannot allocate the decoded image");
            return result->code;
        }
        size_t count = (size_t)width * height;
        for (size_t i = 0; i < count; i++) {
            unsigned value = ((unsigned)pixels[2 * i] << 8) | pixels[2 * i + 1];
            unsigned char clipped = value > 255 ? 255 : (unsigned char)value;
            rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = clipped;
        }
        free(pixels);
        pixels = rgb;
    }
    result->pixels = pixels;
    result->code = CPNG_OK;
    return CPNG_OK;
}

static inline const char *cpng_result_message(const cpng_result *result) { return result->message; }

/// Encodes 8-bit gray (channels 1) or RGB (channels 3) rows as a PNG in memory with the simplified
/// API, which handles libpng's errors internally. On success returns 0 and a malloc'ed buffer in
/// `*out` (`*out_size` bytes, freed by the caller); else fills `message`.
static inline int cpng_encode_8bit(const unsigned char *pixels, unsigned width, unsigned height, int channels,
                                   unsigned char **out, size_t *out_size, char *message, size_t messageSize) {
    png_image image;
    memset(&image, 0, sizeof(image));
    image.version = PNG_IMAGE_VERSION;
    image.width = width;
    image.height = height;
    image.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
    // libpng's fast write (no row filters, zlib level 3): samtrack writes an overlay and a mask for
    // every frame, and the default filter search and level took longer than a tracked frame's heads.
    image.flags = PNG_IMAGE_FLAG_FAST;
    *out = NULL;
    *out_size = 0;
    png_int_32 stride = (png_int_32)(width * (unsigned)channels);
    // One compression into a buffer of libpng's bound for the image, which the PNG never fills.
    png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX(image);
    unsigned char *buffer = (unsigned char *)malloc(size);
    if (!buffer) {
        strncpy(message, "cannot allocate the PNG", messageSize - 1);
        message[messageSize - 1] = 0;
        png_image_free(&image);
        return 1;
    }
    if (png_image_write_to_memory(&image, buffer, &size, 0, pixels, stride, NULL)) {
        *out = buffer;
        *out_size = size;
        return 0;
    }
    free(buffer);
    strncpy(message, image.message[0] ? image.message : "cannot encode the PNG", messageSize - 1);
    message[messageSize - 1] = 0;
    png_image_free(&image);
    return 1;
}

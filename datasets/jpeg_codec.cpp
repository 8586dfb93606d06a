#include "datasets/jpeg_codec.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <jpeglib.h>

#include "datasets/error.h"

namespace cw::data {

namespace {

// libjpeg reports fatal errors by calling error_exit, which by default ends the process; ours jumps back here.
struct ErrorJump {
    jpeg_error_mgr mgr;
    std::jmp_buf back;
    char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr info) {
    auto* err = reinterpret_cast<ErrorJump*>(info->err);
    (*info->err->format_message)(info, err->message);
    std::longjmp(err->back, 1);
}

}  // namespace

std::vector<uint8_t> jpeg_roundtrip(const std::vector<uint8_t>& pixels, int width, int height, int channels,
                                    int quality) {
    if (channels != 1 && channels != 3)
        throw DataError("jpeg_roundtrip: " + std::to_string(channels) + " channels (expected 1 or 3)");
    if (pixels.size() != size_t(width) * height * channels)
        throw DataError("jpeg_roundtrip: " + std::to_string(pixels.size()) + " bytes for a " + std::to_string(width) +
                        "x" + std::to_string(height) + "x" + std::to_string(channels) + " image");
    unsigned char* encoded = nullptr;
    unsigned long encoded_size = 0;
    std::vector<uint8_t> out(pixels.size());
    // Everything the jump may skip lives outside this scope, so longjmp leaves nothing half-built behind.
    jpeg_compress_struct enc{};
    jpeg_decompress_struct dec{};
    ErrorJump err{};
    enc.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = on_error;
    if (setjmp(err.back)) {
        jpeg_destroy_compress(&enc);
        jpeg_destroy_decompress(&dec);
        std::free(encoded);
        throw DataError(std::string("jpeg_compression: libjpeg: ") + err.message);
    }
    jpeg_create_compress(&enc);
    jpeg_mem_dest(&enc, &encoded, &encoded_size);
    enc.image_width = width;
    enc.image_height = height;
    enc.input_components = channels;
    enc.in_color_space = channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&enc);  // YCbCr, luma 2x2 / chroma 1x1 sampling (4:2:0), islow DCT: PIL's defaults
    jpeg_set_quality(&enc, quality, TRUE);
    jpeg_start_compress(&enc, TRUE);
    while (enc.next_scanline < enc.image_height) {
        JSAMPROW row = const_cast<JSAMPROW>(pixels.data() + size_t(enc.next_scanline) * width * channels);
        jpeg_write_scanlines(&enc, &row, 1);
    }
    jpeg_finish_compress(&enc);
    jpeg_destroy_compress(&enc);

    dec.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = on_error;
    jpeg_create_decompress(&dec);
    jpeg_mem_src(&dec, encoded, encoded_size);
    jpeg_read_header(&dec, TRUE);
    dec.out_color_space = channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_start_decompress(&dec);
    while (dec.output_scanline < dec.output_height) {
        JSAMPROW row = out.data() + size_t(dec.output_scanline) * width * channels;
        jpeg_read_scanlines(&dec, &row, 1);
    }
    jpeg_finish_decompress(&dec);
    jpeg_destroy_decompress(&dec);
    std::free(encoded);
    return out;
}

}  // namespace cw::data

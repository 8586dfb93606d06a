#include "datasets/image.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>

#include "datasets/error.h"

namespace cw::data {

namespace {

// Reads one header integer of a PNM file, skipping whitespace and comments.
int pnm_header_int(const uint8_t* data, size_t size, size_t& pos, const std::string& source, const char* what) {
    for (;;) {
        while (pos < size && std::isspace(data[pos])) ++pos;
        if (pos < size && data[pos] == '#') {
            while (pos < size && data[pos] != '\n') ++pos;
            continue;
        }
        break;
    }
    if (pos >= size || !std::isdigit(data[pos])) fail(source, std::string("bad PPM header: expected the ") + what);
    long v = 0;
    while (pos < size && std::isdigit(data[pos])) {
        v = v * 10 + (data[pos++] - '0');
        if (v > 1 << 20) fail(source, std::string("bad PPM header: ") + what + " is too large");
    }
    return static_cast<int>(v);
}

}  // namespace

HwcImage parse_ppm(const uint8_t* data, size_t size, const std::string& source) {
    if (size < 2 || data[0] != 'P' || data[1] != '6')
        fail(source, "not a binary PPM image (expected the magic \"P6\")");
    size_t pos = 2;
    HwcImage img;
    img.width = pnm_header_int(data, size, pos, source, "width");
    img.height = pnm_header_int(data, size, pos, source, "height");
    const int maxval = pnm_header_int(data, size, pos, source, "maxval");
    if (img.width <= 0 || img.height <= 0) fail(source, "PPM image has zero width or height");
    if (maxval <= 0 || maxval > 255)
        fail(source, "PPM maxval " + std::to_string(maxval) + " is not supported (expected 1 to 255)");
    if (pos >= size || !std::isspace(data[pos])) fail(source, "bad PPM header: no whitespace before the pixels");
    ++pos;  // exactly one whitespace byte separates the header from the pixels
    img.channels = 3;
    const size_t need = size_t(img.width) * img.height * 3;
    if (size - pos < need)
        fail(source, "truncated PPM: " + std::to_string(img.width) + "x" + std::to_string(img.height) + " needs " +
                         std::to_string(need) + " pixel bytes, file has " + std::to_string(size - pos));
    img.pixels.assign(data + pos, data + pos + need);
    if (maxval != 255)
        for (auto& p : img.pixels) p = static_cast<uint8_t>(std::min(255, (p * 255 + maxval / 2) / maxval));
    return img;
}

HwcImage decode_image(const uint8_t* data, size_t size, const std::string& source, int channels) {
    if (size > size_t(INT32_MAX)) fail(source, "image file too large");
    int w = 0, h = 0, n = 0;
    stbi_uc* px = stbi_load_from_memory(data, static_cast<int>(size), &w, &h, &n, channels);
    if (!px) fail(source, std::string("cannot decode image (") + stbi_failure_reason() + ")");
    HwcImage img;
    img.width = w;
    img.height = h;
    img.channels = channels;
    img.pixels.assign(px, px + size_t(w) * h * channels);
    stbi_image_free(px);
    return img;
}

HwcImage crop(const HwcImage& img, int x1, int y1, int x2, int y2, const std::string& source) {
    if (x1 < 0 || y1 < 0 || x2 < x1 || y2 < y1 || x2 >= img.width || y2 >= img.height)
        fail(source, "crop box x " + std::to_string(x1) + ".." + std::to_string(x2) + ", y " + std::to_string(y1) +
                         ".." + std::to_string(y2) + " is not inside the " + std::to_string(img.width) + "x" +
                         std::to_string(img.height) + " image");
    HwcImage out;
    out.width = x2 - x1 + 1;
    out.height = y2 - y1 + 1;
    out.channels = img.channels;
    out.pixels.resize(size_t(out.width) * out.height * out.channels);
    const size_t row = size_t(out.width) * out.channels;
    for (int y = 0; y < out.height; ++y)
        std::memcpy(out.pixels.data() + y * row,
                    img.pixels.data() + (size_t(y1 + y) * img.width + x1) * img.channels, row);
    return out;
}

HwcImage resize(const HwcImage& img, int width, int height, const std::string& source) {
    if (img.width == width && img.height == height) return img;
    HwcImage out;
    out.width = width;
    out.height = height;
    out.channels = img.channels;
    out.pixels.resize(size_t(width) * height * img.channels);
    if (!stbir_resize_uint8(img.pixels.data(), img.width, img.height, 0, out.pixels.data(), width, height, 0,
                            img.channels))
        fail(source, "image resize failed");
    return out;
}

void hwc_to_chw(const HwcImage& img, uint8_t* out) {
    const size_t plane = size_t(img.width) * img.height;
    for (size_t p = 0; p < plane; ++p)
        for (int c = 0; c < img.channels; ++c) out[c * plane + p] = img.pixels[p * img.channels + c];
}

}  // namespace cw::data

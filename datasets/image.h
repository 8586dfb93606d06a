#pragma once
// Decoding and resizing of single images for the folder-of-files datasets (GTSRB's PPMs, TinyImageNet's JPEGs).
// Images here are interleaved HWC uint8; loaders transpose to CHW when they store them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cw::data {

struct HwcImage {
    int width = 0, height = 0, channels = 0;
    std::vector<uint8_t> pixels;  // height * width * channels, row-major, channels interleaved
};

// Binary PPM (P6) with maxval <= 255; '#' comments in the header are allowed. Throws DataError naming `source`.
HwcImage parse_ppm(const uint8_t* data, size_t size, const std::string& source);

// JPEG, PNG, BMP or binary PNM through stb_image, converted to `channels` (1 or 3) channels.
HwcImage decode_image(const uint8_t* data, size_t size, const std::string& source, int channels);

// The inclusive rectangle [x1, x2] x [y1, y2] of `img`; throws if it is empty or not inside the image.
HwcImage crop(const HwcImage& img, int x1, int y1, int x2, int y2, const std::string& source);

// Resampled to width x height with stb_image_resize's default filters.
HwcImage resize(const HwcImage& img, int width, int height, const std::string& source);

// HWC -> CHW into `out` (height * width * channels bytes).
void hwc_to_chw(const HwcImage& img, uint8_t* out);

}  // namespace cw::data

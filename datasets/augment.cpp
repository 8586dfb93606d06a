#include "datasets/augment.h"

#include <cstring>
#include <vector>

#include "datasets/error.h"

namespace cw::data {

std::string Augmentation::describe() const {
    std::string s;
    if (random_crop)
        s = "crop(pad " + std::to_string(padding) + ", " + (pad_mode == PadMode::Reflect ? "reflect" : "zeros") + ")";
    if (horizontal_flip) {
        std::string p = std::to_string(flip_probability);
        p.erase(p.find_last_not_of('0') + 1);
        s += (s.empty() ? "" : "+") + std::string("flip(") + p + ")";
    }
    return s.empty() ? "none" : s;
}

Augmentation default_augmentation(const std::string& dataset) {
    Augmentation a;
    if (dataset == "cifar10" || dataset == "cifar100" || dataset == "cifar100-coarse" || dataset == "tinyimagenet") {
        a.random_crop = true;
        a.horizontal_flip = true;
    } else if (dataset == "svhn") {
        a.random_crop = true;
    }
    return a;
}

PadMode parse_pad_mode(const std::string& value) {
    if (value == "reflect" || value.empty()) return PadMode::Reflect;
    if (value == "zeros" || value == "zero") return PadMode::Zeros;
    throw DataError("--pad-mode: '" + value + "' is not a padding mode (expected reflect or zeros)");
}

Augmentation parse_augmentation(const std::string& spec, const std::string& pad_mode, const std::string& dataset) {
    Augmentation a;
    if (spec == "default" || spec.empty()) a = default_augmentation(dataset);
    else if (spec == "crop") a.random_crop = true;
    else if (spec == "flip") a.horizontal_flip = true;
    else if (spec == "crop+flip" || spec == "flip+crop") a.random_crop = a.horizontal_flip = true;
    else if (spec != "none")
        throw DataError("--augment: '" + spec + "' is not an augmentation (expected default, none, crop, flip or crop+flip)");
    a.pad_mode = parse_pad_mode(pad_mode);
    return a;
}

namespace {
// Source coordinate for padded coordinate q (in [-padding, n + padding)), or -1 for a zero pixel.
int source_index(int q, int n, PadMode mode) {
    if (q >= 0 && q < n) return q;
    if (mode == PadMode::Zeros) return -1;
    return q < 0 ? -q : 2 * (n - 1) - q;  // reflect about the edge pixel without repeating it
}
}  // namespace

void crop_padded(const uint8_t* src, uint8_t* dst, int channels, int height, int width, int padding, PadMode mode,
                 int oy, int ox) {
    if (padding < 0 || oy < 0 || ox < 0 || oy > 2 * padding || ox > 2 * padding)
        throw DataError("crop_padded: offset (" + std::to_string(oy) + ", " + std::to_string(ox) +
                        ") outside [0, 2 * padding] for padding " + std::to_string(padding));
    if (mode == PadMode::Reflect && (padding >= height || padding >= width))
        throw DataError("crop_padded: reflect padding " + std::to_string(padding) + " needs images larger than " +
                        std::to_string(padding) + " pixels");
    std::vector<int> col(width);
    for (int x = 0; x < width; ++x) col[x] = source_index(x + ox - padding, width, mode);
    const size_t plane = size_t(height) * width;
    for (int c = 0; c < channels; ++c)
        for (int y = 0; y < height; ++y) {
            const int sy = source_index(y + oy - padding, height, mode);
            uint8_t* out = dst + c * plane + size_t(y) * width;
            if (sy < 0) {
                std::memset(out, 0, width);
                continue;
            }
            const uint8_t* in = src + c * plane + size_t(sy) * width;
            for (int x = 0; x < width; ++x) out[x] = col[x] < 0 ? 0 : in[col[x]];
        }
}

void flip_horizontal(const uint8_t* src, uint8_t* dst, int channels, int height, int width) {
    for (int r = 0; r < channels * height; ++r) {
        const uint8_t* in = src + size_t(r) * width;
        uint8_t* out = dst + size_t(r) * width;
        for (int x = 0; x < width; ++x) out[x] = in[width - 1 - x];
    }
}

void augment_image(const uint8_t* src, uint8_t* dst, int channels, int height, int width, const Augmentation& aug,
                   cw::Rng& rng) {
    const size_t bytes = size_t(channels) * height * width;
    // Checked on every call, not only when an off-centre crop is drawn, so a bad setting fails at once.
    if (aug.random_crop &&
        (aug.padding < 0 || (aug.pad_mode == PadMode::Reflect && (aug.padding >= height || aug.padding >= width))))
        throw DataError("augmentation: padding " + std::to_string(aug.padding) + " is invalid for " +
                        std::to_string(height) + "x" + std::to_string(width) + " images" +
                        (aug.pad_mode == PadMode::Reflect ? " with reflect padding" : ""));
    int oy = aug.padding, ox = aug.padding;
    if (aug.random_crop) {
        oy = static_cast<int>(rng.below(2 * aug.padding + 1));
        ox = static_cast<int>(rng.below(2 * aug.padding + 1));
    }
    const bool flip = aug.horizontal_flip && rng.uniform() < aug.flip_probability;
    if (!aug.random_crop || (oy == aug.padding && ox == aug.padding)) {
        if (flip) flip_horizontal(src, dst, channels, height, width);
        else std::memcpy(dst, src, bytes);
        return;
    }
    if (!flip) {
        crop_padded(src, dst, channels, height, width, aug.padding, aug.pad_mode, oy, ox);
        return;
    }
    std::vector<uint8_t> tmp(bytes);
    crop_padded(src, tmp.data(), channels, height, width, aug.padding, aug.pad_mode, oy, ox);
    flip_horizontal(tmp.data(), dst, channels, height, width);
}

}  // namespace cw::data

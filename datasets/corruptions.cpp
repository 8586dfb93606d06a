#include "datasets/corruptions.h"

#include <algorithm>
#include <cmath>

#include "util/split_list.h"
#include "datasets/corrupt_kinds.h"
#include "datasets/error.h"
#include "datasets/loaders.h"
#include "datasets/parallel.h"

namespace cw::data {

namespace {

using corruption::Kind;

const Kind& kind_of(const std::string& name) {
    static const std::vector<Kind> all = [] {
        std::vector<Kind> v;
        for (auto list : {corruption::noise_kinds(), corruption::blur_kinds(), corruption::weather_kinds(),
                          corruption::frost_kinds(), corruption::spatter_kinds(), corruption::digital_kinds(),
                          corruption::elastic_kinds()})
            v.insert(v.end(), list.begin(), list.end());
        return v;
    }();
    for (const Kind& k : all)
        if (name == k.name) return k;
    throw DataError("corruption: unknown name '" + name + "' (expected one of " + util::join_list(corruption_names()) +
                    ")");
}

void check_image(const ChwImage& image, const std::string& name) {
    if (image.channels <= 0 || image.height <= 0 || image.width <= 0 ||
        image.pixels.size() != size_t(image.channels) * image.height * image.width)
        throw DataError(name + ": image of shape " + std::to_string(image.channels) + "x" +
                        std::to_string(image.height) + "x" + std::to_string(image.width) + " with " +
                        std::to_string(image.pixels.size()) + " values is not a CHW image");
}

// splitmix64 of (seed, index): independent per-image streams that do not depend on the order of the work.
uint64_t image_seed(uint64_t seed, int64_t index) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (uint64_t(index) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

}  // namespace

const std::vector<float>& CorruptionField::get(const std::string& corruption, const std::string& name,
                                               size_t size) const {
    const auto it = arrays.find(name);
    if (it == arrays.end()) throw DataError(corruption + ": random field has no array '" + name + "'");
    if (it->second.size() != size)
        throw DataError(corruption + ": random field '" + name + "' has " + std::to_string(it->second.size()) +
                        " values, expected " + std::to_string(size));
    return it->second;
}

const std::vector<std::string>& corruption_names() { return cifar10c_corruptions(); }

bool is_corruption(const std::string& name) {
    const auto& names = corruption_names();
    return std::find(names.begin(), names.end(), name) != names.end();
}

void check_corruption(const std::string& name, int severity) {
    kind_of(name);
    if (severity < 1 || severity > 5)
        throw DataError(name + ": severity " + std::to_string(severity) + " out of range (expected 1 to 5)");
}

CorruptionField draw_corruption_field(const std::string& name, int severity, int channels, int height, int width,
                                      cw::Rng& rng) {
    check_corruption(name, severity);
    if (channels <= 0 || height <= 0 || width <= 0)
        throw DataError(name + ": image shape " + std::to_string(channels) + "x" + std::to_string(height) + "x" +
                        std::to_string(width) + " is not valid");
    const Kind& k = kind_of(name);
    return k.draw ? k.draw(severity, channels, height, width, rng) : CorruptionField{};
}

ChwImage apply_corruption(const ChwImage& image, const std::string& name, int severity, const CorruptionField& field) {
    check_corruption(name, severity);
    check_image(image, name);
    return kind_of(name).apply(image, severity, field);
}

ChwImage corrupt(const ChwImage& image, const std::string& name, int severity, cw::Rng& rng) {
    check_corruption(name, severity);
    check_image(image, name);
    return apply_corruption(image, name, severity,
                            draw_corruption_field(name, severity, image.channels, image.height, image.width, rng));
}

ChwImage to_float_image(const uint8_t* chw, int channels, int height, int width) {
    ChwImage out(channels, height, width);
    for (size_t i = 0; i < out.pixels.size(); ++i) out.pixels[i] = static_cast<float>(chw[i] / 255.0);
    return out;
}

void to_uint8(const ChwImage& image, uint8_t* chw) {
    for (size_t i = 0; i < image.pixels.size(); ++i)
        chw[i] = static_cast<uint8_t>(std::floor(std::clamp(double(image.pixels[i]), 0.0, 1.0) * 255 + 1e-3));
}

Dataset corrupted(const Dataset& d, const std::string& name, int severity, uint64_t seed) {
    check_corruption(name, severity);
    d.check();
    Dataset out = d;
    out.name = d.name + "/" + name + ":" + std::to_string(severity);
    parallel_for(d.size(), [&](int64_t i) {
        cw::Rng rng(image_seed(seed, i));
        const ChwImage x = to_float_image(d.image(i), d.channels, d.height, d.width);
        to_uint8(corrupt(x, name, severity, rng), out.image(i));
    });
    return out;
}

}  // namespace cw::data

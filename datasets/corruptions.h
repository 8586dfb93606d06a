#pragma once
// Common corruptions: the 19 of CIFAR-10-C (Hendrycks & Dietterich), with the per-severity constants of their
// make_cifar_c.py, on any image: float32 CHW in [0, 1], any size, any channel count. docs/corruptions.md lists
// every corruption, its constants, what we substitute (frost's photographs; ImageMagick's and OpenCV's calls are
// re-implemented to their definitions) and how closely each matches the Python reference.
//
// Every corruption is two steps, so that a test can feed it the exact random numbers of another implementation:
// draw_corruption_field() draws the random field (named float arrays) from an Rng, and apply_corruption() is a
// deterministic function of the image and that field. corrupt() is the two in a row.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "engine/rng.h"

namespace cw::data {

// One image, float32 CHW (channel planes of height x width), values in [0, 1].
struct ChwImage {
    int channels = 0, height = 0, width = 0;
    std::vector<float> pixels;

    ChwImage() = default;
    ChwImage(int c, int h, int w) : channels(c), height(h), width(w), pixels(size_t(c) * h * w, 0.f) {}
    size_t plane_size() const { return size_t(height) * width; }
    float& at(int c, int y, int x) { return pixels[(size_t(c) * height + y) * width + x]; }
    float at(int c, int y, int x) const { return pixels[(size_t(c) * height + y) * width + x]; }
};

// The random numbers one corruption of one image uses, by name. Layouts (per corruption, in docs/corruptions.md)
// are those of the fixtures that tools/make_corruption_fixtures.py writes, e.g. "normal": C*H*W standard normals.
struct CorruptionField {
    std::map<std::string, std::vector<float>> arrays;
    // The array `name`, which must hold exactly `size` values; throws DataError naming `corruption` otherwise.
    const std::vector<float>& get(const std::string& corruption, const std::string& name, size_t size) const;
};

// The 19 names, in CIFAR-10-C's file order (the same list as cifar10c_corruptions()).
const std::vector<std::string>& corruption_names();
bool is_corruption(const std::string& name);

// Throws DataError, one line naming the bad value, for an unknown name or a severity outside 1..5. (The functions
// below also reject an image whose shape is empty or does not match its pixels.)
void check_corruption(const std::string& name, int severity);

CorruptionField draw_corruption_field(const std::string& name, int severity, int channels, int height, int width,
                                      cw::Rng& rng);
// Same shape as `image`, clipped to [0, 1]. Throws DataError if `field` lacks an array or has one of the wrong size.
ChwImage apply_corruption(const ChwImage& image, const std::string& name, int severity, const CorruptionField& field);
ChwImage corrupt(const ChwImage& image, const std::string& name, int severity, cw::Rng& rng);

// uint8 CHW <-> float [0, 1]. to_uint8 truncates like the script's final np.uint8 (CIFAR-10-C was stored that way),
// after adding 0.001 (in 0..255 units) so that float round-off cannot turn an exact k/255 into k-1.
ChwImage to_float_image(const uint8_t* chw, int channels, int height, int width);
void to_uint8(const ChwImage& image, uint8_t* chw);

// Every image of `d` corrupted, as CIFAR-10-C was made from the CIFAR-10 test set: image i draws from its own Rng
// seeded from (seed, i), so the result does not depend on the thread count. Name: "<d.name>/<corruption>:<s>".
Dataset corrupted(const Dataset& d, const std::string& name, int severity, uint64_t seed);

}  // namespace cw::data

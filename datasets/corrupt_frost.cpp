// frost: make_cifar_c.py blends the image with a random 32x32 crop of one of five frost photographs (frost1.png
// ... frost5.jpg, scaled by 0.2), which we cannot ship. Our substitute is a procedural texture with one style
// per photograph: on 32x32 crops of the scaled photograph, each style matches the mean colour, the spread of the
// crop means, the within-crop standard deviation of each channel, and the share of that variation that is
// pixel-to-pixel grain rather than smooth haze. docs/corruptions.md has the measurements and what differs.
#include <algorithm>
#include <cmath>

#include "datasets/corrupt_filters.h"
#include "datasets/corrupt_kinds.h"
#include "datasets/error.h"

namespace cw::data::corruption {

namespace {

struct Blend {
    double image, frost;
};
constexpr Blend kFrost[5] = {{1, 0.2}, {1, 0.3}, {0.9, 0.4}, {0.85, 0.4}, {0.75, 0.45}};

struct Style {
    double mean[3];    // mean colour of a crop
    double spread;     // standard deviation of the crop means (gray), across crops
    double within[3];  // standard deviation inside a crop, per channel
    double grain;      // share of the within-crop deviation that is white grain (the rest is plasma haze)
};
// Measured on frost1..frost5 as the script scales them (cv2.resize by 0.2); frost2.png and frost3.png are the
// same photograph, so two styles are equal, as the script's choice among five files is.
constexpr Style kStyles[5] = {
    {{0.301, 0.581, 0.647}, 0.042, {0.083, 0.051, 0.049}, 0.65},
    {{0.782, 0.800, 0.836}, 0.036, {0.069, 0.070, 0.072}, 0.73},
    {{0.782, 0.800, 0.836}, 0.036, {0.069, 0.070, 0.072}, 0.73},
    {{0.561, 0.619, 0.669}, 0.042, {0.101, 0.102, 0.106}, 0.81},
    {{0.409, 0.453, 0.499}, 0.066, {0.137, 0.136, 0.133}, 0.75},
};
constexpr double kHazeDecay = 2.0;  // plasma roughness of the haze

CorruptionField frost_field(int, int, int h, int w, cw::Rng& rng) {
    CorruptionField f;
    f.arrays["style"] = {static_cast<float>(rng.below(5))};  // the script's np.random.randint(5)
    f.arrays["shift"] = {rng.normal()};
    auto& u = f.arrays["plasma"];
    u.resize(plasma_draws(plasma_size(h, w)));
    rng.fill_uniform(u.data(), u.size(), 0.f, 1.f);
    auto& g = f.arrays["grain"];
    g.resize(size_t(h) * w);
    rng.fill_normal(g.data(), g.size(), 0.f, 1.f);
    return f;
}

// The texture, three planes in [0, 1]: mean + shift + within * (haze and grain mixed to unit variance).
std::vector<Plane> frost_texture(int h, int w, const CorruptionField& f) {
    const float style_value = f.get("frost", "style", 1)[0];
    const int k = static_cast<int>(style_value);
    if (k < 0 || k > 4 || float(k) != style_value)
        throw DataError("frost: field style " + std::to_string(style_value) + " is not one of 0..4");
    const Style& st = kStyles[k];
    const int n = plasma_size(h, w);
    const Plane map = plasma_fractal(n, kHazeDecay, f.get("frost", "plasma", plasma_draws(n)));
    const auto& grain = f.get("frost", "grain", size_t(h) * w);
    Plane haze(h, w);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) haze.at(y, x) = map.at(y, x);
    double mean = 0, var = 0;
    for (double v : haze.v) mean += v;
    mean /= double(haze.v.size());
    for (double v : haze.v) var += (v - mean) * (v - mean);
    const double sd = std::sqrt(var / double(haze.v.size()));
    const double shift = st.spread * double(f.get("frost", "shift", 1)[0]);
    const double a = std::sqrt(1 - st.grain * st.grain);
    std::vector<Plane> tex(3, Plane(h, w));
    for (size_t i = 0; i < haze.v.size(); ++i) {
        const double t = a * (sd > 0 ? (haze.v[i] - mean) / sd : 0.0) + st.grain * double(grain[i]);
        for (int c = 0; c < 3; ++c) tex[c].v[i] = std::clamp(st.mean[c] + shift + st.within[c] * t, 0.0, 1.0);
    }
    return tex;
}

ChwImage frost(const ChwImage& x, int s, const CorruptionField& f) {
    const Blend& b = kFrost[s - 1];
    std::vector<Plane> tex = frost_texture(x.height, x.width, f);
    if (x.channels != 3) {  // an image that is not RGB gets the texture's gray in every channel
        Plane gray(x.height, x.width);
        for (size_t i = 0; i < gray.v.size(); ++i)
            gray.v[i] = tex[0].v[i] * kLuma[0] + tex[1].v[i] * kLuma[1] + tex[2].v[i] * kLuma[2];
        tex.assign(x.channels, gray);
    }
    std::vector<Plane> planes = planes_of(x);
    for (size_t c = 0; c < planes.size(); ++c)
        for (size_t i = 0; i < planes[c].v.size(); ++i) planes[c].v[i] = b.image * planes[c].v[i] + b.frost * tex[c].v[i];
    return image_of(planes);
}

}  // namespace

std::vector<Kind> frost_kinds() { return {{"frost", frost_field, frost}}; }

}  // namespace cw::data::corruption

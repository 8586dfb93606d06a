// Weather: snow and fog (make_cifar_c.py's constants); frost and spatter have files of their own.
#include <algorithm>
#include <cmath>

#include "datasets/corrupt_filters.h"
#include "datasets/corrupt_kinds.h"

namespace cw::data::corruption {

namespace {

// ---- snow: a thresholded, zoomed noise layer streaked by motion blur, added twice (once turned 180 degrees) --
struct Snow {
    double loc, scale, zoom, threshold, radius, sigma, keep;
};
constexpr Snow kSnow[5] = {{0.1, 0.2, 1, 0.6, 8, 3, 0.95},
                           {0.1, 0.2, 1, 0.5, 10, 4, 0.9},
                           {0.15, 0.3, 1.75, 0.55, 10, 4, 0.9},
                           {0.25, 0.3, 2.25, 0.6, 12, 6, 0.85},
                           {0.3, 0.3, 1.25, 0.65, 14, 12, 0.8}};

CorruptionField snow_field(int, int, int h, int w, cw::Rng& rng) {
    CorruptionField f;
    auto& z = f.arrays["normal"];
    z.resize(size_t(h) * w);
    rng.fill_normal(z.data(), z.size(), 0.f, 1.f);
    f.arrays["angle"] = {rng.uniform(-135.f, -45.f)};
    return f;
}

ChwImage snow(const ChwImage& x, int s, const CorruptionField& f) {
    const Snow& c = kSnow[s - 1];
    const int h = x.height, w = x.width;
    const auto& z = f.get("snow", "normal", size_t(h) * w);
    const double angle = f.get("snow", "angle", 1)[0];
    Plane layer(h, w);
    for (size_t i = 0; i < layer.v.size(); ++i) layer.v[i] = c.loc + c.scale * double(z[i]);
    layer = clipped_zoom(layer, c.zoom);
    for (double& v : layer.v) {
        if (v < c.threshold) v = 0;
        v = std::floor(std::clamp(v, 0.0, 1.0) * 255) / 255;  // the script's uint8 for its PNG round trip
    }
    layer = motion_blur(layer, c.radius, c.sigma, angle);
    std::vector<Plane> planes = planes_of(x);
    Plane gray(h, w);
    if (x.channels == 3)
        for (size_t i = 0; i < gray.v.size(); ++i)
            gray.v[i] = planes[0].v[i] * kLuma[0] + planes[1].v[i] * kLuma[1] + planes[2].v[i] * kLuma[2];
    for (Plane& p : planes) {
        const Plane& g = x.channels == 3 ? gray : p;  // an image that is not RGB is its own gray, per channel
        for (int y = 0; y < h; ++y)
            for (int xx = 0; xx < w; ++xx) {
                double v = p.at(y, xx);
                v = c.keep * v + (1 - c.keep) * std::max(v, g.at(y, xx) * 1.5 + 0.5);
                p.at(y, xx) = v + layer.at(y, xx) + layer.at(h - 1 - y, w - 1 - xx);
            }
    }
    return image_of(planes);
}

// ---- fog: plasma-fractal haze, the image rescaled so its brightest value keeps its place ---------------------
struct Fog {
    double amount, wibble_decay;
};
constexpr Fog kFog[5] = {{0.2, 3}, {0.5, 3}, {0.75, 2.5}, {1, 2}, {1.5, 1.75}};

CorruptionField fog_field(int, int, int h, int w, cw::Rng& rng) {
    CorruptionField f;
    auto& u = f.arrays["plasma"];
    u.resize(plasma_draws(plasma_size(h, w)));
    rng.fill_uniform(u.data(), u.size(), 0.f, 1.f);
    return f;
}

ChwImage fog(const ChwImage& x, int s, const CorruptionField& f) {
    const Fog& c = kFog[s - 1];
    const int n = plasma_size(x.height, x.width);
    const Plane haze = plasma_fractal(n, c.wibble_decay, f.get("fog", "plasma", plasma_draws(n)));
    const double top = *std::max_element(x.pixels.begin(), x.pixels.end());
    std::vector<Plane> planes = planes_of(x);
    for (Plane& p : planes)
        for (int y = 0; y < p.h; ++y)
            for (int xx = 0; xx < p.w; ++xx) {
                const double v = p.at(y, xx) + c.amount * haze.at(y, xx);  // the map's top-left corner
                p.at(y, xx) = v * top / (top + c.amount);
            }
    return image_of(planes);
}

}  // namespace

std::vector<Kind> weather_kinds() { return {{"snow", snow_field, snow}, {"fog", fog_field, fog}}; }

}  // namespace cw::data::corruption

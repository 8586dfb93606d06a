// Digital: brightness, contrast, pixelate, jpeg_compression, saturate (make_cifar_c.py's constants).
// brightness and saturate work in scikit-image's HSV; an image that is not RGB is corrupted channel by channel,
// each channel as the gray RGB image (v, v, v) whose result's luma is kept.
#include <algorithm>
#include <cmath>

#include "datasets/corrupt_filters.h"
#include "datasets/corrupt_kinds.h"
#include "datasets/jpeg_codec.h"

namespace cw::data::corruption {

namespace {

// ---- HSV as scikit-image 0.19 computes it ----------------------------------------------------------------
struct Hsv {
    double h, s, v;
};

// numpy's float remainder: the result takes the divisor's sign, so a tiny negative hue becomes (up to) 1.
double py_mod1(double a) {
    double m = std::fmod(a, 1.0);
    if (m != 0 && m < 0) m += 1.0;
    return m;
}

Hsv rgb2hsv(double r, double g, double b) {
    const double v = std::max({r, g, b}), delta = v - std::min({r, g, b});
    if (delta == 0) return {0, 0, v};
    double h = 0;  // later rules win, as skimage assigns them in this order
    if (r == v) h = (g - b) / delta;
    if (g == v) h = 2. + (b - r) / delta;
    if (b == v) h = 4. + (r - g) / delta;
    return {py_mod1(h / 6.), delta / v, v};
}

void hsv2rgb(const Hsv& c, double rgb[3]) {
    const double hi = std::floor(c.h * 6), f = c.h * 6 - hi;
    const double p = c.v * (1 - c.s), q = c.v * (1 - f * c.s), t = c.v * (1 - (1 - f) * c.s), v = c.v;
    switch (static_cast<int>(hi) % 6) {
        case 0: rgb[0] = v, rgb[1] = t, rgb[2] = p; break;
        case 1: rgb[0] = q, rgb[1] = v, rgb[2] = p; break;
        case 2: rgb[0] = p, rgb[1] = v, rgb[2] = t; break;
        case 3: rgb[0] = p, rgb[1] = q, rgb[2] = v; break;
        case 4: rgb[0] = t, rgb[1] = p, rgb[2] = v; break;
        default: rgb[0] = v, rgb[1] = p, rgb[2] = q; break;
    }
}

// Applies `edit` to every pixel's HSV; RGB images directly, others per channel through (v, v, v) and luma.
template <class Edit>
ChwImage in_hsv(const ChwImage& x, Edit edit) {
    ChwImage out = x;
    const size_t n = x.plane_size();
    auto one = [&](double r, double g, double b, double rgb[3]) {
        Hsv c = rgb2hsv(r, g, b);
        edit(c);
        hsv2rgb(c, rgb);
        for (int k = 0; k < 3; ++k) rgb[k] = std::clamp(rgb[k], 0.0, 1.0);
    };
    double rgb[3];
    if (x.channels == 3) {
        for (size_t i = 0; i < n; ++i) {
            one(x.pixels[i], x.pixels[n + i], x.pixels[2 * n + i], rgb);
            for (int k = 0; k < 3; ++k) out.pixels[k * n + i] = static_cast<float>(rgb[k]);
        }
    } else {
        for (size_t i = 0; i < x.pixels.size(); ++i) {
            one(x.pixels[i], x.pixels[i], x.pixels[i], rgb);
            out.pixels[i] = static_cast<float>(
                std::clamp(rgb[0] * kLuma[0] + rgb[1] * kLuma[1] + rgb[2] * kLuma[2], 0.0, 1.0));
        }
    }
    return out;
}

constexpr double kBrightness[5] = {0.05, 0.1, 0.15, 0.2, 0.3};  // added to V

ChwImage brightness(const ChwImage& x, int s, const CorruptionField&) {
    return in_hsv(x, [&](Hsv& c) { c.v = std::clamp(c.v + kBrightness[s - 1], 0.0, 1.0); });
}

struct Saturate {
    double scale, add;  // S -> S * scale + add
};
constexpr Saturate kSaturate[5] = {{0.3, 0}, {0.1, 0}, {1.5, 0}, {2, 0.1}, {2.5, 0.2}};

ChwImage saturate(const ChwImage& x, int s, const CorruptionField&) {
    const Saturate& c = kSaturate[s - 1];
    return in_hsv(x, [&](Hsv& h) { h.s = std::clamp(h.s * c.scale + c.add, 0.0, 1.0); });
}

// ---- contrast: every channel pulled towards its own mean ---------------------------------------------------
constexpr double kContrast[5] = {0.75, 0.5, 0.4, 0.3, 0.15};

ChwImage contrast(const ChwImage& x, int s, const CorruptionField&) {
    std::vector<Plane> planes = planes_of(x);
    for (Plane& p : planes) {
        double mean = 0;
        for (double v : p.v) mean += v;
        mean /= double(p.v.size());
        for (double& v : p.v) v = (v - mean) * kContrast[s - 1] + mean;
    }
    return image_of(planes);
}

// ---- pixelate: PIL's BOX resize down to int(side * c), then back up -----------------------------------------
constexpr double kPixelate[5] = {0.95, 0.9, 0.85, 0.75, 0.65};

struct BoxTaps {
    int first = 0;
    std::vector<double> w;
};

// Pillow's precompute_coeffs for the BOX filter (support 0.5, widened by the scale when shrinking).
std::vector<BoxTaps> box_taps(int in_size, int out_size) {
    const double scale = double(in_size) / out_size, filter_scale = std::max(scale, 1.0);
    const double support = 0.5 * filter_scale, ss = 1.0 / filter_scale;
    std::vector<BoxTaps> taps(out_size);
    for (int o = 0; o < out_size; ++o) {
        const double centre = (o + 0.5) * scale;
        const int lo = std::max(static_cast<int>(centre - support + 0.5), 0);
        const int hi = std::min(static_cast<int>(centre + support + 0.5), in_size);
        BoxTaps& t = taps[o];
        t.first = lo;
        double total = 0;
        for (int i = 0; i < hi - lo; ++i) {
            const double u = (i + lo - centre + 0.5) * ss;
            t.w.push_back(u > -0.5 && u <= 0.5 ? 1.0 : 0.0);
            total += t.w.back();
        }
        if (total != 0)
            for (double& v : t.w) v /= total;
    }
    return taps;
}

// Pillow's resample of a mode 'F' image: horizontal pass, then vertical, each stored as float32.
Plane resize_box(const Plane& p, int out_h, int out_w) {
    Plane mid(p.h, out_w), out(out_h, out_w);
    const std::vector<BoxTaps> tx = box_taps(p.w, out_w), ty = box_taps(p.h, out_h);
    for (int y = 0; y < p.h; ++y)
        for (int x = 0; x < out_w; ++x) {
            double acc = 0;
            for (size_t i = 0; i < tx[x].w.size(); ++i) acc += p.at(y, tx[x].first + int(i)) * tx[x].w[i];
            mid.at(y, x) = static_cast<float>(acc);
        }
    for (int y = 0; y < out_h; ++y)
        for (int x = 0; x < out_w; ++x) {
            double acc = 0;
            for (size_t i = 0; i < ty[y].w.size(); ++i) acc += mid.at(ty[y].first + int(i), x) * ty[y].w[i];
            out.at(y, x) = static_cast<float>(acc);
        }
    return out;
}

ChwImage pixelate(const ChwImage& x, int s, const CorruptionField&) {
    const int small_w = std::max(1, static_cast<int>(x.width * kPixelate[s - 1]));
    const int small_h = std::max(1, static_cast<int>(x.height * kPixelate[s - 1]));
    std::vector<Plane> planes = planes_of(x);
    for (Plane& p : planes) p = resize_box(resize_box(p, small_h, small_w), x.height, x.width);
    return image_of(planes);
}

// ---- jpeg_compression: a real libjpeg round trip ------------------------------------------------------------
constexpr int kQuality[5] = {80, 65, 58, 50, 40};

uint8_t to_byte(float v) { return static_cast<uint8_t>(std::nearbyint(std::clamp(double(v), 0.0, 1.0) * 255)); }

// RGB as one colour JPEG; gray, and every channel of other images, as one-component JPEGs (PIL mode 'L').
ChwImage jpeg_compression(const ChwImage& x, int s, const CorruptionField&) {
    const size_t n = x.plane_size();
    ChwImage out = x;
    const int groups = x.channels == 3 ? 1 : x.channels, per = x.channels == 3 ? 3 : 1;
    for (int g = 0; g < groups; ++g) {
        std::vector<uint8_t> hwc(n * per);
        for (size_t i = 0; i < n; ++i)
            for (int k = 0; k < per; ++k) hwc[i * per + k] = to_byte(x.pixels[(g * per + k) * n + i]);
        const std::vector<uint8_t> back = jpeg_roundtrip(hwc, x.width, x.height, per, kQuality[s - 1]);
        for (size_t i = 0; i < n; ++i)
            for (int k = 0; k < per; ++k) out.pixels[(g * per + k) * n + i] = static_cast<float>(back[i * per + k] / 255.0);
    }
    return out;
}

}  // namespace

std::vector<Kind> digital_kinds() {
    return {{"brightness", nullptr, brightness},
            {"contrast", nullptr, contrast},
            {"pixelate", nullptr, pixelate},
            {"jpeg_compression", nullptr, jpeg_compression},
            {"saturate", nullptr, saturate}};
}

}  // namespace cw::data::corruption

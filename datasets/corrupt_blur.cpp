// Blur: defocus_blur, glass_blur, motion_blur, zoom_blur, gaussian_blur (make_cifar_c.py's constants). Every
// channel is blurred alike; glass_blur moves whole pixels; motion_blur's direction is shared by the channels.
#include <cmath>

#include "datasets/corrupt_filters.h"
#include "datasets/corrupt_kinds.h"
#include "datasets/error.h"

namespace cw::data::corruption {

namespace {

template <class Fn>
ChwImage per_plane(const ChwImage& x, Fn fn) {
    std::vector<Plane> planes = planes_of(x);
    for (Plane& p : planes) p = fn(p);
    return image_of(planes);
}

// ---- gaussian_blur: skimage's gaussian (scipy, 'nearest' border, truncate 4) -------------------------------
constexpr double kGaussianSigma[5] = {0.4, 0.6, 0.7, 0.8, 1.0};

ChwImage gaussian_blur(const ChwImage& x, int s, const CorruptionField&) {
    return per_plane(x, [&](const Plane& p) { return gaussian_filter(p, kGaussianSigma[s - 1], Border::Nearest); });
}

// ---- defocus_blur: an anti-aliased disk -------------------------------------------------------------------
struct Defocus {
    double radius, alias_blur;
};
constexpr Defocus kDefocus[5] = {{0.3, 0.4}, {0.4, 0.5}, {0.5, 0.6}, {1, 0.2}, {1.5, 0.1}};

// cv2.getGaussianKernel(3, sigma) in float32: each tap rounded, then normalised and rounded again.
std::vector<double> cv_gaussian3(double sigma) {
    float t[3];
    double total = 0;
    for (int i = 0; i < 3; ++i) {
        t[i] = static_cast<float>(std::exp(-0.5 / (sigma * sigma) * double((i - 1) * (i - 1))));
        total += t[i];
    }
    std::vector<double> k(3);
    for (int i = 0; i < 3; ++i) k[i] = static_cast<float>(t[i] * (1.0 / total));
    return k;
}

// The script's disk(): on a 17x17 grid (every CIFAR radius is <= 8), the pixels within `radius` of the centre,
// normalised, then cv2.GaussianBlur 3x3 with sigma alias_blur (border reflect-101), all in float32.
std::vector<double> defocus_kernel(const Defocus& d) {
    constexpr int n = 17, half = 8;
    Plane disk(n, n);
    int inside = 0;
    for (int y = -half; y <= half; ++y)
        for (int x = -half; x <= half; ++x)
            if (x * x + y * y <= d.radius * d.radius) ++inside;
    for (int y = -half; y <= half; ++y)
        for (int x = -half; x <= half; ++x)
            if (x * x + y * y <= d.radius * d.radius) disk.at(y + half, x + half) = 1.0f / float(inside);
    const std::vector<double> g = cv_gaussian3(d.alias_blur);
    Plane rows(n, n), both(n, n);
    for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
            double acc = 0;
            for (int i = 0; i < 3; ++i) acc += disk.at(y, fold(x + i - 1, n, Border::Mirror)) * g[i];
            rows.at(y, x) = static_cast<float>(acc);
        }
    for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
            double acc = 0;
            for (int i = 0; i < 3; ++i) acc += rows.at(fold(y + i - 1, n, Border::Mirror), x) * g[i];
            both.at(y, x) = static_cast<float>(acc);
        }
    return both.v;
}

ChwImage defocus_blur(const ChwImage& x, int s, const CorruptionField&) {
    const std::vector<double> kernel = defocus_kernel(kDefocus[s - 1]);
    // cv2.filter2D: correlation, border reflect-101.
    return per_plane(x, [&](const Plane& p) { return correlate(p, kernel, 17, 17, Border::Mirror); });
}

// ---- glass_blur: blur, shuffle pixels locally, blur again ------------------------------------------------
struct Glass {
    double sigma;
    int max_delta, iterations;
};
constexpr Glass kGlass[5] = {{0.05, 1, 1}, {0.25, 1, 1}, {0.4, 1, 1}, {0.25, 1, 2}, {0.4, 1, 2}};

// The script's loop: rows from H - d down to d + 1, columns likewise, each pixel drawing (dx, dy), each uniform
// in [-d, d) (np.random.randint's exclusive high). Unvisited positions keep 0.
CorruptionField glass_field(int s, int, int h, int w, cw::Rng& rng) {
    const Glass& g = kGlass[s - 1];
    CorruptionField f;
    auto& dx = f.arrays["dx"];
    auto& dy = f.arrays["dy"];
    dx.assign(size_t(g.iterations) * h * w, 0.f);
    dy.assign(dx.size(), 0.f);
    for (int it = 0; it < g.iterations; ++it)
        for (int i = h - g.max_delta; i > g.max_delta; --i)
            for (int j = w - g.max_delta; j > g.max_delta; --j) {
                const size_t k = (size_t(it) * h + i) * w + j;
                dx[k] = static_cast<float>(int(rng.below(2 * g.max_delta)) - g.max_delta);
                dy[k] = static_cast<float>(int(rng.below(2 * g.max_delta)) - g.max_delta);
            }
    return f;
}

ChwImage glass_blur(const ChwImage& x, int s, const CorruptionField& f) {
    const Glass& g = kGlass[s - 1];
    const int h = x.height, w = x.width;
    const size_t n = size_t(g.iterations) * h * w;
    const auto& dx = f.get("glass_blur", "dx", n);
    const auto& dy = f.get("glass_blur", "dy", n);
    std::vector<Plane> planes = planes_of(x);
    for (Plane& p : planes) {
        p = gaussian_filter(p, g.sigma, Border::Nearest);
        for (double& v : p.v) v = std::floor(v * 255);  // the script's np.uint8(... * 255) truncates
    }
    // The script writes a tuple swap, x[h, w], x[h', w'] = x[h', w'], x[h, w], of numpy views: the second
    // assignment reads the pixel the first one already overwrote, so the pixel is copied, not swapped.
    for (int it = 0; it < g.iterations; ++it)
        for (int i = h - g.max_delta; i > g.max_delta; --i)
            for (int j = w - g.max_delta; j > g.max_delta; --j) {
                const size_t k = (size_t(it) * h + i) * w + j;
                const int si = i + static_cast<int>(dy[k]), sj = j + static_cast<int>(dx[k]);
                if (si < 0 || si >= h || sj < 0 || sj >= w)
                    throw DataError("glass_blur: field offset (" + std::to_string(int(dx[k])) + ", " +
                                    std::to_string(int(dy[k])) + ") at row " + std::to_string(i) + ", column " +
                                    std::to_string(j) + " leaves the image");
                for (Plane& p : planes) p.at(i, j) = p.at(si, sj);
            }
    for (Plane& p : planes) {
        for (double& v : p.v) v /= 255;
        p = gaussian_filter(p, g.sigma, Border::Nearest);
    }
    return image_of(planes);
}

// ---- motion_blur: ImageMagick's motion blur in a random direction ------------------------------------------
struct Motion {
    double radius, sigma;
};
constexpr Motion kMotion[5] = {{6, 1}, {6, 1.5}, {6, 2}, {8, 2}, {9, 2.5}};

CorruptionField angle_field(int, int, int, int, cw::Rng& rng) {
    CorruptionField f;
    f.arrays["angle"] = {rng.uniform(-45.f, 45.f)};
    return f;
}

ChwImage motion_blur_image(const ChwImage& x, int s, const CorruptionField& f) {
    const double angle = f.get("motion_blur", "angle", 1)[0];
    return per_plane(x, [&](const Plane& p) { return motion_blur(p, kMotion[s - 1].radius, kMotion[s - 1].sigma, angle); });
}

// ---- zoom_blur: the mean of the image and its zooms by 1, 1.01, ... ----------------------------------------
// np.arange(1, stop, 0.01) with stop 1.06, 1.11, 1.16, 1.21, 1.26: float round-off gives 7, 12, 16, 21 and 26
// factors (the first two stops are included).
constexpr int kZoomCount[5] = {7, 12, 16, 21, 26};

ChwImage zoom_blur(const ChwImage& x, int s, const CorruptionField&) {
    // numpy's arange: start, start + step, then start + i * (that second value - start).
    const double second = 1.0 + 0.01, delta = second - 1.0;
    const int n = kZoomCount[s - 1];
    // The script works in float32 here (x.astype(np.float32), out = zeros_like(x)); so do we.
    ChwImage out = x;
    for (int c = 0; c < x.channels; ++c) {
        Plane p(x.height, x.width);
        for (size_t i = 0; i < x.plane_size(); ++i) p.v[i] = x.pixels[c * x.plane_size() + i];
        std::vector<float> sum(x.plane_size(), 0.f);
        for (int k = 0; k < n; ++k) {
            const double z = k == 0 ? 1.0 : k == 1 ? second : 1.0 + k * delta;
            const Plane zoomed = clipped_zoom(p, z);
            for (size_t i = 0; i < sum.size(); ++i) sum[i] += static_cast<float>(zoomed.v[i]);
        }
        for (size_t i = 0; i < sum.size(); ++i) {
            const float v = (x.pixels[c * x.plane_size() + i] + sum[i]) / static_cast<float>(n + 1);
            out.pixels[c * x.plane_size() + i] = std::min(1.f, std::max(0.f, v));
        }
    }
    return out;
}

}  // namespace

std::vector<Kind> blur_kinds() {
    return {{"defocus_blur", nullptr, defocus_blur},
            {"glass_blur", glass_field, glass_blur},
            {"motion_blur", angle_field, motion_blur_image},
            {"zoom_blur", nullptr, zoom_blur},
            {"gaussian_blur", nullptr, gaussian_blur}};
}

}  // namespace cw::data::corruption

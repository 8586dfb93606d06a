// Noise: gaussian_noise, shot_noise, impulse_noise, speckle_noise (make_cifar_c.py's constants). Each element
// of every channel draws independently, so any channel count works as it is.
#include <algorithm>
#include <cmath>
#include <string>

#include "datasets/corrupt_kinds.h"

namespace cw::data::corruption {

namespace {

constexpr double kGaussian[5] = {0.04, 0.06, 0.08, 0.09, 0.10};  // standard deviation
constexpr double kShot[5] = {500, 250, 100, 75, 50};             // photons per unit intensity
constexpr double kImpulse[5] = {0.01, 0.02, 0.03, 0.05, 0.07};   // share of elements flipped
constexpr double kSpeckle[5] = {0.06, 0.1, 0.12, 0.16, 0.2};     // standard deviation, relative

size_t numel(int c, int h, int w) { return size_t(c) * h * w; }

// One value per pixel and channel, standard normal ("normal") or uniform in [0, 1) ("uniform").
CorruptionField per_pixel_field(const std::string& name, int c, int h, int w, cw::Rng& rng) {
    CorruptionField f;
    auto& v = f.arrays[name];
    v.resize(numel(c, h, w));
    if (name == "normal") rng.fill_normal(v.data(), v.size(), 0.f, 1.f);
    else rng.fill_uniform(v.data(), v.size(), 0.f, 1.f);
    return f;
}

CorruptionField normal_field(int, int c, int h, int w, cw::Rng& rng) { return per_pixel_field("normal", c, h, w, rng); }

ChwImage gaussian_noise(const ChwImage& x, int s, const CorruptionField& f) {
    const auto& z = f.get("gaussian_noise", "normal", x.pixels.size());
    ChwImage out = x;
    for (size_t i = 0; i < z.size(); ++i)
        out.pixels[i] = static_cast<float>(std::clamp(double(x.pixels[i]) + double(z[i]) * kGaussian[s - 1], 0.0, 1.0));
    return out;
}

ChwImage speckle_noise(const ChwImage& x, int s, const CorruptionField& f) {
    const auto& z = f.get("speckle_noise", "normal", x.pixels.size());
    ChwImage out = x;
    for (size_t i = 0; i < z.size(); ++i) {
        const double v = x.pixels[i];
        out.pixels[i] = static_cast<float>(std::clamp(v + v * double(z[i]) * kSpeckle[s - 1], 0.0, 1.0));
    }
    return out;
}

// The Poisson draw as its quantile: the smallest k >= 0 with P(K <= k) >= u. With lambda <= 500 the pmf at 0,
// e^-500 ~ 7e-218, is still a normal double, so summing the pmf upwards from 0 is exact enough.
double poisson_quantile(double lambda, double u) {
    if (!(lambda > 0)) return 0;
    double pmf = std::exp(-lambda), cdf = pmf;
    double k = 0;
    while (cdf < u && pmf > 0) {
        k += 1;
        pmf *= lambda / k;
        cdf += pmf;
    }
    return k;
}

CorruptionField uniform_field(int, int c, int h, int w, cw::Rng& rng) { return per_pixel_field("uniform", c, h, w, rng); }

ChwImage shot_noise(const ChwImage& x, int s, const CorruptionField& f) {
    const auto& u = f.get("shot_noise", "uniform", x.pixels.size());
    const double c = kShot[s - 1];
    ChwImage out = x;
    for (size_t i = 0; i < u.size(); ++i)
        out.pixels[i] = static_cast<float>(std::clamp(poisson_quantile(x.pixels[i] * c, u[i]) / c, 0.0, 1.0));
    return out;
}

CorruptionField impulse_field(int, int c, int h, int w, cw::Rng& rng) {
    CorruptionField f;
    for (const char* name : {"flip", "salt"}) {
        auto& u = f.arrays[name];
        u.resize(numel(c, h, w));
        rng.fill_uniform(u.data(), u.size(), 0.f, 1.f);
    }
    return f;
}

// scikit-image 0.19's random_noise(mode='s&p', amount): an element flips when its first uniform is <= amount,
// to 1 when its second is <= 0.5 (salt_vs_pepper), else to 0.
ChwImage impulse_noise(const ChwImage& x, int s, const CorruptionField& f) {
    const auto& flip = f.get("impulse_noise", "flip", x.pixels.size());
    const auto& salt = f.get("impulse_noise", "salt", x.pixels.size());
    ChwImage out = x;
    for (size_t i = 0; i < flip.size(); ++i)
        if (flip[i] <= kImpulse[s - 1]) out.pixels[i] = salt[i] <= 0.5f ? 1.f : 0.f;
    return out;
}

}  // namespace

std::vector<Kind> noise_kinds() {
    return {{"gaussian_noise", normal_field, gaussian_noise},
            {"shot_noise", uniform_field, shot_noise},
            {"impulse_noise", impulse_field, impulse_noise},
            {"speckle_noise", normal_field, speckle_noise}};
}

}  // namespace cw::data::corruption

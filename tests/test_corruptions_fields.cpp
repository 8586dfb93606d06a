// The random fields the corruptions draw are the distributions make_cifar_c.py draws from: moments of the
// Gaussian, Poisson, Bernoulli and uniform draws, the glass offsets' range, the angles' ranges, frost's styles.
// Bounds are 5 standard errors, so a correct generator fails about once in a few million runs.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "datasets/corruptions.h"
#include "engine/rng.h"

using namespace cw::data;

namespace {

struct Moments {
    double mean = 0, var = 0;
    size_t n = 0;
};

Moments moments(const std::vector<double>& v) {
    Moments m;
    m.n = v.size();
    for (double x : v) m.mean += x;
    m.mean /= double(m.n);
    for (double x : v) m.var += (x - m.mean) * (x - m.mean);
    m.var /= double(m.n - 1);
    return m;
}

std::vector<double> as_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// mean within 5 standard errors of `mean`, variance within 5 of `var` (normal-theory se of a variance, with the
// excess kurtosis given).
void check_moments(const Moments& m, double mean, double var, double kurtosis_excess = 0) {
    INFO("n " << m.n << ", mean " << m.mean << " (want " << mean << "), var " << m.var << " (want " << var << ")");
    CHECK(std::fabs(m.mean - mean) <= 5 * std::sqrt(var / double(m.n)));
    CHECK(std::fabs(m.var - var) <= 5 * var * std::sqrt((2 + kurtosis_excess) / double(m.n)));
}

ChwImage constant_image(int c, int h, int w, float v) {
    ChwImage img(c, h, w);
    for (float& p : img.pixels) p = v;
    return img;
}

}  // namespace

TEST_CASE("corruption fields: Gaussian noise is N(0, 1), applied with make_cifar_c.py's scale", "[corruptions]") {
    cw::Rng rng(11);
    const CorruptionField f = draw_corruption_field("gaussian_noise", 3, 3, 64, 64, rng);
    check_moments(moments(as_double(f.arrays.at("normal"))), 0.0, 1.0);
    // Applied to mid-gray at severity 3 (sd 0.08), nothing clips: the output deviates with sd 0.08.
    const ChwImage y = apply_corruption(constant_image(3, 64, 64, 0.5f), "gaussian_noise", 3, f);
    std::vector<double> dev;
    for (float v : y.pixels) dev.push_back(v - 0.5);
    check_moments(moments(dev), 0.0, 0.08 * 0.08);
    // speckle: x + x * N(0, sd), sd 0.2 at severity 5.
    const ChwImage s = apply_corruption(constant_image(3, 64, 64, 0.5f), "speckle_noise", 5,
                                        draw_corruption_field("speckle_noise", 5, 3, 64, 64, rng));
    dev.clear();
    for (float v : s.pixels) dev.push_back(v - 0.5);
    check_moments(moments(dev), 0.0, 0.01);
}

TEST_CASE("corruption fields: shot noise counts are Poisson(x * c)", "[corruptions]") {
    cw::Rng rng(12);
    // Severity 3: c = 100, so x = 0.5 gives lambda 50; severity 5: c = 50 and x = 0.02 gives lambda 1.
    for (const auto& [severity, c, x] : {std::tuple{3, 100.0, 0.5f}, std::tuple{5, 50.0, 0.02f}}) {
        const double lambda = c * x;
        INFO("lambda " << lambda);
        const ChwImage img = constant_image(3, 64, 64, x);
        const ChwImage y = apply_corruption(img, "shot_noise", severity,
                                            draw_corruption_field("shot_noise", severity, 3, 64, 64, rng));
        std::vector<double> counts;
        std::map<long, int> histogram;
        for (float v : y.pixels) {
            counts.push_back(std::round(v * c));
            ++histogram[std::lround(v * c)];
            CHECK(std::fabs(v * c - std::round(v * c)) < 1e-4);  // whole counts
        }
        check_moments(moments(counts), lambda, lambda, 1 / lambda);
        if (lambda == 1.0) {  // P(0) = P(1) = 1/e
            const double n = double(counts.size()), p = std::exp(-1.0), se = std::sqrt(p * (1 - p) / n);
            CHECK(std::fabs(histogram[0] / n - p) < 5 * se);
            CHECK(std::fabs(histogram[1] / n - p) < 5 * se);
        }
    }
}

TEST_CASE("corruption fields: impulse noise flips the severity's share, half to 1 and half to 0", "[corruptions]") {
    cw::Rng rng(13);
    const ChwImage img = constant_image(3, 64, 64, 0.5f);
    const double amount = 0.07;  // severity 5
    const ChwImage y = apply_corruption(img, "impulse_noise", 5, draw_corruption_field("impulse_noise", 5, 3, 64, 64, rng));
    double salt = 0, pepper = 0;
    for (float v : y.pixels) {
        salt += v == 1.f;
        pepper += v == 0.f;
        CHECK((v == 1.f || v == 0.f || v == 0.5f));
    }
    const double n = double(y.pixels.size());
    CHECK(std::fabs((salt + pepper) / n - amount) < 5 * std::sqrt(amount * (1 - amount) / n));
    CHECK(std::fabs(salt / (salt + pepper) - 0.5) < 5 * std::sqrt(0.25 / (salt + pepper)));
}

TEST_CASE("corruption fields: uniform fields cover [0, 1), glass offsets are -1 or 0, angles their ranges",
          "[corruptions]") {
    cw::Rng rng(14);
    for (const char* name : {"fog", "elastic_transform", "impulse_noise", "shot_noise"}) {
        const CorruptionField f = draw_corruption_field(name, 2, 3, 64, 64, rng);
        for (const auto& [array, values] : f.arrays) {
            INFO(name << " " << array);
            for (float v : values) REQUIRE((v >= 0.f && v < 1.f));
            if (values.size() > 1000) check_moments(moments(as_double(values)), 0.5, 1.0 / 12, -1.2);
        }
    }
    // glass_blur: np.random.randint(-1, 1) is -1 or 0, evenly, at every visited pixel (rows and columns 2..31).
    const CorruptionField g = draw_corruption_field("glass_blur", 5, 3, 32, 32, rng);
    for (const char* array : {"dx", "dy"}) {
        const auto& v = g.arrays.at(array);
        REQUIRE(v.size() == 2 * 32 * 32);  // two iterations at severity 5
        double minus = 0, visited = 0;
        for (int it = 0; it < 2; ++it)
            for (int i = 0; i < 32; ++i)
                for (int j = 0; j < 32; ++j) {
                    const float d = v[(it * 32 + i) * 32 + j];
                    if (i < 2 || j < 2) {
                        CHECK(d == 0.f);  // never visited
                        continue;
                    }
                    CHECK((d == -1.f || d == 0.f));
                    minus += d == -1.f;
                    ++visited;
                }
        CHECK(visited == 2 * 30 * 30);
        CHECK(std::fabs(minus / visited - 0.5) < 5 * std::sqrt(0.25 / visited));
    }
    // Angles: motion_blur uniform(-45, 45), snow uniform(-135, -45).
    for (const auto& [name, lo, hi] : {std::tuple{"motion_blur", -45.0, 45.0}, std::tuple{"snow", -135.0, -45.0}}) {
        std::vector<double> angles;
        for (int i = 0; i < 4000; ++i) {
            const float a = draw_corruption_field(name, 1, 3, 8, 8, rng).arrays.at("angle")[0];
            REQUIRE((a >= lo && a < hi));
            angles.push_back(a);
        }
        check_moments(moments(angles), (lo + hi) / 2, (hi - lo) * (hi - lo) / 12, -1.2);
    }
}

TEST_CASE("corruption fields: frost picks each of its five styles evenly; snow and spatter layers are N(0, 1)",
          "[corruptions]") {
    cw::Rng rng(15);
    int count[5] = {};
    const int n = 5000;
    for (int i = 0; i < n; ++i) {
        const float style = draw_corruption_field("frost", 1, 3, 8, 8, rng).arrays.at("style")[0];
        REQUIRE((style >= 0 && style <= 4 && style == std::floor(style)));
        ++count[int(style)];
    }
    for (int k = 0; k < 5; ++k) CHECK(std::fabs(count[k] / double(n) - 0.2) < 5 * std::sqrt(0.16 / n));
    const CorruptionField f = draw_corruption_field("frost", 1, 3, 64, 64, rng);
    check_moments(moments(as_double(f.arrays.at("grain"))), 0.0, 1.0);
    for (const char* name : {"snow", "spatter"})
        check_moments(moments(as_double(draw_corruption_field(name, 1, 3, 64, 64, rng).arrays.at("normal"))), 0.0, 1.0);
}

// The FRL Gaussian mixture generator: class means ±θ, class standard deviations σ and Kσ, balanced labels,
// reproducible from the seed.
#include <catch2/catch.hpp>

#include <cmath>

#include "datasets/error.h"
#include "datasets/gaussian_mixture.h"
#include "engine/rng.h"

using namespace cw::data;

TEST_CASE("gaussian mixture: per-class means and variances match the parameters", "[datasets]") {
    const GaussianMixtureParams p = gaussian_preset("G3").params;  // m = 4, d = 40, K = 2
    CHECK(p.dim() == 44);
    cw::Rng rng(17);
    const int64_t n = 20000;
    const GaussianSamples s = sample_gaussian_mixture_per_class(p, n, rng);
    REQUIRE(s.n == 2 * n);
    REQUIRE(s.x.size() == size_t(2 * n * 44));
    for (int cls = 0; cls < 2; ++cls) {
        const double sign = class_sign(cls), sd = p.stddev_of_class(cls);
        for (int j : {0, 3, 4, 43}) {
            double sum = 0, sq = 0;
            for (int64_t i = cls * n; i < (cls + 1) * n; ++i) {
                CHECK(s.labels[i] == cls);
                const double v = s.x[i * 44 + j];
                sum += v;
                sq += v * v;
            }
            const double mean = sum / n, var = sq / n - mean * mean;
            const double expected_mean = sign * (j < 4 ? p.gamma : p.eta);
            CHECK(std::fabs(mean - expected_mean) < 4 * sd / std::sqrt(double(n)));
            CHECK(std::fabs(std::sqrt(var) - sd) < 0.03 * sd);
        }
    }
}

TEST_CASE("gaussian mixture: fair-coin labels, seeds, presets, tensors", "[datasets]") {
    const GaussianMixtureParams p = gaussian_preset("G1").params;
    CHECK(p.m == 10);
    CHECK(p.d == 1000);
    CHECK(gaussian_preset("G2").params.sigma == 2.0);
    CHECK(gaussian_preset("G1").eps_train == 0.5);
    CHECK_THROWS_AS(gaussian_preset("G4"), DataError);
    GaussianMixtureParams bad = p;
    bad.sigma = 0;
    cw::Rng rng(1);
    CHECK_THROWS_AS(sample_gaussian_mixture(bad, 10, rng), DataError);

    GaussianMixtureParams small = p;
    small.d = 2;
    cw::Rng a(4), b(4), c(5);
    const GaussianSamples sa = sample_gaussian_mixture(small, 4000, a);
    const GaussianSamples sb = sample_gaussian_mixture(small, 4000, b);
    CHECK(sa.x == sb.x);
    CHECK(sa.labels == sb.labels);
    CHECK(sample_gaussian_mixture(small, 4000, c).labels != sa.labels);
    int64_t ones = 0;
    for (int32_t y : sa.labels) ones += y;
    CHECK(std::abs(ones - 2000) < 4 * std::sqrt(1000.0));

    const cw::Tensor x = sa.features();
    CHECK(x.shape() == cw::Shape{4000, 12});
    CHECK(x.data()[5] == sa.x[5]);
    CHECK(sa.label_tensor().to_int_vector() == sa.labels);
}

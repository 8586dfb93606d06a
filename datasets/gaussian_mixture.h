#pragma once
// The two-class Gaussian mixture of FRL §3 (docs/protocols/gaussian_theory.md §1): y in {-1, +1} with probability 1/2 each,
// x | y ~ N(y·θ, σ_y² I) with θ = (γ·1_m, η·1_d), σ_{-1} = σ and σ_{+1} = K·σ (class +1 is the noisier one).
// Class index 0 is y = -1 and class index 1 is y = +1.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/device.h"
#include "engine/rng.h"
#include "engine/tensor.h"

namespace cw::data {

struct GaussianMixtureParams {
    int m = 10;          // robust coordinates, mean ±γ
    int d = 1000;        // non-robust coordinates, mean ±η
    double gamma = 1.0;
    double eta = 0.1;
    double sigma = 1.0;  // standard deviation of class -1
    double K = 2.0;      // class +1 has standard deviation K·σ
    int dim() const { return m + d; }
    double stddev_of_class(int cls) const { return cls == 0 ? sigma : K * sigma; }
    void check() const;  // throws DataError on m, d < 0, dim() == 0, σ <= 0 or K <= 0
};

// The test configurations G1, G2, G3 of docs/protocols/gaussian_theory.md §5, with the attack radii they are evaluated at.
struct GaussianPreset {
    GaussianMixtureParams params;
    double eps_train = 0.5;
    double eps_test = 0.5;
};
GaussianPreset gaussian_preset(const std::string& name);  // "G1" | "G2" | "G3"

inline int class_sign(int cls) { return cls == 0 ? -1 : +1; }

struct GaussianSamples {
    int64_t n = 0;
    int dim = 0;
    std::vector<float> x;          // n × dim, row-major
    std::vector<int32_t> labels;   // class indices 0 (y = -1) / 1 (y = +1)

    cw::Tensor features(cw::Device device = cw::Device::cpu()) const;  // float32 [n, dim]
    cw::Tensor label_tensor(cw::Device device = cw::Device::cpu()) const;  // int32 [n]
};

// n samples with labels drawn i.i.d. (fair coin), per sample: the label, then dim() normals.
GaussianSamples sample_gaussian_mixture(const GaussianMixtureParams& p, int64_t n, cw::Rng& rng);
// Exactly n_per_class samples of each class (class 0 first), for per-class Monte Carlo estimates.
GaussianSamples sample_gaussian_mixture_per_class(const GaussianMixtureParams& p, int64_t n_per_class, cw::Rng& rng);

}  // namespace cw::data

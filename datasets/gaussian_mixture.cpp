#include "datasets/gaussian_mixture.h"

#include "datasets/error.h"

namespace cw::data {

void GaussianMixtureParams::check() const {
    if (m < 0 || d < 0 || dim() == 0 || !(sigma > 0.0) || !(K > 0.0))
        throw DataError("gaussian mixture: need m, d >= 0 with m + d > 0, sigma > 0 and K > 0 (got m=" +
                        std::to_string(m) + " d=" + std::to_string(d) + " sigma=" + std::to_string(sigma) +
                        " K=" + std::to_string(K) + ")");
}

GaussianPreset gaussian_preset(const std::string& name) {
    GaussianPreset g;
    if (name == "G1") g.params = {10, 1000, 1.0, 0.1, 1.0, 2.0};
    else if (name == "G2") g.params = {10, 1000, 1.0, 0.1, 2.0, 2.0};
    else if (name == "G3") g.params = {4, 40, 1.0, 0.1, 1.0, 2.0};
    else throw DataError("gaussian mixture: unknown preset '" + name + "' (expected G1, G2 or G3)");
    return g;
}

namespace {
void draw_sample(const GaussianMixtureParams& p, int cls, cw::Rng& rng, float* x) {
    const double sign = class_sign(cls);
    const double sd = p.stddev_of_class(cls);
    for (int j = 0; j < p.dim(); ++j) {
        const double mean = sign * (j < p.m ? p.gamma : p.eta);
        x[j] = static_cast<float>(mean + sd * rng.normal());
    }
}

GaussianSamples empty_samples(const GaussianMixtureParams& p, int64_t n) {
    p.check();
    if (n < 0) throw DataError("gaussian mixture: negative sample count " + std::to_string(n));
    GaussianSamples s;
    s.n = n;
    s.dim = p.dim();
    s.x.resize(size_t(n) * p.dim());
    s.labels.resize(n);
    return s;
}
}  // namespace

GaussianSamples sample_gaussian_mixture(const GaussianMixtureParams& p, int64_t n, cw::Rng& rng) {
    GaussianSamples s = empty_samples(p, n);
    for (int64_t i = 0; i < n; ++i) {
        s.labels[i] = rng.uniform() < 0.5f ? 0 : 1;
        draw_sample(p, s.labels[i], rng, s.x.data() + i * s.dim);
    }
    return s;
}

GaussianSamples sample_gaussian_mixture_per_class(const GaussianMixtureParams& p, int64_t n_per_class, cw::Rng& rng) {
    GaussianSamples s = empty_samples(p, 2 * n_per_class);
    for (int64_t i = 0; i < s.n; ++i) {
        s.labels[i] = i < n_per_class ? 0 : 1;
        draw_sample(p, s.labels[i], rng, s.x.data() + i * s.dim);
    }
    return s;
}

cw::Tensor GaussianSamples::features(cw::Device device) const { return cw::Tensor::from_vector(x, {n, dim}, device); }

cw::Tensor GaussianSamples::label_tensor(cw::Device device) const { return cw::Tensor::from_labels(labels, device); }

}  // namespace cw::data

#include "attacks/steps.h"

#include <algorithm>
#include <cmath>

#include "engine/ops.h"

namespace cw::attacks {

std::vector<float> uniform_linf_noise(int64_t n, int64_t dim, const std::vector<float>& eps, Rng& rng) {
    std::vector<float> d(static_cast<size_t>(n * dim));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < dim; ++j) d[i * dim + j] = rng.uniform(-eps[i], eps[i]);
    return d;
}

std::vector<float> uniform_radius_l2_noise(int64_t n, int64_t dim, const std::vector<float>& eps, Rng& rng) {
    std::vector<float> d(static_cast<size_t>(n * dim));
    for (int64_t i = 0; i < n; ++i) {
        float* row = d.data() + i * dim;
        rng.fill_normal(row, static_cast<size_t>(dim), 0.f, 1.f);
        double norm = 0;
        for (int64_t j = 0; j < dim; ++j) norm += double(row[j]) * row[j];
        norm = std::sqrt(norm);
        const float r = rng.uniform();
        const float scale = norm > 0 ? static_cast<float>(r * eps[i] / norm) : 0.f;
        for (int64_t j = 0; j < dim; ++j) row[j] *= scale;
    }
    return d;
}

std::vector<float> normal_noise(int64_t n, int64_t dim, float sigma, Rng& rng) {
    std::vector<float> d(static_cast<size_t>(n * dim));
    for (float& v : d) v = sigma * rng.normal();
    return d;
}

Tensor perturbed(const Tensor& x, const std::vector<float>& delta) {
    NoGradGuard no_grad;
    return clamp(add(x, Tensor::from_vector(delta, x.shape(), x.device())), 0.f, 1.f);
}

Images uniform_linf_start(const Images& x, const std::vector<float>& eps, Rng& rng) {
    Images out = x;
    const std::vector<float> d = uniform_linf_noise(x.n, x.dim(), eps, rng);
    for (size_t k = 0; k < out.v.size(); ++k) out.v[k] = std::min(std::max(out.v[k] + d[k], 0.f), 1.f);
    return out;
}

}  // namespace cw::attacks

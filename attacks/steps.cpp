#include "attacks/steps.h"

#include <algorithm>
#include <cmath>

namespace cw::attacks {

void sign_step(Images& x_adv, const Images& g, const std::vector<float>& alpha) {
    for (int64_t i = 0; i < x_adv.n; ++i) {
        float* a = x_adv.row(i);
        const float* gi = g.row(i);
        for (int64_t j = 0; j < x_adv.dim(); ++j) a[j] += alpha[i] * sgn(gi[j]);
    }
}

void l2_step(Images& x_adv, const Images& g, const std::vector<float>& alpha) {
    const Images zero(g.n, g.sample_shape);
    const std::vector<float> norm = l2_dist(g, zero);
    for (int64_t i = 0; i < x_adv.n; ++i) {
        float* a = x_adv.row(i);
        const float* gi = g.row(i);
        const float scale = alpha[i] / (norm[i] + 1e-10f);
        for (int64_t j = 0; j < x_adv.dim(); ++j) a[j] += scale * gi[j];
    }
}

Images uniform_linf_start(const Images& x, const std::vector<float>& eps, Rng& rng) {
    Images out = x;
    for (int64_t i = 0; i < x.n; ++i) {
        float* a = out.row(i);
        for (int64_t j = 0; j < x.dim(); ++j) a[j] += rng.uniform(-eps[i], eps[i]);
    }
    clip_box(out);
    return out;
}

Images uniform_radius_l2_start(const Images& x, const std::vector<float>& eps, Rng& rng) {
    Images out = x;
    std::vector<float> n(static_cast<size_t>(x.dim()));
    for (int64_t i = 0; i < x.n; ++i) {
        rng.fill_normal(n.data(), n.size(), 0.f, 1.f);
        double norm = 0;
        for (float v : n) norm += double(v) * v;
        norm = std::sqrt(norm);
        const float r = rng.uniform();
        const float scale = norm > 0 ? static_cast<float>(r * eps[i] / norm) : 0.f;
        float* a = out.row(i);
        for (int64_t j = 0; j < x.dim(); ++j) a[j] += scale * n[j];
    }
    clip_box(out);
    return out;
}

Images normal_start(const Images& x, float sigma, Rng& rng) {
    Images out = x;
    for (float& v : out.v) v += sigma * rng.normal();
    clip_box(out);
    return out;
}

}  // namespace cw::attacks

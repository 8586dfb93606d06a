#pragma once
// Random starts of the gradient attacks (docs/protocols/attacks.md §2.1, §2.2). The noise is drawn on the host from the
// attack's Rng, in a fixed order (sample-major, element by element), and copied to the device once: the same seed
// gives the same start on every device. The step itself is one device kernel (engine/attack_ops.h).
#include <vector>

#include "attacks/images.h"
#include "engine/rng.h"
#include "engine/tensor.h"

namespace cw::attacks {

// δ ~ U(−ε_i, ε_i) per element.
std::vector<float> uniform_linf_noise(int64_t n, int64_t dim, const std::vector<float>& eps, Rng& rng);
// δ = n·(r·ε_i)/||n||₂, n ~ N(0, I), r ~ U(0, 1) per sample (Rice).
std::vector<float> uniform_radius_l2_noise(int64_t n, int64_t dim, const std::vector<float>& eps, Rng& rng);
// δ = σ·N(0, I) (TRADES / MART: σ = 0.001).
std::vector<float> normal_noise(int64_t n, int64_t dim, float sigma, Rng& rng);

// C·H·W of a batch x [N, C, H, W] (0 for an empty batch).
inline int64_t values_per_sample(const Tensor& x) { return x.size(0) ? x.numel() / x.size(0) : 0; }

// clip_box(x + δ) on x's device.
Tensor perturbed(const Tensor& x, const std::vector<float>& delta);

inline Tensor uniform_linf_start(const Tensor& x, const std::vector<float>& eps, Rng& rng) {
    return perturbed(x, uniform_linf_noise(x.size(0), values_per_sample(x), eps, rng));
}
inline Tensor uniform_radius_l2_start(const Tensor& x, const std::vector<float>& eps, Rng& rng) {
    return perturbed(x, uniform_radius_l2_noise(x.size(0), values_per_sample(x), eps, rng));
}
inline Tensor normal_start(const Tensor& x, float sigma, Rng& rng) {
    return perturbed(x, normal_noise(x.size(0), values_per_sample(x), sigma, rng));
}
// The host form of the L∞ start (the same draws): x + δ, box-clipped.
Images uniform_linf_start(const Images& x, const std::vector<float>& eps, Rng& rng);

}  // namespace cw::attacks

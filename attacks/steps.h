#pragma once
// The building blocks of the gradient attacks: random starts and steepest-ascent steps of each norm. Each works
// on the adversarial images in place, with per-sample radii / step sizes (attacks.md §0, §2).
#include <vector>

#include "attacks/images.h"
#include "engine/rng.h"

namespace cw::attacks {

inline float sgn(float v) { return static_cast<float>((v > 0.f) - (v < 0.f)); }  // sign(0) = 0

// x_adv ← x_adv + α_i·sign(g)   (a zero gradient component does not move)
void sign_step(Images& x_adv, const Images& g, const std::vector<float>& alpha);
// x_adv ← x_adv + α_i·g/(||g||_2 + 1e-10)
void l2_step(Images& x_adv, const Images& g, const std::vector<float>& alpha);

// x + δ, δ ~ U(−ε_i, ε_i) per element, then box-clipped (attacks.md §2.1).
Images uniform_linf_start(const Images& x, const std::vector<float>& eps, Rng& rng);
// x + δ, δ = n·(r·ε_i)/||n||_2, n ~ N(0, I), r ~ U(0, 1) (Rice), then box-clipped (attacks.md §2.2).
Images uniform_radius_l2_start(const Images& x, const std::vector<float>& eps, Rng& rng);
// x + σ·N(0, I), box-clipped (TRADES / MART: σ = 0.001).
Images normal_start(const Images& x, float sigma, Rng& rng);

}  // namespace cw::attacks

#pragma once
// Per-sample attack objectives on one row of logits z (C classes), on the host; the formulas are those of
// engine/attack_math.h, which the device kernels evaluate too. Each returns its value and, when dz is not null,
// writes dvalue/dz (C floats). Every objective here is one the attacks MAXIMISE (docs/protocols/attacks.md §2–§4): e.g. targeted
// CE enters as −CE(z, t).
#include <cstdint>

namespace cw::attacks {

// CE(z, y) = −z_y + log Σ_j exp(z_j)
float cross_entropy(const float* z, int64_t C, int32_t y, float* dz);
// −CE(z, t): maximising it descends the CE towards the target t (docs/protocols/attacks.md §1, §2.3).
float neg_cross_entropy(const float* z, int64_t C, int32_t t, float* dz);

// m(z, y) = z_y − max_{j≠y} z_j  (> 0 ⇔ correctly classified); no gradient.
float margin(const float* z, int64_t C, int32_t y);
// CW objective (docs/protocols/attacks.md §3): −max(m(z, y) + κ, 0).
float cw_objective(const float* z, int64_t C, int32_t y, float kappa, float* dz);
// Targeted margin (docs/protocols/attacks.md §2.3, eval alternative): z_t − max_{j≠t} z_j.
float targeted_margin(const float* z, int64_t C, int32_t t, float* dz);

// DLR (docs/protocols/attacks.md §4.1): −(z_y − max_{j≠y} z_j) / (z_π1 − z_π3 + 1e-12); needs C ≥ 3.
float dlr(const float* z, int64_t C, int32_t y, float* dz);
// Targeted DLR: −(z_y − z_t) / (z_π1 − (z_π3 + z_π4)/2 + 1e-12); needs C ≥ 4.
float dlr_targeted(const float* z, int64_t C, int32_t y, int32_t t, float* dz);

// FAB's linearised function (docs/protocols/attacks.md §5): h = z_t − z_y.
float logit_difference(const float* z, int64_t C, int32_t y, int32_t t, float* dz);

// argmax with the lowest index winning ties (the engine's argmax convention).
int32_t argmax_row(const float* z, int64_t C);
// Index of the k-th largest logit (k = 1 is the argmax); ties go to the lower index.
int32_t kth_largest(const float* z, int64_t C, int64_t k);

}  // namespace cw::attacks

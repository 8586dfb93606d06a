// Host forms of the per-sample objectives: the formulas themselves live in engine/attack_math.h, shared with the
// device kernels, so an attack that scores on the host (Square, FAB) and a device-side one agree by construction.
#include "attacks/losses.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/attack_math.h"

namespace cw::attacks {

int32_t argmax_row(const float* z, int64_t C) { return attack_math::argmax_row(z, C); }

int32_t kth_largest(const float* z, int64_t C, int64_t k) {
    if (k < 1 || k > C) throw std::invalid_argument("kth_largest: k = " + std::to_string(k) + " out of range");
    std::vector<int32_t> order(static_cast<size_t>(C));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t a, int32_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); });
    return order[static_cast<size_t>(k - 1)];
}

float cross_entropy(const float* z, int64_t C, int32_t y, float* dz) { return attack_math::cross_entropy(z, C, y, dz); }

float neg_cross_entropy(const float* z, int64_t C, int32_t t, float* dz) {
    return attack_math::objective(AttackObjective::TargetCrossEntropy, z, C, -1, t, 0.f, dz);
}

float margin(const float* z, int64_t C, int32_t y) { return z[y] - z[attack_math::best_other(z, C, y)]; }

float cw_objective(const float* z, int64_t C, int32_t y, float kappa, float* dz) {
    return attack_math::cw_objective(z, C, y, kappa, dz);
}

float targeted_margin(const float* z, int64_t C, int32_t t, float* dz) {
    return attack_math::targeted_margin(z, C, t, dz);
}

float dlr(const float* z, int64_t C, int32_t y, float* dz) {
    if (C < 3) throw std::invalid_argument("DLR loss needs at least 3 classes, got " + std::to_string(C));
    return attack_math::dlr(z, C, y, dz);
}

float dlr_targeted(const float* z, int64_t C, int32_t y, int32_t t, float* dz) {
    if (C < 4) throw std::invalid_argument("targeted DLR loss needs at least 4 classes, got " + std::to_string(C));
    return attack_math::dlr_targeted(z, C, y, t, dz);
}

float logit_difference(const float* z, int64_t C, int32_t y, int32_t t, float* dz) {
    return attack_math::logit_difference(z, C, y, t, dz);
}

}  // namespace cw::attacks

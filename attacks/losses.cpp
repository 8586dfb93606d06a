#include "attacks/losses.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace cw::attacks {

namespace {
void zero(float* dz, int64_t C) {
    if (dz) std::fill(dz, dz + C, 0.f);
}

// Class indices ordered by logit, largest first (ties: lower index first), only the first k needed.
std::vector<int32_t> top_classes(const float* z, int64_t C, int64_t k) {
    std::vector<int32_t> order(static_cast<size_t>(C));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t a, int32_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); });
    order.resize(static_cast<size_t>(k));
    return order;
}

// max_{j≠y} z_j and its index.
int32_t best_other(const float* z, int64_t C, int32_t y) {
    int32_t best = -1;
    for (int32_t j = 0; j < C; ++j)
        if (j != y && (best < 0 || z[j] > z[best])) best = j;
    return best;
}
}  // namespace

int32_t argmax_row(const float* z, int64_t C) {
    int32_t best = 0;
    for (int32_t j = 1; j < C; ++j)
        if (z[j] > z[best]) best = j;
    return best;
}

int32_t kth_largest(const float* z, int64_t C, int64_t k) {
    if (k < 1 || k > C) throw std::invalid_argument("kth_largest: k = " + std::to_string(k) + " out of range");
    return top_classes(z, C, k).back();
}

float cross_entropy(const float* z, int64_t C, int32_t y, float* dz) {
    const float zmax = *std::max_element(z, z + C);
    double s = 0;
    for (int64_t j = 0; j < C; ++j) s += std::exp(static_cast<double>(z[j] - zmax));
    const double lse = zmax + std::log(s);
    if (dz) {
        for (int64_t j = 0; j < C; ++j) dz[j] = static_cast<float>(std::exp(z[j] - lse));
        dz[y] -= 1.f;
    }
    return static_cast<float>(lse - z[y]);
}

float neg_cross_entropy(const float* z, int64_t C, int32_t t, float* dz) {
    const float v = cross_entropy(z, C, t, dz);
    if (dz)
        for (int64_t j = 0; j < C; ++j) dz[j] = -dz[j];
    return -v;
}

float margin(const float* z, int64_t C, int32_t y) { return z[y] - z[best_other(z, C, y)]; }

float cw_objective(const float* z, int64_t C, int32_t y, float kappa, float* dz) {
    const int32_t o = best_other(z, C, y);
    const float m = z[y] - z[o];
    zero(dz, C);
    if (m + kappa <= 0.f) return 0.f;  // clamped: no gradient once the margin is below −κ
    if (dz) {
        dz[y] = -1.f;
        dz[o] = 1.f;
    }
    return -(m + kappa);
}

float targeted_margin(const float* z, int64_t C, int32_t t, float* dz) {
    const int32_t o = best_other(z, C, t);
    zero(dz, C);
    if (dz) {
        dz[t] = 1.f;
        dz[o] = -1.f;
    }
    return z[t] - z[o];
}

float dlr(const float* z, int64_t C, int32_t y, float* dz) {
    if (C < 3) throw std::invalid_argument("DLR loss needs at least 3 classes, got " + std::to_string(C));
    const auto top = top_classes(z, C, 3);
    // max_{j≠y} z_j is the runner-up when y is the argmax, else the argmax itself.
    const int32_t other = top[0] == y ? top[1] : top[0];
    const double num = double(z[y]) - z[other];
    const double den = double(z[top[0]]) - z[top[2]] + 1e-12;
    zero(dz, C);
    if (dz) {
        // value = −num/den: d/dz = −dnum/den + num/den²·dden
        dz[y] += static_cast<float>(-1.0 / den);
        dz[other] += static_cast<float>(1.0 / den);
        dz[top[0]] += static_cast<float>(num / (den * den));
        dz[top[2]] -= static_cast<float>(num / (den * den));
    }
    return static_cast<float>(-num / den);
}

float dlr_targeted(const float* z, int64_t C, int32_t y, int32_t t, float* dz) {
    if (C < 4) throw std::invalid_argument("targeted DLR loss needs at least 4 classes, got " + std::to_string(C));
    const auto top = top_classes(z, C, 4);
    const double num = double(z[y]) - z[t];
    const double den = double(z[top[0]]) - 0.5 * (double(z[top[2]]) + z[top[3]]) + 1e-12;
    zero(dz, C);
    if (dz) {
        const double q = num / (den * den);
        dz[y] += static_cast<float>(-1.0 / den);
        dz[t] += static_cast<float>(1.0 / den);
        dz[top[0]] += static_cast<float>(q);
        dz[top[2]] -= static_cast<float>(0.5 * q);
        dz[top[3]] -= static_cast<float>(0.5 * q);
    }
    return static_cast<float>(-num / den);
}

float logit_difference(const float* z, int64_t C, int32_t y, int32_t t, float* dz) {
    zero(dz, C);
    if (dz) {
        dz[t] += 1.f;
        dz[y] -= 1.f;
    }
    return z[t] - z[y];
}

}  // namespace cw::attacks

#include "attacks/linf_projection.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cw::attacks {

float linf_box_projection(const float* p, const float* w, double b, int64_t n, float* d,
                          std::vector<LinfKink>& scratch) {
    double wp = 0;
    for (int64_t j = 0; j < n; ++j) wp += double(w[j]) * p[j];
    const double r = b - wp;
    std::fill(d, d + n, 0.f);
    if (r == 0) return 0.f;

    // room u_j in the helpful direction: 1 − p_j upwards (w_j·r > 0), p_j downwards
    const bool r_up = r > 0;
    auto up = [&](int64_t j) { return (w[j] > 0) == r_up; };
    auto room = [&](int64_t j) { return up(j) ? 1.f - p[j] : p[j]; };

    // The kinks in increasing order, taken lazily from a min-heap: FAB's hyperplanes are usually close, so the
    // walk stops after a few kinks and a full sort would be wasted. Ties go by index (a deterministic order).
    auto later = [](const LinfKink& a, const LinfKink& c) { return a.u > c.u || (a.u == c.u && a.j > c.j); };
    scratch.resize(static_cast<size_t>(n));
    LinfKink* heap = scratch.data();
    int64_t m = 0;
    double W = 0;   // Σ|w_j| over the coordinates not yet saturated
    for (int64_t j = 0; j < n; ++j)
        if (w[j] != 0) {
            heap[m++] = {room(j), static_cast<int32_t>(j)};
            W += std::fabs(w[j]);
        }
    std::make_heap(heap, heap + m, later);

    // Walk the kinks: below kink k, g(λ) = reached + λ·W.
    const double target = std::fabs(r);
    double reached = 0, lambda = std::numeric_limits<double>::infinity();
    while (m > 0) {
        const LinfKink next = heap[0];
        const double candidate = (target - reached) / W;
        if (candidate <= next.u) {
            lambda = std::max(candidate, 0.0);
            break;
        }
        std::pop_heap(heap, heap + m, later);
        --m;
        reached += std::fabs(w[next.j]) * next.u;
        W -= std::fabs(w[next.j]);
    }

    float norm = 0.f;
    for (int64_t j = 0; j < n; ++j) {
        if (w[j] == 0) continue;
        const float step = static_cast<float>(std::min<double>(lambda, room(j)));
        d[j] = up(j) ? step : -step;
        norm = std::max(norm, step);
    }
    return norm;
}

}  // namespace cw::attacks

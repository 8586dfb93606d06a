#include "engine/linf_box_projection.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/attack_math.h"

namespace cw {

double linf_box_radius(const float* p, const float* w, double b, int64_t n, bool& r_up, std::vector<LinfKink>& scratch) {
    double wp = 0;
    for (int64_t j = 0; j < n; ++j) wp += double(w[j]) * p[j];
    const double r = b - wp;
    r_up = r > 0;
    if (r == 0) return 0.0;

    // The kinks in increasing order, taken lazily from a min-heap: FAB's hyperplanes are usually close, so the
    // walk stops after a few kinks and a full sort would be wasted. Ties go by index (a deterministic order).
    auto later = [](const LinfKink& a, const LinfKink& c) { return a.u > c.u || (a.u == c.u && a.j > c.j); };
    scratch.resize(static_cast<size_t>(n));
    LinfKink* heap = scratch.data();
    int64_t m = 0;
    double W = 0;   // Σ|w_j| over the kinks not yet passed
    for (int64_t j = 0; j < n; ++j)
        if (w[j] != 0) {
            heap[m++] = {attack_math::fab_room(p[j], w[j], r_up), static_cast<int32_t>(j)};
            W += std::fabs(w[j]);
        }
    std::make_heap(heap, heap + m, later);

    // Walk the kinks: below kink k, g(λ) = reached + λ·W.
    const double target = std::fabs(r);
    double reached = 0;
    while (m > 0) {
        const LinfKink next = heap[0];
        const double candidate = (target - reached) / W;
        if (candidate <= next.u) return std::max(candidate, 0.0);
        std::pop_heap(heap, heap + m, later);
        --m;
        reached += std::fabs(w[next.j]) * next.u;
        W -= std::fabs(w[next.j]);
    }
    return std::numeric_limits<double>::infinity();
}

float linf_box_projection(const float* p, const float* w, double b, int64_t n, float* d,
                          std::vector<LinfKink>& scratch) {
    bool r_up = false;
    const double lambda = linf_box_radius(p, w, b, n, r_up, scratch);
    float norm = 0.f;
    for (int64_t j = 0; j < n; ++j) {
        d[j] = lambda == 0 ? 0.f : attack_math::fab_coordinate(lambda, p[j], w[j], r_up);
        norm = std::max(norm, std::fabs(d[j]));
    }
    return norm;
}

}  // namespace cw

// FAB-T's per-sample step and bookkeeping on the CPU: the kinks walked in increasing order
// (engine/linf_box_projection.cpp), every formula from engine/attack_math.h, one sample per thread.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/attack_math.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/linf_box_projection.h"

namespace cw {

void CpuBackend::fab_step(float* x1, const float* x_nat, const float* grad, const float* value, int64_t n, int64_t dim,
                          float eta, float alpha_max) {
#pragma omp parallel
    {
        std::vector<LinfKink> scratch;
#pragma omp for schedule(dynamic)
        for (int64_t i = 0; i < n; ++i) {
            float* a = x1 + i * dim;
            const float *c = x_nat + i * dim, *w = grad + i * dim;
            double b = -value[i];   // the hyperplane of the linearised objective: ⟨w, v⟩ = ⟨w, x1⟩ − h(x1)
            for (int64_t j = 0; j < dim; ++j) b += double(w[j]) * a[j];
            bool up1 = false, up2 = false;
            const double l1 = linf_box_radius(a, w, b, dim, up1, scratch);
            const double l2 = linf_box_radius(c, w, b, dim, up2, scratch);
            float n1 = 0.f, n2 = 0.f;
            for (int64_t j = 0; j < dim; ++j) {
                n1 = std::max(n1, std::fabs(attack_math::fab_coordinate(l1, a[j], w[j], up1)));
                n2 = std::max(n2, std::fabs(attack_math::fab_coordinate(l2, c[j], w[j], up2)));
            }
            const float alpha = attack_math::fab_alpha(n1, n2, alpha_max);
            for (int64_t j = 0; j < dim; ++j)
                a[j] = attack_math::fab_mix(a[j], attack_math::fab_coordinate(l1, a[j], w[j], up1), c[j],
                                            attack_math::fab_coordinate(l2, c[j], w[j], up2), eta, alpha);
        }
    }
}

void CpuBackend::fab_record(float* x1, const float* x_nat, const float* wrong, float beta, float* best_adv,
                            float* best_dist, int64_t n, int64_t dim) {
#pragma omp parallel for schedule(static) if (n * dim > kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
        if (wrong[i] == 0.f) continue;
        float* a = x1 + i * dim;
        const float* c = x_nat + i * dim;
        float dist = 0.f;
        for (int64_t j = 0; j < dim; ++j) dist = std::max(dist, std::fabs(a[j] - c[j]));
        if (dist < best_dist[i]) {
            best_dist[i] = dist;
            std::copy(a, a + dim, best_adv + i * dim);
        }
        for (int64_t j = 0; j < dim; ++j) a[j] = attack_math::fab_pull_back(a[j], c[j], beta);
    }
}

}  // namespace cw

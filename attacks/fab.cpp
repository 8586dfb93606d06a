#include "attacks/fab.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/linf_projection.h"
#include "attacks/targeted_rounds.h"

namespace cw::attacks {

FabTargeted::FabTargeted(FabConfig c) : Attack(Norm::Linf, c.eps, c.mode), c_(c) {
    if (c_.n_iter < 1 || c_.restarts < 1 || c_.n_target_classes < 1)
        throw std::invalid_argument("FAB-T: n_iter, restarts and n_target_classes must be >= 1");
}

nlohmann::json FabTargeted::config() const {
    auto j = base_config("fab-t");
    j["steps"] = c_.n_iter;
    j["restarts"] = c_.restarts;
    j["alpha_max"] = c_.alpha_max;
    j["eta"] = c_.eta;
    j["beta"] = c_.beta;
    j["n_target_classes"] = c_.n_target_classes;
    j["random_start"] = false;   // only restarts after the first start randomly
    j["targeted"] = true;        // targeted search; success = any misclassification within ε
    j["success"] = "misclassification";
    return j;
}

FabTargeted::RunResult FabTargeted::single_run(ModelOracle& model, const Images& x, const std::vector<int32_t>& y,
                                               const std::vector<int32_t>& t, const std::vector<float>& eps,
                                               bool random_start, Rng& rng) const {
    const int64_t n = x.n, dim = x.dim();
    RunResult r{x, std::vector<float>(n, std::numeric_limits<float>::infinity())};
    Images x1 = x;
    if (random_start) {
        for (int64_t i = 0; i < n; ++i) {
            std::vector<float> u(static_cast<size_t>(dim));
            float un = 0.f;
            for (auto& v : u) {
                v = rng.uniform(-1.f, 1.f);
                un = std::max(un, std::fabs(v));
            }
            const float radius = 0.5f * std::min(r.best_dist[i], eps[i]);
            for (int64_t j = 0; j < dim; ++j) x1.row(i)[j] += radius * u[j] / un;
        }
        clip_box(x1);
    }

    const Objective h = make_objective(AttackObjective::LogitDifference, y, model.device(), t);   // h = z_t − z_y
    Images d1(n, x.sample_shape), d2(n, x.sample_shape);
    for (int it = 0; it < c_.n_iter; ++it) {
        const ModelOutput lin = model.value_and_grad(x1, h);
        // Every sample on its own (its projections, then its step), so the samples share out over the threads.
#pragma omp parallel for schedule(dynamic)
        for (int64_t i = 0; i < n; ++i) {
            // hyperplane ⟨w, v⟩ = b with w = ∇h(x¹), b = ⟨w, x¹⟩ − h(x¹)
            const float* w = lin.grad.row(i);
            double b = -lin.value[i];
            for (int64_t j = 0; j < dim; ++j) b += double(w[j]) * x1.row(i)[j];
            std::vector<LinfKink> scratch;
            const float n1 = linf_box_projection(x1.row(i), w, b, dim, d1.row(i), scratch);
            const float n2 = linf_box_projection(x.row(i), w, b, dim, d2.row(i), scratch);
            const float a1 = std::max(n1, 1e-8f), a2 = std::max(n2, 1e-8f);
            const float a = std::min(std::max(a1 / (a1 + a2), 0.f), c_.alpha_max);
            for (int64_t j = 0; j < dim; ++j) {
                const float v = (x1.row(i)[j] + c_.eta * d1.row(i)[j]) * (1 - a) + (x.row(i)[j] + c_.eta * d2.row(i)[j]) * a;
                x1.row(i)[j] = std::min(std::max(v, 0.f), 1.f);
            }
        }

        const ModelOutput check = model.forward(x1);
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i) {
            if (check.pred(i) == y[i]) continue;
            float dist = 0.f;
            for (int64_t j = 0; j < dim; ++j) dist = std::max(dist, std::fabs(x1.row(i)[j] - x.row(i)[j]));
            if (dist < r.best_dist[i]) {
                r.best_dist[i] = dist;
                std::copy(x1.row(i), x1.row(i) + dim, r.best_adv.row(i));
            }
            for (int64_t j = 0; j < dim; ++j) x1.row(i)[j] = x.row(i)[j] + c_.beta * (x1.row(i)[j] - x.row(i)[j]);
        }
    }
    return r;
}

Perturbation FabTargeted::perturb(AttackContext& ctx) {
    const ModelOutput clean = ctx.model.forward(ctx.x);
    // A host-side algorithm (per-sample hyperplane projections): each iteration sends its points to the device twice
    // (the gradient pass, the check) and brings their gradients back, which on a GPU makes FAB-T AutoAttack's
    // slowest part (docs/gpu_h200.md).
    const Images& x = ctx.host_x();
    return run_targeted_rounds(ctx, clean, c_.n_target_classes, c_.restarts,
                               [&](const TargetedRound& round, Tensor& adv) {
        RunResult run = single_run(ctx.model, take_rows(x, round.rows), round.y, round.targets, round.eps,
                                   round.restart > 0, ctx.rng);
        adv = to_tensor(run.best_adv, ctx.device());
        std::vector<uint8_t> broken(round.rows.size());
        for (size_t k = 0; k < broken.size(); ++k) broken[k] = run.best_dist[k] <= round.eps[k];  // only within ε
        return broken;
    });
}

}  // namespace cw::attacks

#include "attacks/early_stop_pgd.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/losses.h"
#include "attacks/steps.h"

namespace cw::attacks {

EarlyStopPgdConfig fat_original_config(int tau) {
    EarlyStopPgdConfig c;
    c.eps = 0.031f;
    c.alpha = 0.007f;
    c.steps = 10;
    c.tau = tau;
    c.omega = 0.001f;
    c.semantics = FatSemantics::Original;
    c.mode = ModelMode::Eval;
    return c;
}

int fat_original_tau(int epoch) { return epoch <= 50 ? 0 : epoch <= 90 ? 1 : 2; }

EarlyStopPgdConfig fat_cfa_config(float eps) {
    EarlyStopPgdConfig c;
    c.eps = eps;
    return c;
}

EarlyStopPgd::EarlyStopPgd(EarlyStopPgdConfig c) : Attack(Norm::Linf, c.eps, c.mode), c_(std::move(c)) {
    if (c_.steps < 0 || c_.tau < 0) throw std::invalid_argument("early-stopped PGD: steps and tau must be >= 0");
    name_ = c_.name.empty() ? "fat-pgd" + std::to_string(c_.steps) + "-tau" + std::to_string(c_.tau) : c_.name;
}

nlohmann::json EarlyStopPgd::config() const {
    auto j = base_config("early_stop_pgd");
    j["alpha"] = c_.alpha;
    j["steps"] = c_.steps;
    j["restarts"] = 1;
    j["random_start"] = true;
    j["tau"] = c_.tau;
    j["omega"] = c_.omega;
    j["semantics"] = c_.semantics == FatSemantics::Original ? "original" : "cfa";
    return j;
}

void EarlyStopPgd::add_noise(Images& x_adv, const std::vector<uint8_t>& moving, Rng& rng) const {
    if (c_.omega == 0.f) return;
    for (int64_t i = 0; i < x_adv.n; ++i)
        if (moving[i])
            for (int64_t j = 0; j < x_adv.dim(); ++j) x_adv.row(i)[j] += c_.omega * rng.normal();
}

Perturbation EarlyStopPgd::perturb(AttackContext& ctx) {
    const std::vector<float> alpha =
        ctx.per_sample.alpha.empty() ? std::vector<float>(ctx.x.n, c_.alpha) : ctx.per_sample.alpha;
    return c_.semantics == FatSemantics::Original ? original(ctx, alpha) : cfa(ctx, alpha);
}

Perturbation EarlyStopPgd::original(AttackContext& ctx, const std::vector<float>& alpha) {
    const int64_t n = ctx.x.n;
    Images x_adv = uniform_linf_start(ctx.x, ctx.eps, ctx.rng);
    std::vector<int> budget(n, c_.tau);
    std::vector<uint8_t> active(n, 1);
    for (int k = 0; k < c_.steps; ++k) {
        const std::vector<int64_t> idx = where(active);
        // One pass over the active samples: its predictions decide who freezes, its gradient moves the rest.
        const Images sub = take_rows(x_adv, idx);
        const std::vector<int32_t> y_sub = [&] {
            std::vector<int32_t> v;
            for (int64_t i : idx) v.push_back(ctx.y[i]);
            return v;
        }();
        const ModelOutput out = ctx.model.value_and_grad(sub, [&](int64_t p, const float* z, int64_t C, float* dz) {
            return cross_entropy(z, C, y_sub[p], dz);
        });
        std::vector<uint8_t> moving(idx.size(), 1);
        for (size_t p = 0; p < idx.size(); ++p) {
            if (out.pred(static_cast<int64_t>(p)) == y_sub[p]) continue;
            if (budget[idx[p]] == 0) {
                active[idx[p]] = 0;   // frozen: output as is
                moving[p] = 0;
            } else {
                --budget[idx[p]];
            }
        }
        if (std::none_of(active.begin(), active.end(), [](uint8_t a) { return a; })) break;

        Images moved = sub;
        std::vector<float> a(idx.size()), eps(idx.size());
        for (size_t p = 0; p < idx.size(); ++p) {
            a[p] = moving[p] ? alpha[idx[p]] : 0.f;
            eps[p] = ctx.eps[idx[p]];
        }
        sign_step(moved, out.grad, a);
        add_noise(moved, moving, ctx.rng);
        project_linf(moved, take_rows(ctx.x, idx), eps);
        put_rows(x_adv, idx, moved);
    }
    return {std::move(x_adv), {}, {}};
}

Perturbation EarlyStopPgd::cfa(AttackContext& ctx, const std::vector<float>& alpha) {
    const int64_t n = ctx.x.n;
    Images x_adv = uniform_linf_start(ctx.x, ctx.eps, ctx.rng);
    std::vector<int> counter(n, c_.tau);
    for (int k = 0; k < c_.steps; ++k) {
        const ModelOutput out = ctx.model.value_and_grad(x_adv, [&](int64_t i, const float* z, int64_t C, float* dz) {
            return cross_entropy(z, C, ctx.y[i], dz);
        });
        std::vector<uint8_t> moving(n, 0);
        std::vector<float> a(n, 0.f);
        for (int64_t i = 0; i < n; ++i) {
            if (out.pred(i) != ctx.y[i]) counter[i] = std::max(counter[i] - 1, 0);   // decrement before the update
            moving[i] = counter[i] > 0;
            if (moving[i]) a[i] = alpha[i];
        }
        sign_step(x_adv, out.grad, a);
        add_noise(x_adv, moving, ctx.rng);
        project_linf(x_adv, ctx.x, ctx.eps);
    }
    return {std::move(x_adv), {}, {}};
}

}  // namespace cw::attacks

#include "attacks/early_stop_pgd.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/steps.h"
#include "attacks/targets.h"
#include "engine/ops.h"

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

Tensor cfa_early_stop_check(Tensor& counter, const Tensor& wrong) {
    // The CFA / FAIR-TAT code: `if wrong and control > 0: control -= 1; move` / `elif right and control > 0: move`.
    const Tensor zero = Tensor::zeros({counter.size(0)}, DType::F32, counter.device());
    Tensor moving = greater(counter, zero);
    counter = maximum(sub(counter, wrong), zero);
    return moving;
}

int fat_original_tau(int epoch) { return epoch <= 50 ? 0 : epoch <= 90 ? 1 : 2; }

EarlyStopPgdConfig fat_cfa_config(float eps) {
    EarlyStopPgdConfig c;
    c.eps = eps;
    return c;
}

EarlyStopPgd::EarlyStopPgd(EarlyStopPgdConfig c) : Attack(Norm::Linf, c.eps, c.mode), c_(std::move(c)) {
    if (c_.steps < 0 || c_.tau < 0) throw std::invalid_argument("early-stopped PGD: steps and tau must be >= 0");
    if (c_.targeted && c_.semantics != FatSemantics::Cfa)
        throw std::invalid_argument("early-stopped PGD: the targeted form exists with the CFA bookkeeping only");
    name_ = c_.name.empty() ? "fat-pgd" + std::to_string(c_.steps) + "-tau" + std::to_string(c_.tau) +
                                  (c_.targeted ? "-targeted" : "")
                            : c_.name;
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
    if (c_.targeted) j["stop_rule"] = "misclassified (argmax != y), whatever the target";
    return j;
}

void EarlyStopPgd::step(Tensor& x_adv, const Tensor& grad, const Tensor& x_nat, const Tensor& eps,
                        const Tensor& alpha, const std::vector<uint8_t>& moving, Rng& rng) const {
    if (c_.omega == 0.f) {
        attack_step_(AttackNorm::Linf, x_adv, grad, x_nat, eps, alpha);
        return;
    }
    const int64_t n = x_adv.size(0), dim = values_per_sample(x_adv);
    std::vector<float> noise(static_cast<size_t>(n * dim), 0.f);
    for (int64_t i = 0; i < n; ++i)
        if (moving[i])
            for (int64_t j = 0; j < dim; ++j) noise[i * dim + j] = c_.omega * rng.normal();
    const Tensor a = reshape(alpha, {n, 1, 1, 1});
    x_adv = add(add(x_adv, mul(a, sign(grad))), Tensor::from_vector(noise, x_adv.shape(), x_adv.device()));
    attack_step_(AttackNorm::Linf, x_adv, Tensor(), x_nat, eps, alpha);   // projection only
}

Perturbation EarlyStopPgd::perturb(AttackContext& ctx) {
    const std::vector<float> alpha =
        ctx.per_sample.alpha.empty() ? std::vector<float>(ctx.n(), c_.alpha) : ctx.per_sample.alpha;
    NoGradGuard bookkeeping;
    return c_.semantics == FatSemantics::Original ? original(ctx, alpha) : cfa(ctx, ctx.per_sample_tensor(alpha));
}

Perturbation EarlyStopPgd::original(AttackContext& ctx, const std::vector<float>& alpha) {
    const int64_t n = ctx.n();
    Tensor x_adv = uniform_linf_start(ctx.x, ctx.eps, ctx.rng);
    std::vector<int> budget(n, c_.tau);
    std::vector<uint8_t> active(n, 1);
    for (int k = 0; k < c_.steps; ++k) {
        // One pass over the active samples: its predictions decide who freezes (the per-step decision crosses to
        // the host), its gradient moves the rest.
        const std::vector<int64_t> idx = where(active);
        std::vector<int32_t> y_sub;
        for (int64_t i : idx) y_sub.push_back(ctx.host_y()[i]);
        const Objective J = make_objective(AttackObjective::CrossEntropy, y_sub, ctx.device());
        Tensor sub = take_rows(x_adv, idx);
        const Evaluation e = ctx.model.value_and_grad(sub, J);
        const std::vector<float> wrong = e.obj.wrong.to_vector();
        std::vector<uint8_t> moving(idx.size(), 1);
        for (size_t p = 0; p < idx.size(); ++p) {
            if (wrong[p] == 0.f) continue;
            if (budget[idx[p]] == 0) {
                active[idx[p]] = 0;   // frozen: output as is
                moving[p] = 0;
            } else {
                --budget[idx[p]];
            }
        }
        if (std::none_of(active.begin(), active.end(), [](uint8_t a) { return a; })) break;

        std::vector<float> a(idx.size()), eps(idx.size());
        for (size_t p = 0; p < idx.size(); ++p) {
            a[p] = moving[p] ? alpha[idx[p]] : 0.f;
            eps[p] = ctx.eps[idx[p]];
        }
        step(sub, e.grad, take_rows(ctx.x, idx), ctx.per_sample_tensor(eps), ctx.per_sample_tensor(a), moving, ctx.rng);
        put_rows_(x_adv, idx, sub);
    }
    return {std::move(x_adv), {}, {}};
}

Perturbation EarlyStopPgd::cfa(AttackContext& ctx, const Tensor& alpha) {
    const int64_t n = ctx.n();
    Tensor x_adv = uniform_linf_start(ctx.x, ctx.eps, ctx.rng);
    // Targets are drawn after the start, as PGD's are.
    TargetChoice target = target_choice(ctx);
    const Objective J = c_.targeted ? Objective{AttackObjective::TargetCrossEntropy, ctx.labels,
                                                target.all_on(ctx.model.num_classes(ctx.x), ctx.device()), 0.f}
                                    : Objective{AttackObjective::CrossEntropy, ctx.labels, {}, 0.f};
    // counter_i starts at τ; the sample moves at a check while its counter is > 0 there, and the counter drops
    // after a check that finds it misclassified. All on the device; only the noise (ω > 0) needs the flags on the
    // host.
    Tensor counter = Tensor::full({n}, static_cast<float>(c_.tau), ctx.device());
    for (int k = 0; k < c_.steps; ++k) {
        const Evaluation e = ctx.model.value_and_grad(x_adv, J);
        const Tensor moving = cfa_early_stop_check(counter, e.obj.wrong);
        std::vector<uint8_t> moving_host;
        if (c_.omega != 0.f)
            for (float m : moving.to_vector()) moving_host.push_back(m != 0.f);
        step(x_adv, e.grad, ctx.x, ctx.eps_t, mul(alpha, moving), moving_host, ctx.rng);
    }
    return {std::move(x_adv), target.all(), {}};
}

}  // namespace cw::attacks

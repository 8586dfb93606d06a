#include "attacks/pgd.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/losses.h"
#include "attacks/steps.h"
#include "attacks/targets.h"

namespace cw::attacks {

namespace {
std::string default_name(const PgdConfig& c) {
    std::string n = (c.loss == PgdLoss::Margin ? "cw" : "pgd") + std::to_string(c.steps);
    if (c.targeted) n += "-targeted";
    if (c.norm == Norm::L2) n += "-l2";
    return n;
}
const char* start_name(RandomStart s) {
    return s == RandomStart::None ? "none" : s == RandomStart::Uniform ? "uniform" : "normal";
}
const char* rule_name(StepRule r) {
    return r == StepRule::Fixed ? "fixed" : r == StepRule::QuarterEps ? "eps/4" : "max_eps/4";
}
}  // namespace

Pgd::Pgd(PgdConfig c) : Attack(c.norm, c.eps, c.mode), c_(std::move(c)) {
    if (c_.steps < 0 || c_.restarts < 1) throw std::invalid_argument("PGD: steps must be >= 0 and restarts >= 1");
    name_ = c_.name.empty() ? default_name(c_) : c_.name;
}

nlohmann::json Pgd::config() const {
    auto j = base_config(c_.loss == PgdLoss::Margin ? "cw" : "pgd");
    j["alpha"] = c_.alpha;
    j["steps"] = c_.steps;
    j["restarts"] = c_.restarts;
    j["random_start"] = c_.start != RandomStart::None;
    j["start"] = start_name(c_.start);
    j["loss"] = c_.loss == PgdLoss::Margin ? "margin" : "ce";
    if (c_.loss == PgdLoss::Margin) j["kappa"] = c_.kappa;
    j["alpha_rule"] = rule_name(c_.step_rule);
    if (c_.freeze_reached) j["freeze_reached"] = true;
    return j;
}

std::vector<float> Pgd::step_sizes(const AttackContext& ctx) const {
    if (!ctx.per_sample.alpha.empty()) return ctx.per_sample.alpha;
    std::vector<float> alpha(ctx.eps.size(), c_.alpha);
    if (c_.step_rule == StepRule::QuarterEps)
        for (size_t i = 0; i < alpha.size(); ++i) alpha[i] = ctx.eps[i] / 4;
    if (c_.step_rule == StepRule::BatchMaxQuarterEps)
        std::fill(alpha.begin(), alpha.end(), *std::max_element(ctx.eps.begin(), ctx.eps.end()) / 4);
    return alpha;
}

Images Pgd::start(const AttackContext& ctx) const {
    switch (c_.start) {
        case RandomStart::None: return ctx.x;
        case RandomStart::Normal: return normal_start(ctx.x, c_.start_sigma, ctx.rng);
        case RandomStart::Uniform: break;
    }
    return c_.norm == Norm::Linf ? uniform_linf_start(ctx.x, ctx.eps, ctx.rng)
                                 : uniform_radius_l2_start(ctx.x, ctx.eps, ctx.rng);
}

Perturbation Pgd::perturb(AttackContext& ctx) {
    const int64_t n = ctx.x.n;
    const std::vector<float> alpha = step_sizes(ctx);
    TargetChoice target(ctx.y, ctx.per_sample.targets, ctx.rng);

    const Objective J = [&](int64_t i, const float* z, int64_t C, float* dz) {
        if (c_.targeted)
            return c_.loss == PgdLoss::CE ? neg_cross_entropy(z, C, target(i, C), dz)
                                          : targeted_margin(z, C, target(i, C), dz);
        return c_.loss == PgdLoss::CE ? cross_entropy(z, C, ctx.y[i], dz)
                                      : cw_objective(z, C, ctx.y[i], c_.kappa, dz);
    };
    auto reached = [&](const ModelOutput& out, int64_t i) {
        return c_.targeted ? out.pred(i) == target(i, out.classes) : out.pred(i) != ctx.y[i];
    };

    Images best = ctx.x;
    std::vector<uint8_t> best_success(n, 0);
    std::vector<float> best_value(n, -std::numeric_limits<float>::infinity());

    for (int r = 0; r < c_.restarts; ++r) {
        Images x_adv = start(ctx);
        for (int k = 0; k < c_.steps; ++k) {
            const ModelOutput out = ctx.model.value_and_grad(x_adv, J);
            std::vector<float> a = alpha;
            if (c_.freeze_reached)
                for (int64_t i = 0; i < n; ++i)
                    if (reached(out, i)) a[i] = 0.f;
            if (c_.norm == Norm::Linf) {
                sign_step(x_adv, out.grad, a);
                project_linf(x_adv, ctx.x, ctx.eps);
            } else {
                l2_step(x_adv, out.grad, a);
                project_l2(x_adv, ctx.x, ctx.eps);
            }
        }
        if (c_.restarts == 1) {
            best = std::move(x_adv);
            break;
        }
        // Judge this restart's last iterate: success first, then the objective (Rice keeps the max-loss restart).
        const ModelOutput fin = ctx.model.forward(x_adv);
        std::vector<uint8_t> take(n, 0);
        for (int64_t i = 0; i < n; ++i) {
            const float v = J(i, fin.row(i), fin.classes, nullptr);
            const uint8_t s = reached(fin, i);
            if (s > best_success[i] || (s == best_success[i] && v >= best_value[i])) {
                take[i] = 1;
                best_success[i] = s;
                best_value[i] = v;
            }
        }
        copy_rows_where(best, x_adv, take);
    }
    return {std::move(best), target.all(), {}};
}

}  // namespace cw::attacks

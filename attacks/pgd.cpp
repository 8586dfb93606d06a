#include "attacks/pgd.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attacks/losses.h"
#include "attacks/steps.h"
#include "engine/ops.h"

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

Tensor Pgd::start(AttackContext& ctx) const {
    switch (c_.start) {
        case RandomStart::None: return ctx.x.clone();
        case RandomStart::Normal: return normal_start(ctx.x, c_.start_sigma, ctx.rng);
        case RandomStart::Uniform: break;
    }
    return c_.norm == Norm::Linf ? uniform_linf_start(ctx.x, ctx.eps, ctx.rng)
                                 : uniform_radius_l2_start(ctx.x, ctx.eps, ctx.rng);
}

Objective Pgd::objective(AttackContext& ctx, TargetChoice& target) const {
    Objective J;
    J.labels = ctx.labels;
    J.kappa = c_.kappa;
    if (!c_.targeted) {
        J.kind = c_.loss == PgdLoss::CE ? AttackObjective::CrossEntropy : AttackObjective::CwMargin;
        return J;
    }
    J.kind = c_.loss == PgdLoss::CE ? AttackObjective::TargetCrossEntropy : AttackObjective::TargetMargin;
    J.targets = target.all_on(ctx.model.num_classes(ctx.x), ctx.device());
    return J;
}

Perturbation Pgd::perturb(AttackContext& ctx) {
    const Tensor alpha = ctx.per_sample_tensor(step_sizes(ctx));
    const AttackNorm norm = c_.norm == Norm::Linf ? AttackNorm::Linf : AttackNorm::L2;
    TargetChoice target = target_choice(ctx);
    Objective J;
    NoGradGuard bookkeeping;   // the updates below are not part of any graph
    // "reached": misclassified (untargeted) or at the target (targeted), a 0/1 flag per sample on the device.
    auto reached = [&](const ObjectiveValues& v) { return c_.targeted ? v.on_target : v.wrong; };

    Tensor best, best_reached, best_value;
    for (int r = 0; r < c_.restarts; ++r) {
        Tensor x_adv = start(ctx);
        if (r == 0) J = objective(ctx, target);   // random targets are drawn after the first start
        for (int k = 0; k < c_.steps; ++k) {
            const Evaluation e = ctx.model.value_and_grad(x_adv, J);
            // Rice's --eval early stop: a sample at its goal takes a zero step (still projected, so it stays put).
            const Tensor a = c_.freeze_reached ? mul(alpha, rsub(1.f, reached(e.obj))) : alpha;
            attack_step_(norm, x_adv, e.grad, ctx.x, ctx.eps_t, a);
        }
        if (c_.restarts == 1) return {std::move(x_adv), target.all(), {}};
        // Judge this restart's last iterate: success first, then the objective (Rice keeps the max-loss restart;
        // ties: the later restart).
        const ObjectiveValues fin = ctx.model.evaluate(x_adv, J).obj;
        const Tensor s = reached(fin);
        if (r == 0) {
            best = std::move(x_adv);
            best_reached = s;
            best_value = fin.value;
            continue;
        }
        const Tensor same = mul(greater_equal(s, best_reached), greater_equal(best_reached, s));
        const Tensor take = maximum(greater(s, best_reached), mul(same, greater_equal(fin.value, best_value)));
        best = where_rows(take, x_adv, best);
        best_reached = maximum(best_reached, s);
        best_value = where_rows(take, fin.value, best_value);
    }
    return {std::move(best), target.all(), {}};
}

}  // namespace cw::attacks

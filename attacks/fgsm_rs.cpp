#include "attacks/fgsm_rs.h"

#include <nlohmann/json.hpp>

#include "attacks/steps.h"

namespace cw::attacks {

nlohmann::json FgsmRs::config() const {
    auto j = base_config("fgsm_rs");
    j["alpha"] = c_.alpha_factor * c_.eps;
    j["steps"] = 1;
    j["restarts"] = 1;
    j["random_start"] = true;
    return j;
}

Perturbation FgsmRs::perturb(AttackContext& ctx) {
    std::vector<float> alpha = ctx.per_sample.alpha;
    if (alpha.empty())
        for (float e : ctx.eps) alpha.push_back(c_.alpha_factor * e);

    Tensor x_adv = uniform_linf_start(ctx.x, ctx.eps, ctx.rng);   // δ ~ U(−ε, ε), box-clipped
    const Evaluation e = ctx.model.value_and_grad(x_adv, {AttackObjective::CrossEntropy, ctx.labels, {}, 0.f});
    NoGradGuard bookkeeping;
    attack_step_(AttackNorm::Linf, x_adv, e.grad, ctx.x, ctx.eps_t, ctx.per_sample_tensor(alpha));
    return {std::move(x_adv), {}, {}};
}

}  // namespace cw::attacks
